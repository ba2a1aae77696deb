#include "balance/fixed_policy.h"

#include <numeric>
#include <stdexcept>

namespace fulcrum::balance {

FixedPolicy::FixedPolicy(std::vector<std::int32_t> batch_sizes)
    : batch_sizes_(std::move(batch_sizes))
{
}

Allocation FixedPolicy::initial(int workers, std::int32_t total_batch)
{
    if (static_cast<std::size_t>(workers) != batch_sizes_.size())
        throw std::invalid_argument("fixed policy has " + std::to_string(batch_sizes_.size()) + " batch sizes for "
            + std::to_string(workers) + " workers");
    if (std::accumulate(batch_sizes_.begin(), batch_sizes_.end(), std::int64_t { 0 }) != total_batch)
        throw std::invalid_argument("fixed batch sizes must sum to the total batch " + std::to_string(total_batch));
    Allocation allocation;
    allocation.batch_sizes = batch_sizes_;
    allocation.predicted_speeds.assign(batch_sizes_.size(), std::nullopt);
    allocation.decision = "fixed";
    return allocation;
}

Allocation FixedPolicy::next(const std::vector<WorkerObservation>& observations, std::int32_t total_batch)
{
    return initial(static_cast<int>(observations.size()), total_batch);
}

} // namespace fulcrum::balance
