#pragma once

#include "common/records.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fulcrum::run {

// The iterations between two of a scenario's changes ("changes" section), and what they
// cost: how the same cluster fared under each setting.
struct PhaseSummary {
    std::int64_t first_iteration = 0;
    std::int64_t iterations = 0;
    std::string setting; // the policy and sync model asked for, e.g. "lbbsp-cpu, bsp"
    double mean_iteration_s = 0; // barrier to barrier, on the run clock
};

// What a finished (or stopped) run reports: printed by fulcrum-run, stored with the run.
struct RunSummary {
    RunId run = 0;
    std::string database;
    std::string scenario;
    std::string mode;
    std::uint64_t seed = 0;
    std::string model;
    int workers = 0;
    std::string sync; // e.g. "bsp", "ssp(s=5)"
    std::string policy; // e.g. "lbbsp-cpu"
    std::int64_t iterations = 0;
    std::int64_t updates = 0; // parameter-server updates (= iterations for the BSP family)
    // Passes over the training set; unknown for an external job that did not say how many
    // samples its epoch has (external.samples_per_epoch).
    std::optional<double> epochs;
    double time_s = 0; // run clock (virtual seconds in virtual and paced modes)
    double wall_s = 0;
    double mean_iteration_s = 0;
    double final_accuracy = 0;
    double best_accuracy = 0;
    double final_test_loss = 0;
    bool stopped = false;
    std::optional<double> target_time_s; // when the target accuracy was first reached
    std::optional<std::int64_t> target_updates;
    // With scheduled changes and a barrier per iteration: one entry per setting, in order.
    std::vector<PhaseSummary> phases;
};

// One JSON object, keys as documented in docs/scenarios.md.
std::string to_json(const RunSummary& summary);
// A few aligned lines for a terminal.
std::string to_text(const RunSummary& summary);

} // namespace fulcrum::run
