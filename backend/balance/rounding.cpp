#include "balance/rounding.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>
#include <stdexcept>

namespace fulcrum::balance {

std::vector<std::int32_t> proportional_split(const std::vector<double>& weights, std::int32_t total,
                                             std::int32_t minimum)
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
    for (std::size_t i = 0; i < weights.size(); ++i) {
        exact[i] = weight_sum > 0 ? static_cast<double>(total) * weights[i] / weight_sum
                                  : static_cast<double>(total) / static_cast<double>(n);
        shares[i] = std::max(minimum, static_cast<std::int32_t>(std::floor(exact[i])));
        given += shares[i];
    }
    std::vector<std::size_t> order(weights.size());
    std::iota(order.begin(), order.end(), std::size_t { 0 });
    if (given < total) {
        // Largest remainders first; ties go to the lower index so the result is deterministic.
        // Only the top (total - given) matter, so a selection (O(n)) replaces a sort: this
        // runs at every barrier for every worker.
        const auto by_remainder = [&](std::size_t a, std::size_t b) {
            const double ra = exact[a] - shares[a], rb = exact[b] - shares[b];
            return ra > rb || (ra == rb && a < b);
        };
        const auto missing = static_cast<std::size_t>(total - given);
        if (missing < order.size())
            std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(missing), order.end(), by_remainder);
        for (std::size_t k = 0; given < total; ++k, ++given)
            ++shares[order[k % order.size()]];
    } else if (given > total) {
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            return shares[a] - exact[a] > shares[b] - exact[b];
        });
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
