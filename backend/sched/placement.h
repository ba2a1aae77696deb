#pragma once

#include "common/named_values.h"
#include "sched/cluster.h"
#include "sched/job.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fulcrum::sched {

// What a placement sees of one GPU: its server, its workload (compute seconds still to run
// for the jobs placed on it: the paper's GPU workload) and its free memory. Several jobs
// may share a GPU; it runs their tasks one at a time.
struct GpuState {
    int server = 0;
    double workload_s = 0;
    double free_memory_gb = 0;
};

// A placement algorithm (Wang et al. Sec. IV): picks job.gpus distinct GPUs for a job among
// those with memory for it, or none when it cannot be placed now.
class PlacementPolicy {
public:
    virtual ~PlacementPolicy() = default;
    virtual std::string name() const = 0;
    virtual std::vector<int> place(const JobSpec& job, const ClusterSpec& cluster, const std::vector<GpuState>& gpus)
        = 0;
};

// "rand", "ff", "ls" or "lwf-K" (K >= 1). Throws std::invalid_argument for other names.
std::unique_ptr<PlacementPolicy> make_placement(const std::string& name, std::uint64_t seed);
// Every placement policy with what it does (list-capabilities); lwf-K is one entry.
std::vector<CatalogueEntry> placement_catalogue();

// The GPUs with room for the job, in index order (shared by the policies).
std::vector<int> eligible_gpus(const JobSpec& job, const std::vector<GpuState>& gpus);
// The `count` least-loaded of the given GPUs (ties to the lower index), or none if too few.
std::vector<int> least_loaded(std::vector<int> candidates, int count, const std::vector<GpuState>& gpus);

} // namespace fulcrum::sched
