#include "sched/placement_policies.h"

namespace fulcrum::sched {

// FF: the first GPUs in index order that have room, which packs jobs onto the first servers
// whatever their load.
std::vector<int> FirstFitPlacement::place(const JobSpec& job, const ClusterSpec&, const std::vector<GpuState>& gpus)
{
    std::vector<int> candidates = eligible_gpus(job, gpus);
    if (static_cast<int>(candidates.size()) < job.gpus)
        return {};
    candidates.resize(static_cast<std::size_t>(job.gpus));
    return candidates;
}

} // namespace fulcrum::sched
