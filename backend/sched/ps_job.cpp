#include "sched/ps_job.h"

#include "common/error.h"
#include "common/random.h"
#include "sched/csv_fields.h"
#include "sched/model_templates.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <sstream>

namespace fulcrum::sched {

double PsClusterModel::iteration_s(const ModelTemplate& model, int workers, int servers) const
{
    // Push and pull: a worker's own link carries 2M; each server's carries 2wM/s.
    const double worker_link = 2 * model.model_bytes * seconds_per_byte;
    const double server_link = 2 * model.model_bytes * workers / servers * seconds_per_byte;
    return model.forward_s + model.backward_s + std::max(worker_link, server_link) + barrier_overhead_s * workers;
}

double PsClusterModel::throughput(const ModelTemplate& model, int workers, int servers) const
{
    return workers * model.batch_size / iteration_s(model, workers, servers);
}

double PsClusterModel::add_server_cost(const ModelTemplate& model, int servers_before) const
{
    return add_server_s + model.model_bytes / (servers_before + 1) * seconds_per_byte;
}

double PsClusterModel::remove_server_cost(const ModelTemplate& model, int servers_before) const
{
    return remove_server_s + model.model_bytes / servers_before * seconds_per_byte;
}

double PsClusterModel::add_worker_cost(const ModelTemplate& model) const
{
    return add_worker_s + model.model_bytes * seconds_per_byte;
}

double PsClusterModel::restart_cost(const ModelTemplate& model) const
{
    return restart_s + 2 * model.model_bytes * checkpoint_seconds_per_byte;
}

PsClusterModel ps_cluster_model(const ClusterSpec& cluster)
{
    PsClusterModel m;
    m.slots = cluster.gpus();
    m.seconds_per_byte = cluster.network.b;
    return m;
}

namespace {

constexpr const char* kHeader = "name,model,workers,servers,iterations,arrival_s";

} // namespace

std::vector<PsJobSpec> load_ps_workload(const std::string& path, const ModelCatalogue& models)
{
    std::vector<PsJobSpec> jobs;
    csv::for_each_row(path, kHeader, [&](const std::vector<std::string>& cells, const std::string& where) {
        PsJobSpec job;
        job.id = static_cast<int>(jobs.size());
        job.name = cells[0].empty() ? "job-" + std::to_string(job.id) : cells[0];
        job.model = csv::model_cell(cells[1], where, models);
        job.workers = csv::positive<int>(cells[2], where, "workers");
        job.servers = csv::positive<int>(cells[3], where, "servers");
        job.iterations = csv::positive<std::int64_t>(cells[4], where, "iterations");
        job.arrival_s = csv::arrival_cell(cells[5], where);
        jobs.push_back(std::move(job));
    });
    std::stable_sort(
        jobs.begin(), jobs.end(), [](const PsJobSpec& x, const PsJobSpec& y) { return x.arrival_s < y.arrival_s; });
    return jobs;
}

std::optional<std::string> check_ps_submission(const PsJobSpec& job, const PsClusterModel& cluster)
{
    if (job.workers < 1 || job.servers < 1 || job.iterations < 1)
        return "has no work (workers, servers and iterations must be at least 1)";
    if (job.slots() > cluster.slots)
        return "asks for " + std::to_string(job.workers) + " workers and " + std::to_string(job.servers) + " servers ("
            + std::to_string(job.slots()) + " slots); the cluster has " + std::to_string(cluster.slots);
    return std::nullopt;
}

std::vector<PsJobSpec> generate_ps_workload(const PsWorkloadGenerator& g)
{
    Rng rng = make_rng(g.seed, Stream::Data, 4242);
    const auto& templates = g.models.models();
    std::vector<PsJobSpec> jobs;
    double t = 0;
    for (int i = 0; i < g.jobs; ++i) {
        PsJobSpec job;
        job.id = i;
        job.name = "ps-job-" + std::to_string(i);
        job.model = templates[uniform_index(rng, templates.size())];
        job.workers = 2 + static_cast<int>(uniform_index(rng, 7));
        job.servers = 1 + static_cast<int>(uniform_index(rng, 4));
        job.iterations = 500 + static_cast<std::int64_t>(uniform_index(rng, 2501));
        job.arrival_s = std::round(t * 1000) / 1000;
        jobs.push_back(std::move(job));
        t += -g.mean_gap_s * std::log(1 - uniform01(rng)); // exponential gaps: Poisson arrivals
    }
    if (!g.tenants.empty()) {
        Rng deal = make_rng(g.seed, Stream::Data, 4343);
        for (std::size_t i = 0; i < jobs.size();) {
            double total = 0;
            for (const TenantShareOfArrivals& share : g.tenants)
                total += share.share;
            double pick = uniform01(deal) * total;
            std::size_t k = 0;
            while (k + 1 < g.tenants.size() && pick >= g.tenants[k].share)
                pick -= g.tenants[k++].share;
            const std::string& tenant = g.tenants[k].tenant;
            const std::size_t burst = 2 + uniform_index(deal, 7);
            for (std::size_t n = 0; n < burst && i < jobs.size(); ++n)
                jobs[i++].tenant = tenant;
        }
    }
    return jobs;
}

std::string ps_workload_csv(const std::vector<PsJobSpec>& jobs)
{
    std::ostringstream out;
    out << kHeader << "\n";
    for (const PsJobSpec& j : jobs)
        out << j.name << "," << j.model.name << "," << j.workers << "," << j.servers << "," << j.iterations << ","
            << j.arrival_s << "\n";
    return out.str();
}

} // namespace fulcrum::sched
