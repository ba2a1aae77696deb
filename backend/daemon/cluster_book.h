#pragma once

#include "protocol/messages.h"
#include "sched/cluster.h"
#include "sched/placement.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fulcrum::daemon {

// What a job asks of the cluster: one GPU for each local worker (remote workers run where
// they were started), each with this much free memory.
struct GpuDemand {
    int workers = 0;
    double memory_gb = 0;
    int servers = 0; // GPUs its parameter servers hold besides (scenario placement.server_gpus)
    int gpus() const { return workers + servers; }
};

// Each placed job's estimated compute still to run, in seconds of its run clock.
using RemainingWork = std::function<double(JobId)>;

// fulcrumd's cluster as the scheduling module sees it (sched::ClusterSpec: servers of
// identical GPUs, each GPU one worker slot) and where each live job's workers run. A job is
// placed by the configured placement policy (Wang et al. Sec. IV: rand, ff, ls, lwf-κ)
// when it fits, and its GPUs are released when it ends. Jobs may share a GPU when they ask
// for less than its memory. Not thread-safe: the daemon holds its lock.
class ClusterBook {
public:
    // Throws std::invalid_argument for an unknown placement name. `elastic` names how
    // running jobs' sizes change (static, eps, kill-restart), for the cluster's state.
    ClusterBook(sched::ClusterSpec cluster, const std::string& placement, std::uint64_t seed = 1,
        std::string elastic = "static");

    const sched::ClusterSpec& spec() const { return cluster_; }
    const std::string& placement() const { return placement_name_; }
    // An operator's set-cluster-policy: the jobs placed from now on. Throws
    // std::invalid_argument for an unknown name, changing nothing.
    void set_placement(const std::string& placement);
    void set_elastic_name(std::string elastic) { elastic_name_ = std::move(elastic); }

    // Why the demand can never be met on this cluster, even empty (more GPUs than it has,
    // more memory than a GPU has), or empty when it can.
    std::string impossible(const GpuDemand& demand) const;
    // The GPUs for the job's workers (one each, distinct), or empty if they do not fit now.
    std::vector<int> place(JobId job, const GpuDemand& demand, const RemainingWork& remaining);
    void release(JobId job);
    // One more GPU for a placed job's new worker (an elastic resize): one with room for the
    // job's per-worker memory that the job does not use yet, on a server it already uses when
    // one has room (its all-reduce stays inside the server), else the least loaded. Nothing
    // when none has room.
    std::optional<int> add_gpu(JobId job, const RemainingWork& remaining);
    // A worker (or a parameter server) of the job left `gpu`.
    void remove_gpu(JobId job, int gpu);
    // The GPUs the job holds, in the order it took them (none when it is not placed).
    std::vector<int> gpus_of(JobId job) const;
    std::vector<JobId> placed_jobs() const; // every job holding GPUs, placed in this pass too
    // How many GPUs have room for one of the demand's workers now.
    int room_for(const GpuDemand& demand) const;
    protocol::ClusterState state(const std::vector<JobId>& queue, const RemainingWork& remaining) const;
    // "GPUs 4-7 (server 1)", "GPUs 0, 5 (servers 0, 1)": for events and messages.
    std::string describe(const std::vector<int>& gpus) const;

private:
    std::vector<sched::GpuState> gpu_states(const RemainingWork& remaining) const;

    struct Held {
        std::vector<int> gpus;
        double memory_gb = 0;
    };
    sched::ClusterSpec cluster_;
    std::string placement_name_;
    std::string elastic_name_;
    std::uint64_t seed_ = 1;
    std::unique_ptr<sched::PlacementPolicy> policy_;
    std::map<JobId, Held> held_;
};

} // namespace fulcrum::daemon
