#pragma once

#include "sched/cluster.h"
#include "sched/job.h"
#include "sched/model_templates.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fulcrum::sched {

// A parameter-server training job for the elastic scheduler: its model, the servers and
// workers it asks for, how many samples it must process and when it arrives. Every server
// and every worker occupies one slot of the cluster.
struct PsJobSpec {
    int id = 0;
    std::string name;
    ModelTemplate model;
    int workers = 1;
    int servers = 1;
    std::int64_t iterations = 1; // at the requested size: the job's work is iterations x workers x batch samples
    double arrival_s = 0;
    std::string tenant = "default"; // whose quota it counts against (fulcrum-sim --tenants)

    double samples() const { return static_cast<double>(iterations) * workers * model.batch_size; }
    int slots() const { return workers + servers; }
};

// How fast and how costly the elastic scheduler's moves are. The throughput model is ours,
// of the usual PS shape (as in Optimus): each worker computes its batch, then pushes and
// pulls the model; the servers' links carry w x M / s bytes each way, so a job with too few
// servers is server-bound, and each extra worker adds barrier overhead, so growth has a
// point past which a job gets slower.
struct PsClusterModel {
    int slots = 64; // the cluster's slots (servers x GPUs of the GPU cluster)
    double seconds_per_byte = 8.53e-10; // one slot's link (10 Gbps, Wang et al.'s b)
    double barrier_overhead_s = 0.004; // per worker per iteration
    // Elastic PS mechanism costs (the job pauses between iterations while they happen).
    double add_server_s = 0.5; // plus moving 1/(s+1) of the model
    double remove_server_s = 0.5; // plus moving the leaving server's 1/s of the model
    double add_worker_s = 2.0; // process start; plus pulling the model
    double remove_worker_s = 0.1; // the others re-activate their backups: no data moves
    // Kill-and-restart: checkpoint, reschedule, start every process, restore.
    double restart_s = 30.0;
    double checkpoint_seconds_per_byte = 2e-9; // 0.5 GB/s to shared storage, each way

    double iteration_s(const ModelTemplate& model, int workers, int servers) const;
    double throughput(const ModelTemplate& model, int workers, int servers) const; // samples per second
    double add_server_cost(const ModelTemplate& model, int servers_before) const;
    double remove_server_cost(const ModelTemplate& model, int servers_before) const;
    double add_worker_cost(const ModelTemplate& model) const;
    double restart_cost(const ModelTemplate& model) const;
};

PsClusterModel ps_cluster_model(const ClusterSpec& cluster);

// A PS workload file: CSV with the header `name,model,workers,servers,iterations,arrival_s`.
// Throws InputError naming the file, line and field. Returned sorted by arrival.
std::vector<PsJobSpec> load_ps_workload(
    const std::string& path, const ModelCatalogue& models = ModelCatalogue::table3());

// Why the cluster can never run this job as asked, or nothing when it can.
std::optional<std::string> check_ps_submission(const PsJobSpec& job, const PsClusterModel& cluster);

// A mixed arrival workload for the elastic comparison: Poisson arrivals (mean gap
// `mean_gap_s`), models drawn uniformly from the catalogue, 2 to 8 workers and 1 to 4 servers
// asked for, 500 to 3,000 iterations at that size.
// With `tenants`, the jobs are dealt to them in bursts: runs of 2 to 8 consecutive arrivals
// of one tenant, drawn in proportion to its share (a stream of its own, so the jobs
// themselves are the same as without tenants), as teams submit sweeps: each tenant's load
// comes and goes, which is when borrowing idle quota pays.
struct TenantShareOfArrivals {
    std::string tenant;
    double share = 1;
};
struct PsWorkloadGenerator {
    int jobs = 40;
    double mean_gap_s = 120;
    std::uint64_t seed = 1;
    ModelCatalogue models = ModelCatalogue::table3();
    std::vector<TenantShareOfArrivals> tenants = {};
};
std::vector<PsJobSpec> generate_ps_workload(const PsWorkloadGenerator& generator);
std::string ps_workload_csv(const std::vector<PsJobSpec>& jobs);

} // namespace fulcrum::sched
