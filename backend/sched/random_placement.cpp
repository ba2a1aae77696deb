#include "common/random.h"
#include "sched/placement_policies.h"

namespace fulcrum::sched {

RandomPlacement::RandomPlacement(std::uint64_t seed)
    : rng_(make_rng(seed, Stream::Sampling, 0x5c4ed))
{
}

std::vector<int> RandomPlacement::place(const JobSpec& job, const ClusterSpec&, const std::vector<GpuState>& gpus)
{
    std::vector<int> candidates = eligible_gpus(job, gpus);
    const auto need = static_cast<std::size_t>(job.gpus);
    if (candidates.size() < need)
        return {};
    for (std::size_t i = 0; i < need; ++i) // partial Fisher-Yates: the first `need` are a uniform sample
        std::swap(candidates[i], candidates[i + uniform_index(rng_, candidates.size() - i)]);
    candidates.resize(need);
    return candidates;
}

} // namespace fulcrum::sched
