#pragma once

// Header-only (its includers link Eigen): the one setting that keeps Eigen's matrix
// products the same on every x86-64 CPU.

#include "common/eigen_core.h"

#include <mutex>

namespace fulcrum {

// Eigen sizes a matrix product's blocks from the cache sizes it reads off the CPU at run
// time, and the depth of a block decides how a product's terms are grouped when summed: a
// 32 KiB L1 data cache (AMD EPYC) and a 48 KiB one (recent Xeons) round differently, so
// the same seed trained to a different model on each (the README demo: test accuracy
// 0.8835 against 0.8815). Every product in the process is blocked as for one fixed cache
// instead, so a seed gives the same rows on any machine (scripts/behaviour-digest.sh).
// Called before a network's first product; the first call wins, later ones are free.
inline void pin_product_blocking()
{
    static std::once_flag once;
    std::call_once(once, [] {
        constexpr std::ptrdiff_t kKiB = 1024;
        constexpr std::ptrdiff_t kL1 = 48 * kKiB, kL2 = 2048 * kKiB, kL3 = 32768 * kKiB;
        Eigen::setCpuCacheSizes(kL1, kL2, kL3);
    });
}

} // namespace fulcrum
