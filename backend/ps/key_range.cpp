#include "ps/key_range.h"

#include <stdexcept>

namespace fulcrum::ps {

std::vector<KeyRange> split_key_ranges(Eigen::Index count, int shards)
{
    if (shards < 1 || shards > count)
        throw std::invalid_argument("server shards must be between 1 and the parameter count");
    std::vector<KeyRange> ranges;
    const Eigen::Index base = count / shards, extra = count % shards;
    Eigen::Index begin = 0;
    for (int s = 0; s < shards; ++s) {
        const Eigen::Index size = base + (s < extra ? 1 : 0);
        ranges.push_back({ begin, begin + size });
        begin += size;
    }
    return ranges;
}

} // namespace fulcrum::ps
