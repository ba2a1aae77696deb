#include "balance/uniform_policy.h"

#include "balance/rounding.h"

namespace fulcrum::balance {

Allocation UniformPolicy::initial(int workers, std::int32_t total_batch)
{
    Allocation allocation;
    allocation.batch_sizes
        = proportional_split(std::vector<double>(static_cast<std::size_t>(workers), 1.0), total_batch);
    allocation.predicted_speeds.assign(static_cast<std::size_t>(workers), std::nullopt);
    allocation.decision = "uniform";
    return allocation;
}

Allocation UniformPolicy::next(const std::vector<WorkerObservation>& observations, std::int32_t total_batch)
{
    return initial(static_cast<int>(observations.size()), total_batch);
}

} // namespace fulcrum::balance
