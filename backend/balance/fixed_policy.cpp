#include "balance/fixed_policy.h"

#include "balance/rounding.h"

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
    // With every worker present this is the given split; with some excluded, the same ratios.
    std::vector<double> weights;
    weights.reserve(observations.size());
    for (const auto& o : observations)
        weights.push_back(static_cast<std::size_t>(o.worker) < batch_sizes_.size()
                ? batch_sizes_[static_cast<std::size_t>(o.worker)]
                : 1.0);
    Allocation allocation;
    if (observations.size() == batch_sizes_.size())
        allocation.batch_sizes = batch_sizes_;
    else
        allocation.batch_sizes = proportional_split(weights, total_batch);
    allocation.decision = "fixed";
    return allocation;
}

} // namespace fulcrum::balance
