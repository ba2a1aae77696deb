#include "sched/placement_policies.h"
#include "sched/policy_name.h"

#include <algorithm>
#include <stdexcept>

namespace fulcrum::sched {

std::vector<int> eligible_gpus(const JobSpec& job, const std::vector<GpuState>& gpus)
{
    std::vector<int> out;
    for (std::size_t g = 0; g < gpus.size(); ++g)
        if (gpus[g].free_memory_gb >= job.model.memory_gb)
            out.push_back(static_cast<int>(g));
    return out;
}

std::vector<int> least_loaded(std::vector<int> candidates, int count, const std::vector<GpuState>& gpus)
{
    if (static_cast<int>(candidates.size()) < count)
        return {};
    const auto lighter = [&](int x, int y) {
        const double wx = gpus[static_cast<std::size_t>(x)].workload_s,
                     wy = gpus[static_cast<std::size_t>(y)].workload_s;
        return wx < wy || (wx == wy && x < y);
    };
    std::partial_sort(candidates.begin(), candidates.begin() + count, candidates.end(), lighter);
    candidates.resize(static_cast<std::size_t>(count));
    return candidates;
}

std::unique_ptr<PlacementPolicy> make_placement(const std::string& name, std::uint64_t seed)
{
    if (name == "rand")
        return std::make_unique<RandomPlacement>(seed);
    if (name == "ff")
        return std::make_unique<FirstFitPlacement>();
    if (name == "ls")
        return std::make_unique<ListSchedulingPlacement>();
    if (const auto kappa = numbered_name(name, "lwf-"))
        return std::make_unique<LwfPlacement>(*kappa);
    throw std::invalid_argument("unknown placement '" + name + "' (expected " + placement_help() + ")");
}

std::vector<CatalogueEntry> placement_catalogue()
{
    return {
        { "rand", "random GPUs with room", {}, {} },
        { "ff", "first fit: the first GPUs with room", {}, {} },
        { "ls", "list scheduling: the least loaded GPUs", {}, {} },
        { "lwf-K", "least workload first, consolidating a job's workers on at most K servers (the scheduling paper's)",
            {}, {} },
    };
}

std::string placement_help()
{
    return "rand, ff, ls or lwf-K with K >= 1, e.g. lwf-1";
}

} // namespace fulcrum::sched
