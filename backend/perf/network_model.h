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

// The parameter servers' side of a barrier (scenario "servers" section, modelled modes): each
// of the `shards` servers holds 1/shards of the model, so its link carries every pushing
// worker's share of it, pushes x M / shards each way; and the servers spend `aggregate_s`
// per gradient they apply. The usual PS shape (as in Optimus, and fulcrum-sim's
// PsClusterModel): a job with too few servers for its workers is server-bound, and each
// worker adds to the barrier.
struct ServerLinks {
    double bandwidth_gbps = 0; // each server's link; 0: the servers' links are not modelled
    double aggregate_s = 0;
};

// A worker's pull and push in a barrier of `pushes` workers on `shards` servers: the slower of
// its own link and the servers' (2 * (latency + pushes x M / shards / server bandwidth)),
// plus the servers' aggregation of every push.
double barrier_communication_time(const NetworkProfile& link, const ServerLinks& servers, std::int64_t model_bytes,
    std::int64_t iteration, int pushes, int shards);

} // namespace fulcrum::perf
