#pragma once

#include "sync/barrier_window.h"

#include <deque>
#include <string>
#include <vector>

namespace fulcrum::sync {

// A job's synchronization model: BSP (with LB-BSP's batch sizing, a policy matter), ASP,
// SSP with staleness bound s, BSP with k backup workers (the first n - k gradients of
// each iteration are used), or ElasticBSP with a barrier-window algorithm over R
// predicted iterations.
struct SyncSpec {
    std::string type = "bsp";         // bsp, asp, ssp, backup, elastic-bsp
    int staleness = 5;                // ssp: a worker may run at most s iterations ahead of the slowest
    int backups = 1;                  // backup: k
    int range = 15;                   // elastic-bsp: R
    std::string algorithm = "exact";  // elastic-bsp: gridscan, fullgridscan, zipline, exact
    int history = 5;                  // elastic-bsp: recent intervals averaged to predict end times
};

const std::vector<std::string>& sync_types();
// Throws std::invalid_argument naming the field for a bad value.
void validate(const SyncSpec& spec, int workers);
// "ssp(s=5)", "backup(k=2)", "elastic-bsp(R=15, exact)", ...
std::string describe(const SyncSpec& spec);

// ElasticBSP's prediction: worker i, free from `start[i]` on, ends its next R iterations
// at start + r * (mean of its recent iteration intervals).
EndTimes predict_end_times(const std::vector<double>& start, const std::vector<std::deque<double>>& intervals, int range);

} // namespace fulcrum::sync
