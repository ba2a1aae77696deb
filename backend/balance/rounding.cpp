#include "balance/rounding.h"

#include <algorithm>
#include <cmath>
#include <numeric>
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
    // Hand out the minimum first, then the rest in proportion.
    const double spare = static_cast<double>(total - minimum * n);
    std::vector<std::int32_t> shares(weights.size(), minimum);
    std::vector<std::pair<double, std::size_t>> remainders;
    std::int64_t given = minimum * n;
    for (std::size_t i = 0; i < weights.size(); ++i) {
        const double exact = weight_sum > 0 ? spare * weights[i] / weight_sum : spare / static_cast<double>(n);
        const auto whole = static_cast<std::int32_t>(std::floor(exact));
        shares[i] += whole;
        given += whole;
        remainders.emplace_back(exact - whole, i);
    }
    // Largest remainders first; ties go to the lower index so the result is deterministic.
    std::stable_sort(remainders.begin(), remainders.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t k = 0; given < total; ++k, ++given)
        ++shares[remainders[k % remainders.size()].second];
    return shares;
}

} // namespace fulcrum::balance
