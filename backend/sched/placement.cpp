#include "common/registry.h"
#include "sched/placement_policies.h"

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

namespace {

struct PlacementEntry {
    KindInfo kind;
    std::unique_ptr<PlacementPolicy> (*make)(int number, std::uint64_t seed);
};

constexpr PlacementEntry kPlacements[] = {
    { { "rand", "random GPUs with room" },
        [](int, std::uint64_t seed) -> std::unique_ptr<PlacementPolicy> {
            return std::make_unique<RandomPlacement>(seed);
        } },
    { { "ff", "first fit: the first GPUs with room" },
        [](int, std::uint64_t) -> std::unique_ptr<PlacementPolicy> { return std::make_unique<FirstFitPlacement>(); } },
    { { "ls", "list scheduling: the least loaded GPUs" },
        [](int, std::uint64_t) -> std::unique_ptr<PlacementPolicy> {
            return std::make_unique<ListSchedulingPlacement>();
        } },
    { { "lwf-K", "least workload first, consolidating a job's workers on at most K servers (the scheduling paper's)",
          true },
        [](int kappa, std::uint64_t) -> std::unique_ptr<PlacementPolicy> {
            return std::make_unique<LwfPlacement>(kappa);
        } },
};

constexpr Registry<PlacementEntry> kRegistry { "placement", kPlacements };

} // namespace

std::unique_ptr<PlacementPolicy> make_placement(const std::string& name, std::uint64_t seed)
{
    const auto found = kRegistry.at(name);
    return found.entry.make(found.number, seed);
}

std::vector<CatalogueEntry> placement_catalogue()
{
    return kRegistry.catalogue();
}

} // namespace fulcrum::sched
