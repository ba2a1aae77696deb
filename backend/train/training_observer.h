#pragma once

#include "common/job_event.h"
#include "common/records.h"
#include "ps/gradient.h"

#include <optional>
#include <span>
#include <string>

namespace fulcrum::train {

// Receives everything a run produces, as it happens. The recorder, the progress bar and
// (later) the stream server are observers; the trainer knows none of them.
class TrainingObserver {
public:
    virtual ~TrainingObserver() = default;
    virtual void on_iteration(std::span<const IterationRecord> rows) = 0;
    virtual void on_evaluation(const EvaluationRecord& evaluation) = 0;
    virtual void on_event(const JobEvent& event) = 0;
    // The job now plans `iterations` barriers in all: an elastic job whose batch per worker is
    // fixed (elastic.batch_per_worker) re-plans its remaining samples at each resize.
    virtual void on_plan(std::int64_t /*iterations*/) { }
    // The cluster the job runs on changed (fulcrumd's jobs only); recorded for replays.
    virtual void on_cluster(const ClusterRecord& /*cluster*/) { }
    // The gradients a barrier applied, just before the server steps (the BSP family).
    // Lets a checker replay exactly what the server saw; most observers ignore it.
    virtual void on_barrier(std::int64_t /*iteration*/, std::span<const ps::GradientPush> /*pushes*/) { }
    // A checkpoint taken after iteration `iteration`'s rows were handed over (config's
    // checkpoint_every / checkpoint_seconds): the trainer's whole state, to resume from.
    // By value: an observer keeps the state (moves it into its store).
    // NOLINTNEXTLINE(performance-unnecessary-value-param)
    virtual void on_checkpoint(std::int64_t /*iteration*/, double /*time_s*/, std::string /*state*/) { }
};

struct TrainingResult {
    std::int64_t iterations = 0; // barriers (BSP family) or worker iterations (asynchronous models)
    std::int64_t updates = 0; // parameter-server updates
    double epochs = 0;
    double time_s = 0; // run clock at the end
    double wall_s = 0;
    double mean_iteration_s = 0; // run clock per barrier (BSP family) or per update
    EvaluationRecord final_evaluation;
    double best_accuracy = 0;
    bool stopped = false; // ended early by a stop request
    // When the test accuracy first reached the target (if one was set).
    std::optional<double> target_time_s;
    std::optional<std::int64_t> target_updates;
};

} // namespace fulcrum::train
