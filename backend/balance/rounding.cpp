#include "balance/rounding.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <utility>

namespace fulcrum::balance {

std::vector<std::int32_t> proportional_split(
    const std::vector<double>& weights, std::int32_t total, std::int32_t minimum)
{
    const auto n = static_cast<std::int64_t>(weights.size());
    if (n == 0)
        throw std::invalid_argument("no workers to split the batch over");
    if (static_cast<std::int64_t>(total) < minimum * n)
        throw std::invalid_argument("total batch " + std::to_string(total) + " cannot give " + std::to_string(n)
            + " workers at least " + std::to_string(minimum) + " sample(s) each");
    double weight_sum = 0;
    for (double w : weights) {
        if (!(w >= 0) || !std::isfinite(w))
            throw std::invalid_argument("worker weights must be finite and non-negative");
        weight_sum += w;
    }
    // Floor the exact shares, lift any below the minimum, then settle the difference: add to
    // the largest remainders, or take from the most over-served. Exact proportions survive
    // whenever no one is at the minimum (10/20/30/40 stays 10/20/30/40).
    std::vector<double> exact(weights.size());
    std::vector<std::int32_t> shares(weights.size());
    std::int64_t given = 0;
    const double per_weight = weight_sum > 0 ? static_cast<double>(total) / weight_sum : 0;
    for (std::size_t i = 0; i < weights.size(); ++i) {
        exact[i] = weight_sum > 0 ? weights[i] * per_weight : static_cast<double>(total) / static_cast<double>(n);
        shares[i] = std::max(minimum, static_cast<std::int32_t>(std::floor(exact[i])));
        given += shares[i];
    }
    if (given < total) {
        // Largest remainders first; ties go to the lower index so the result is deterministic.
        // This runs at every barrier for every worker, so no sort and few branches: bucket
        // the remainders (monotonically), give one sample to every bucket above the one where
        // the count runs out, and select exactly only inside that bucket.
        auto missing = static_cast<std::size_t>(total - given);
        const std::size_t count = weights.size();
        for (; missing >= count; missing -= count) // cannot happen (sum of floors > total - n); kept safe
            for (auto& share : shares)
                ++share;
        constexpr int kBuckets = 256;
        std::vector<std::uint8_t> bucket(count);
        std::array<std::size_t, kBuckets> in_bucket {};
        for (std::size_t i = 0; i < count; ++i) {
            const double remainder = exact[i] - shares[i]; // below 0 for shares lifted to the minimum
            bucket[i] = static_cast<std::uint8_t>(std::clamp(static_cast<int>(remainder * kBuckets), 0, kBuckets - 1));
            ++in_bucket[bucket[i]];
        }
        std::size_t above = 0;
        int edge = kBuckets - 1;
        while (above + in_bucket[static_cast<std::size_t>(edge)] < missing)
            above += in_bucket[static_cast<std::size_t>(edge--)];
        std::vector<std::pair<double, std::size_t>> at_edge; // (negated remainder, index): ascending = first served
        for (std::size_t i = 0; i < count; ++i) {
            if (bucket[i] > edge)
                ++shares[i];
            else if (bucket[i] == edge)
                at_edge.emplace_back(shares[i] - exact[i], i);
        }
        const std::size_t rest = missing - above;
        if (rest < at_edge.size())
            std::nth_element(at_edge.begin(), at_edge.begin() + static_cast<std::ptrdiff_t>(rest), at_edge.end());
        for (std::size_t k = 0; k < rest; ++k)
            ++shares[at_edge[k].second];
    } else if (given > total) {
        std::vector<std::size_t> order(weights.size());
        std::iota(order.begin(), order.end(), std::size_t { 0 });
        std::stable_sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return shares[a] - exact[a] > shares[b] - exact[b]; });
        for (std::size_t k = 0; given > total; ++k) {
            std::size_t& i = order[k % order.size()];
            if (shares[i] > minimum) {
                --shares[i];
                --given;
            }
        }
    }
    return shares;
}

} // namespace fulcrum::balance
