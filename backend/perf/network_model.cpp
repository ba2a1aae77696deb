#include "perf/network_model.h"

#include <algorithm>

namespace fulcrum::perf {

double NetworkProfile::bandwidth_at(std::int64_t iteration) const
{
    double bandwidth = bandwidth_gbps;
    for (const auto& change : changes) {
        if (change.at_iteration > iteration)
            break;
        bandwidth = change.bandwidth_gbps;
    }
    return bandwidth;
}

double communication_time(const NetworkProfile& link, std::int64_t model_bytes, std::int64_t iteration)
{
    const double bits = 8.0 * static_cast<double>(model_bytes);
    return 2.0 * (link.latency_s + bits / (link.bandwidth_at(iteration) * 1e9));
}

double barrier_communication_time(const NetworkProfile& link, const ServerLinks& servers, std::int64_t model_bytes,
    std::int64_t iteration, int pushes, int shards)
{
    double seconds = communication_time(link, model_bytes, iteration);
    if (servers.bandwidth_gbps > 0 && shards > 0) {
        const double bits = 8.0 * static_cast<double>(model_bytes) * pushes / shards;
        seconds = std::max(seconds, 2.0 * (link.latency_s + bits / (servers.bandwidth_gbps * 1e9)));
    }
    return seconds + servers.aggregate_s * pushes;
}

} // namespace fulcrum::perf
