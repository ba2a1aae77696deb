#include "perf/network_model.h"

namespace fulcrum::perf {

double communication_time(const NetworkProfile& link, std::int64_t model_bytes)
{
    const double bits = 8.0 * static_cast<double>(model_bytes);
    return 2.0 * (link.latency_s + bits / (link.bandwidth_gbps * 1e9));
}

} // namespace fulcrum::perf
