#pragma once

#include "common/eigen_core.h"

#include <vector>

namespace fulcrum::ps {

// A contiguous range [begin, end) of parameter keys (indices into the flat parameter
// vector) owned by one server shard, as in ps-lite. Re-sharding is a move of ranges.
struct KeyRange {
    Eigen::Index begin = 0;
    Eigen::Index end = 0;

    Eigen::Index size() const { return end - begin; }
    bool operator==(const KeyRange&) const = default;
};

// Splits [0, count) into `shards` contiguous ranges whose sizes differ by at most one.
std::vector<KeyRange> split_key_ranges(Eigen::Index count, int shards);

} // namespace fulcrum::ps
