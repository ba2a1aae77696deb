#pragma once

// ElasticBSP's barrier choice (Zhao et al., "Elastic Bulk Synchronous Parallel Model",
// Sec. IV): given each worker's next R predicted iteration end times, pick one end time per
// worker so that the window from the earliest to the latest pick is as short as possible.
// Worker i then runs r_i iterations before the barrier, and the window is the time the
// workers spend waiting for each other. Four algorithms, one answer type.

#include "common/named_values.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fulcrum::sync {

// ends[i] holds worker i's predicted end times, strictly increasing.
using EndTimes = std::vector<std::vector<double>>;

struct BarrierWindow {
    std::vector<int> iterations; // r_i: how many iterations worker i runs (1..R)
    double earliest = 0; // the first worker to arrive
    double latest = 0; // the barrier: the last worker to arrive
    double span() const { return latest - earliest; }
};

// GridScan: the candidate barriers are the slowest worker's R end times; every other worker
// takes its last end time before the candidate (or its first after it when it has none).
// O(nR log R), cheap but not always optimal.
BarrierWindow grid_scan(const EndTimes& ends);

// FullGridScan: every one of the nR end times is tried as the window's lower edge, every
// worker takes its first end time at or after it. Exact, O(n^2 R log R).
BarrierWindow full_grid_scan(const EndTimes& ends);

// ZipLine: all end times merged into one time line, swept in order while remembering each
// worker's latest end time; once every worker appears, the window closing at the current
// time opens at the oldest remembered end time, found by a scan of the n workers.
// Exact, O(nR log(nR) + n^2 R).
BarrierWindow zipline(const EndTimes& ends);

// Ours: the minimum window over n sorted lists with a min-heap of the n current heads and
// the running maximum; advancing the minimum's worker is the only move that can shorten
// the window. Exact, O(nR log n).
BarrierWindow min_window(const EndTimes& ends);

// One of the four by name: gridscan, fullgridscan, zipline, exact. choose_window and
// check_window_algorithm throw std::invalid_argument for another name.
std::vector<std::string> window_algorithms();
std::vector<CatalogueEntry> window_catalogue(); // list-capabilities
BarrierWindow choose_window(const std::string& algorithm, const EndTimes& ends);
void check_window_algorithm(const std::string& algorithm);

// Validates the input: at least one worker, each with R >= 1 finite, strictly increasing
// end times. Throws std::invalid_argument naming the worker.
void check_end_times(const EndTimes& ends);

} // namespace fulcrum::sync
