#pragma once

#include "experiment/experiment.h"
#include "perf/cluster_profiles.h"
#include "run/run_scenario.h"

#include <vector>

namespace fulcrum::experiment {

// A scenario made in code: Fashion-MNIST, virtual mode, the given model and batch.
scenario::Scenario base_scenario(const std::string& name, const model::ModelSpec& model, std::int32_t total_batch,
    float learning_rate, float momentum, std::uint64_t seed);

// n identical CPU workers (an m4.2xlarge each) at `speed` samples per second.
std::vector<scenario::WorkerSpec> homogeneous_cpu(int n, double speed);
// Adds the competing processes of a straggler extent (perf::competing_process).
void apply_heterogeneity(std::vector<scenario::WorkerSpec>& workers, perf::Heterogeneity level, double period_s);

// Everything one run produced, kept in memory for the experiment's figures; the run is also
// recorded to DIR/<db_name>.db (replaced if it exists).
struct CapturedRun {
    run::RunSummary summary;
    std::vector<IterationRecord> rows;
    std::vector<EvaluationRecord> evaluations;
    std::vector<JobEvent> events;
};
CapturedRun run_captured(
    scenario::Scenario scenario, const ExperimentOptions& options, const std::string& db_name, bool keep_rows = true);

// Fashion-MNIST, loaded once per experiment.
const data::TrainTest& fashion_mnist();

// The barrier time of a BSP iteration from its rows: the latest end plus nothing waiting.
std::vector<double> iteration_times(const std::vector<IterationRecord>& rows);

} // namespace fulcrum::experiment
