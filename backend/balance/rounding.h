#pragma once

#include <cstdint>
#include <vector>

namespace fulcrum::balance {

// Splits `total` into integers proportional to `weights` (largest-remainder method), every
// share at least `minimum`, the sum exactly `total` (LB-BSP Alg. 1's rounding step).
// Throws std::invalid_argument if total < minimum * weights.size() or a weight is negative.
std::vector<std::int32_t> proportional_split(
    const std::vector<double>& weights, std::int32_t total, std::int32_t minimum = 1);

} // namespace fulcrum::balance
