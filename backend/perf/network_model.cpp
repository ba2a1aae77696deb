#include "perf/network_model.h"

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

} // namespace fulcrum::perf
