#include "sched/placement_policies.h"

namespace fulcrum::sched {

// LS (Graham's list scheduling): each worker goes to the GPU that will be free first, i.e.
// the least workload, wherever it is.
std::vector<int> ListSchedulingPlacement::place(
    const JobSpec& job, const ClusterSpec&, const std::vector<GpuState>& gpus)
{
    return least_loaded(eligible_gpus(job, gpus), job.gpus, gpus);
}

} // namespace fulcrum::sched
