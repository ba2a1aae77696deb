#include "sched/ps_live_export.h"

#include "common/error.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace fulcrum::sched {

namespace {

void write_file(const std::filesystem::path& path, const std::string& text)
{
    std::ofstream out(path);
    out << text;
    if (!out.flush())
        throw InputError(path.string(), "", "cannot write the file");
}

} // namespace

LiveJob live_job(const PsJobSpec& job, const PsClusterModel& model, int max_workers)
{
    const ModelTemplate& m = job.model;
    const int workers = std::max(1, job.workers);
    const int servers = std::max(1, job.servers);
    // PsClusterModel's iteration, term by term: each worker computes its mini-batch at the
    // template's pace, pulls and pushes the template's model over its own link and the
    // servers' (each server's carrying workers x M / servers), and the servers spend the
    // barrier overhead on every push. Its batch per worker is fixed, as the simulator's: a
    // grown job takes more samples per barrier and ends on the simulator's samples. The
    // trained model (softmax over 32 features) has a parameter for each server it may get.
    const std::int64_t total_batch = static_cast<std::int64_t>(workers) * m.batch_size;
    // As many worker slots as it may grow to, and no more than its first total batch has
    // samples (a scenario gives each slot at least one).
    const int slots = static_cast<int>(std::clamp<std::int64_t>(max_workers, workers, total_batch));
    const double compute_s = m.forward_s + m.backward_s;
    const double link_gbps = 8.0 / (model.seconds_per_byte * 1e9);
    std::ostringstream s;
    s.precision(17);
    s << R"({"name": ")" << job.name << R"(", "mode": "virtual", "seed": )" << job.id + 1
      << R"(, "data": {"source": "synthetic", "train_size": )"
      << std::max<std::int64_t>(2048, 4 * static_cast<std::int64_t>(m.batch_size) * slots)
      << R"(, "test_size": 200, "dim": 32, "classes": 2}, "model": {"type": "softmax"}, "policy": {"type": "uniform"},)"
      << R"( "placement": {"server_gpus": )" << servers << "},"
      << R"( "servers": {"shards": )" << servers << R"(, "bandwidth_gbps": )" << link_gbps << R"(, "aggregate_s": )"
      << model.barrier_overhead_s << "},"
      << R"( "training": {"total_batch": )" << total_batch << R"(, "iterations": )" << job.iterations
      << R"(, "eval_interval": )" << job.iterations << R"(, "comm_model_mb": )" << m.model_bytes / 1e6 << "}, "
      << R"("workers": [{"speed": )" << static_cast<double>(m.batch_size) / compute_s << R"(, "count": )" << slots
      << R"(, "noise": {"sigma": 0}, "bandwidth_gbps": )" << link_gbps << R"(, "latency_s": 0}], )"
      << R"("elastic": {"initial_workers": )" << workers << R"(, "min_workers": 1, "max_workers": )" << slots
      << R"(, "batch_per_worker": )" << m.batch_size << R"(, "pause_s": {"add-worker": )" << model.add_worker_cost(m)
      << R"(, "remove-worker": )" << model.remove_worker_s << R"(, "add-server": )" << model.add_server_cost(m, servers)
      << R"(, "remove-server": )" << model.remove_server_cost(m, servers) << R"(, "restart": )" << model.restart_cost(m)
      << "}}}\n";
    return { "job-" + std::to_string(job.id) + ".json", s.str(), job.arrival_s };
}

void export_live_workload(const std::vector<PsJobSpec>& jobs, const ClusterSpec& cluster, const PsClusterModel& model,
    const std::filesystem::path& folder)
{
    std::error_code error;
    std::filesystem::create_directories(folder / "jobs", error);
    if (error)
        throw InputError((folder / "jobs").string(), "", "cannot create the folder: " + error.message());
    std::ostringstream workload;
    workload.precision(17);
    workload << "scenario,arrival_s\n";
    for (const PsJobSpec& job : jobs) {
        const LiveJob live = live_job(job, model, cluster.gpus() - std::max(1, job.servers));
        write_file(folder / "jobs" / live.file, live.scenario_json);
        workload << "jobs/" << live.file << "," << live.arrival_s << "\n";
    }
    write_file(folder / "workload.csv", workload.str());
    std::ostringstream c;
    c.precision(17);
    c << R"({"servers": )" << cluster.servers << R"(, "gpus_per_server": )" << cluster.gpus_per_server
      << R"(, "gpu_memory_gb": )" << cluster.gpu_memory_gb << R"(, "network": {"a": )" << cluster.network.a
      << R"(, "b": 1e-18, "eta": 0}})"
      << "\n";
    write_file(folder / "cluster.json", c.str());
}

} // namespace fulcrum::sched
