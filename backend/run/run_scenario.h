#pragma once

#include "balance/batch_size_manager.h"
#include "balance/policy_registry.h"
#include "data/dataset.h"
#include "db/run_store.h"
#include "run/run_summary.h"
#include "scenario/scenario.h"
#include "train/comm_gate.h"
#include "train/external_ranks.h"
#include "train/job_control.h"
#include "train/remote_workers.h"

#include <atomic>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>

namespace fulcrum::train {
class Trainer;
}

namespace fulcrum::run {

struct Progress {
    std::int64_t iteration = 0; // iterations completed
    std::int64_t iterations = 0; // planned
    double epoch = 0;
    std::int64_t samples = 0; // in the iteration just completed (every worker's batches)
    double time_s = 0; // run clock
    std::optional<double> accuracy; // latest test accuracy, once evaluated
    // The job's work, in iterations of its first plan: its barriers, or for a weak-scaled job
    // (elastic.batch_per_worker), whose work is its samples, the samples it trained over the
    // scenario's total batch, so that a re-plan after a resize moves neither (early feedback's
    // fraction, as the simulator counts it).
    std::int64_t work_done = 0;
    std::int64_t work_planned = 0;
};

struct RunOptions {
    std::optional<std::filesystem::path> database; // no database: nothing recorded
    // The job's id in its store and its rows: fulcrumd's id for it (fulcrum-run's job is 0).
    // Unset, a resumed job keeps its checkpoint's (fulcrum-run --resume of a fulcrumd store);
    // a store of an earlier release numbers its job 0, and a resume there keeps 0.
    std::optional<JobId> job;
    std::string tenant; // whose job it is, recorded with the run (fulcrumd's); empty: the default
    std::optional<scenario::Mode> mode; // overrides the scenario's
    std::optional<std::uint64_t> seed;
    std::optional<double> pace;
    std::optional<int> threads;
    std::function<void(const Progress&)> progress;
    // Every iteration's rows as they are recorded (experiments compute their figures from these).
    std::function<void(std::span<const IterationRecord>)> on_rows;
    std::function<void(const EvaluationRecord&)> on_evaluation;
    std::function<void(const JobEvent&)> on_event;
    std::function<void(const std::string&)> status; // "loading data", ...
    // The model's full name ("mlp-784-256-10"), once its data is loaded and before it trains,
    // so a live status names the model as the summary will.
    std::function<void(const std::string&)> on_model;
    const std::atomic<bool>* stop = nullptr;
    // Already loaded data to use instead of loading the scenario's (experiments run many jobs).
    std::optional<data::TrainTest> data;
    // Called with the job's trainer just before training, whatever its sync model (operator
    // commands go to its control()), and with nullptr once it is done, even on failure.
    std::function<void(train::Trainer*)> on_trainer;
    // Called after training ends, while the trainer still exists (e.g. to save its models).
    std::function<void(train::Trainer&)> on_finish;
    // Events from before the run (fulcrumd's queue and placement), recorded first, at
    // iteration 0, as the run's job. Not passed to on_event: their owner published them.
    std::vector<JobEvent> recorded_before;
    // The processes that compute the scenario's remote worker slots (fulcrumd).
    std::shared_ptr<train::RemoteWorkers> remote;
    // The ranks of an external framework job (fulcrumd's RankPool): a scenario with an
    // "external" section runs through them.
    std::shared_ptr<train::ExternalRanks> ranks;
    // Continue run `run` of `database` after a crash from its job's checkpoint: the rows past
    // the checkpoint are recorded again, the job goes on as the uninterrupted one would
    // (bsp and backup; the scenario must be the run's own).
    struct Resume {
        RunId run = 0;
        db::Checkpoint checkpoint;
        // What the path fields of the checkpoint's policy (one an operator set) become:
        // fulcrumd's folders confine a client's names, as at set-policy. Unset: as given.
        const PathPolicy* paths = nullptr;
        // fulcrumd's server links (eq. 5): the resumed job follows the link contention its
        // crashed attempt recorded past the checkpoint. Unset: only its GPU sharing.
        std::optional<train::JobControl::LinkModel> links;
    };
    std::optional<Resume> resume;
    // The status a stopped run is recorded with ("stopped" when unset): fulcrumd records a
    // job its own shutdown stopped as "interrupted", to resume it at its next start.
    std::function<std::string()> stopped_status;
    // Virtual mode in fulcrumd: the daemon's one clock for its live jobs (TrainerConfig).
    std::function<void(double, const std::atomic<bool>*)> shared_clock;
    // ... and its communication scheduler (TrainerConfig::comm_gate).
    train::CommGate comm_gate;
};

// The scenario's training and test data (synthetic from the seed, or Fashion-MNIST from
// its path); a remote worker loads the same. Throws InputError naming the file.
data::TrainTest load_scenario_data(const scenario::Scenario& scenario, std::uint64_t seed);

// Loads the data, builds the job and trains it, recording every iteration. The database is
// opened before anything slow happens, so an unwritable path fails at once.
// Throws InputError for bad input (scenario, data, database).
RunSummary run_scenario(const scenario::Scenario& scenario, const RunOptions& options);

} // namespace fulcrum::run
