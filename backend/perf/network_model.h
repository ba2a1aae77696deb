#pragma once

#include <cstdint>
#include <vector>

namespace fulcrum::perf {

// From iteration `at_iteration` on, the link runs at this bandwidth (the LB-BSP paper cuts
// one worker from 10 to 2.5 Gbps at iteration 150).
struct BandwidthChange {
    std::int64_t at_iteration = 0;
    double bandwidth_gbps = 10.0;
};

// A worker's link to the parameter servers: each iteration pulls the model and pushes a
// gradient of the same size.
struct NetworkProfile {
    double bandwidth_gbps = 10.0;
    double latency_s = 0.0005;
    std::vector<BandwidthChange> changes; // sorted by at_iteration

    double bandwidth_at(std::int64_t iteration) const;
};

// Pull plus push at the bandwidth of that iteration: 2 * (latency + bytes / bandwidth).
double communication_time(const NetworkProfile& link, std::int64_t model_bytes, std::int64_t iteration = 0);

} // namespace fulcrum::perf
