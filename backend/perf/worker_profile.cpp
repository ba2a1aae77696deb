#include "perf/worker_profile.h"

namespace fulcrum::perf {

std::unique_ptr<PerformanceModel> make_performance_model(
    const WorkerProfile& profile, std::uint64_t resource_seed, std::uint64_t noise_seed)
{
    if (profile.gpu)
        return std::make_unique<GpuPerformanceModel>(*profile.gpu, noise_seed);
    return std::make_unique<CpuPerformanceModel>(profile.cpu,
        ResourceTimeline(profile.resources, profile.colocated, resource_seed, profile.competing), noise_seed);
}

} // namespace fulcrum::perf
