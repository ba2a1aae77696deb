#pragma once

#include <cstdint>

namespace fulcrum::perf {

// A worker's link to the parameter servers: each iteration pulls the model and pushes a
// gradient of the same size.
struct NetworkProfile {
    double bandwidth_gbps = 10.0;
    double latency_s = 0.0005;
};

// Pull plus push: 2 * (latency + bytes / bandwidth).
double communication_time(const NetworkProfile& link, std::int64_t model_bytes);

} // namespace fulcrum::perf
