#pragma once

#include "daemon/cluster_book.h"
#include "daemon/daemon_options.h"
#include "daemon/elastic_scheduling.h"
#include "daemon/resource_book.h"
#include "daemon/worker_pool.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fulcrum::perf {
struct WorkerProfile; // scenario::WorkerSpec
}

namespace fulcrum::scenario {
struct JobFootprint;
struct Scenario;
}

namespace fulcrum::daemon {

class ElasticJob;

// Whether fulcrumd places this worker of `s` on a GPU: not a remote worker or an external
// job's rank (they run where they were started), and not a CPU worker of a paced or real
// job where the cluster keeps them off the GPUs.
bool takes_gpu(const scenario::Scenario& s, const perf::WorkerProfile& w, const sched::ClusterSpec& cluster);
// One GPU per worker that takes one, each a whole GPU unless the scenario asks for less.
GpuDemand demand_of(const scenario::Scenario& s, const sched::ClusterSpec& cluster);
// The memory and threads a job of `s` holds while it runs, estimated on this machine.
scenario::JobFootprint footprint_of(const scenario::Scenario& s);

// The cluster core's placement of queued jobs (JobQueue::start_queued): one pass over the
// queue in submission order (as fulcrum-sim's queue), each job placed by the placement
// policy if it fits now, else told why it waits. Under --queue fifo no job overtakes one
// that waits for GPUs; under backfill a smaller one goes ahead. With tenants' quotas
// (sched/tenant_quota.h) within-quota jobs come first, borrowers after by borrowed GPUs
// per weight, and once a within-quota job waits no borrower is placed. Under eps a job
// may start smaller (ElasticScheduling::admit); a job fed by the worker pool counts pooled
// processes (assigned when the job starts: ElasticScheduling::started; held for it meanwhile,
// WorkerPool::hold, so the jobs after it do not count them). It decides and books GPUs,
// memory and threads; the core then starts the jobs placed and stops the rigid
// borrowers to requeue. It sees jobs as
// ElasticJobs, so the ClusterCore tests drive it with jobs of their own. Not thread-safe:
// the core calls it on its thread.
class PlacementPass {
public:
    PlacementPass(const DaemonOptions& options, ClusterBook& book, ElasticScheduling& elastic, WorkerPool& pool,
        ResourceBook& resources);

    struct Placed {
        ElasticJob* job = nullptr;
        std::vector<std::int32_t> placement; // each worker's GPU, -1 for none
        std::string message; // the job-placed event's
        std::optional<int> size; // the workers it starts with (eps, or a pooled job)
        std::optional<int> server_gpus; // fewer than its placement.server_gpus: it starts with fewer servers
    };
    struct Waits {
        ElasticJob* job = nullptr;
        std::string why;
    };
    // A rigid borrower a newcomer's reclaim stops at a checkpoint (rigid_borrowers requeue).
    struct Requeue {
        JobId job = 0;
        std::string reason;
    };
    struct Outcome {
        std::vector<Placed> placed; // in the order placed, their GPUs, memory and threads booked
        std::vector<Waits> waiting; // every queued job not placed, with its reason
        std::vector<Requeue> requeue;
    };
    Outcome run(const std::vector<ElasticJob*>& queued, const std::vector<ElasticJob*>& running,
        const RemainingWork& remaining);

    // The GPUs a queued job asks for: its local workers' and its servers'.
    int gpus_asked(const ElasticJob& job) const;
    // A queued job waits that idle GPUs could serve (EPS grows no job meanwhile): with quotas,
    // one whose tenant is below its quota or borrows.
    bool waits_for_idle_gpus(const std::vector<ElasticJob*>& queued, const std::vector<ElasticJob*>& running) const;
    // What a queued job asks for and how many jobs are `ahead`, for its job-queued event.
    std::string asks(const ElasticJob& job, std::size_t ahead) const;

private:
    struct QuotaStep {
        std::string wait; // why it waits for its tenant's quota or another's job; empty: go on
        bool within_quota = false; // its request is within its tenant's quota
    };
    QuotaStep quota_step(const ElasticJob& job, const GpuDemand& request, int local_gpus, const ElasticJob* owner_waits,
        const std::vector<ElasticJob*>& running, Outcome& outcome);
    std::string placed_message(const ElasticJob& job, const GpuDemand& request, const GpuDemand& demand,
        const std::vector<int>& gpus, std::optional<int> size) const;

    const DaemonOptions& options_;
    ClusterBook& book_;
    ElasticScheduling& elastic_;
    WorkerPool& pool_; // a pooled job placed holds its processes for the jobs after it (hold)
    ResourceBook& resources_;
};

} // namespace fulcrum::daemon
