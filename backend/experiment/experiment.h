#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace fulcrum::experiment {

struct ExperimentOptions {
    std::filesystem::path out; // results.csv, results.md and the run databases go here
    std::uint64_t seed = 1;
    bool quick = false; // smaller and shorter: a smoke test, not the published figures
    std::string device = "cpu"; // gpu-profile: the device measured ("cpu" or "cuda:N")
    std::function<void(const std::string&)> status;
};

const std::vector<std::string>& experiment_names();
// One line per experiment for --help.
std::string describe_experiments();

// Runs one experiment and writes DIR/results.csv and DIR/results.md. Throws
// std::invalid_argument for an unknown name, InputError for an unusable output folder.
void run_experiment(const std::string& name, const ExperimentOptions& options);

// The experiments (one file each).
void run_equilibrium(const ExperimentOptions& options);
void run_straggler_extents(const ExperimentOptions& options);
void run_predictors(const ExperimentOptions& options);
void run_federated(const ExperimentOptions& options);
void run_aggregation(const ExperimentOptions& options);
void run_zipline_cost(const ExperimentOptions& options);
void run_gpu_profile(const ExperimentOptions& options);

} // namespace fulcrum::experiment
