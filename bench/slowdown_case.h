#pragma once

// The competing-load half of bench/straggler_response (issue 42 item 5): a real-mode job of
// two remote fulcrum-worker processes, each pinned to its own core; at iteration N a process
// takes 90 % of worker 0's core. How many iterations and seconds until the time per
// iteration is within 10 % of its new steady value, under the batch-size policy given.

#include "served.h"
#include "ws_client.h"

#include <string>

namespace fulcrum::bench {

struct SlowdownOptions {
    std::string policy_json; // the scenario's "policy" object
    std::int64_t at = 30; // the load starts once this iteration is recorded
    int window = 60; // iterations recorded after it; the last third give the new steady value
    double load = 0.9; // share of the core the competing process takes
    bool series = false; // print every iteration's time
};

struct SlowdownResult {
    double before_s = 0; // median time per iteration over the 10 before the load
    double after_s = 0; // median over the last third of the window: the new steady value
    // Iterations from the first under load until the time per iteration (a running median of
    // 5) is within 10 % of after_s; -1: it never is.
    int settle_iterations = -1;
    double settle_s = -1; // seconds from the load's start until that iteration's rows arrived
    double loaded_share_before = 0; // the loaded worker's share of the total batch
    double loaded_share_after = 0; // median over the last third of the window
    int share_settle_iterations = -1; // until its share (a running median of 5) is within 10 % of loaded_share_after
};

SlowdownResult slowdown_case(testing_support::Served& served, testing_support::WsClient& op,
    const SlowdownOptions& options, const std::string& id);

} // namespace fulcrum::bench
