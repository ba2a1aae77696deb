#pragma once

// Internal to the run module: what run_scenario and run_external_job share: the observer
// they hand their trainer, and how a trained run's result becomes its summary and record.

#include "db/run_recorder.h"
#include "run/run_scenario.h"
#include "train/trainer.h"
#include "train/training_observer.h"

#include <algorithm>

namespace fulcrum::run {

// Forwards the trainer's output to the recorder and the progress callback.
class RecordingObserver final : public train::TrainingObserver {
public:
    RecordingObserver(db::RunRecorder* recorder, const RunOptions& options, std::int64_t planned, double train_size)
        : recorder_(recorder)
        , options_(options)
        , planned_(planned)
        , first_planned_(planned)
        , train_size_(train_size)
    {
    }

    // The scenario's changes start a new phase at each of `boundaries` (sorted); `settings`
    // names each phase's policy and sync model (one more than the boundaries). Barrier models
    // only: each on_iteration then holds one whole iteration.
    void track_phases(std::vector<std::int64_t> boundaries, std::vector<std::string> settings)
    {
        boundaries_ = std::move(boundaries);
        phases_.assign(settings.size(), Phase {});
        for (std::size_t i = 0; i < settings.size(); ++i)
            phases_[i].summary.setting = std::move(settings[i]);
    }

    std::vector<PhaseSummary> phases() const
    {
        std::vector<PhaseSummary> out;
        for (const Phase& p : phases_)
            if (p.summary.iterations > 0) {
                PhaseSummary s = p.summary;
                s.mean_iteration_s = (p.end_s - p.start_s) / static_cast<double>(s.iterations);
                out.push_back(std::move(s));
            }
        return out;
    }

    void on_iteration(std::span<const IterationRecord> rows) override
    {
        if (!phases_.empty() && !rows.empty())
            add_to_phase(rows);
        if (recorder_)
            recorder_->record_iterations(rows);
        if (options_.on_rows)
            options_.on_rows(rows);
        std::int64_t samples = 0;
        for (const auto& row : rows)
            samples += row.batch_size;
        samples_ += samples;
        if (options_.progress && !rows.empty()) {
            progress_.iteration = rows.front().iteration + 1;
            progress_.iterations = planned_;
            progress_.samples = samples;
            progress_.epoch = train_size_ > 0 ? static_cast<double>(samples_) / train_size_ : 0; // external: unknown
            progress_.time_s = rows.front().end_s + rows.front().wait_s;
            progress_.work_done = work_batch_ > 0 ? samples_ / work_batch_ : progress_.iteration;
            progress_.work_planned = work_batch_ > 0 ? first_planned_ : planned_;
            options_.progress(progress_);
        }
    }

    void on_evaluation(const EvaluationRecord& evaluation) override
    {
        if (recorder_)
            recorder_->record_evaluation(evaluation);
        if (options_.on_evaluation)
            options_.on_evaluation(evaluation);
        progress_.accuracy = evaluation.test_accuracy;
    }

    void on_event(const JobEvent& event) override
    {
        if (!phases_.empty() && event.kind == EventKind::ScheduledChangeRefused) {
            Phase& p = phases_[phase_of(event.iteration)];
            if (!p.summary.setting.ends_with(" (change refused)"))
                p.summary.setting += " (change refused)";
        }
        if (recorder_)
            recorder_->record_event(record(event));
        if (options_.on_event)
            options_.on_event(event);
        if (event.kind == EventKind::RanksReady && options_.status)
            options_.status(""); // no longer "waiting for 2 pytorch ranks" once they train
    }

    void on_plan(std::int64_t iterations) override { planned_ = iterations; }

    void on_cluster(const ClusterRecord& cluster) override
    {
        if (recorder_)
            recorder_->record_cluster(cluster);
    }

    void on_checkpoint(std::int64_t iteration, double time_s, std::string state) override
    {
        if (!recorder_)
            return;
        db::Checkpoint c;
        c.job = job_;
        c.iteration = iteration;
        c.time_s = time_s;
        c.policy_json = manager_ ? manager_->policy_spec_json() : std::string();
        c.state = std::move(state);
        recorder_->record_checkpoint(std::move(c));
    }

    // The job's manager, whose policy in effect each checkpoint names.
    void set_manager(JobId job, const balance::BatchSizeManager* manager)
    {
        job_ = job;
        manager_ = manager;
    }
    // A resumed run's progress counts the samples trained before its checkpoint.
    void start_from(std::int64_t samples) { samples_ = samples; }
    std::int64_t samples() const { return samples_; } // in the rows recorded so far
    // A weak-scaled job's work is its samples: progress counts them in batches of `total_batch`.
    void count_work_in_samples(std::int64_t total_batch) { work_batch_ = total_batch; }

private:
    struct Phase {
        PhaseSummary summary;
        double start_s = 0, end_s = 0; // the barrier before its first iteration, after its last
    };

    std::size_t phase_of(std::int64_t iteration) const
    {
        return static_cast<std::size_t>(
            std::upper_bound(boundaries_.begin(), boundaries_.end(), iteration) - boundaries_.begin());
    }

    void add_to_phase(std::span<const IterationRecord> rows)
    {
        const std::int64_t k = rows.front().iteration;
        double opened = rows.front().start_s, closed = 0;
        for (const IterationRecord& r : rows) {
            opened = std::min(opened, r.start_s);
            closed = std::max(closed, r.end_s + r.wait_s);
        }
        Phase& p = phases_[std::min(phase_of(k), phases_.size() - 1)];
        if (p.summary.iterations == 0) {
            p.summary.first_iteration = k;
            p.start_s = opened;
        }
        ++p.summary.iterations;
        p.end_s = closed;
    }

    std::vector<std::int64_t> boundaries_;
    std::vector<Phase> phases_;

    JobId job_ = 0;
    const balance::BatchSizeManager* manager_ = nullptr;
    db::RunRecorder* recorder_;
    const RunOptions& options_;
    std::int64_t planned_;
    const std::int64_t first_planned_;
    double train_size_;
    std::int64_t samples_ = 0;
    std::int64_t work_batch_ = 0; // > 0: the job's work is its samples (count_work_in_samples)
    Progress progress_;
};

// The trainer's totals into the summary (what an operator changed during the run is set by
// the caller).
inline void take_result(RunSummary& summary, const train::TrainingResult& result)
{
    summary.iterations = result.iterations;
    summary.updates = result.updates;
    summary.target_time_s = result.target_time_s;
    summary.target_updates = result.target_updates;
    summary.epochs = result.epochs;
    summary.time_s = result.time_s;
    summary.wall_s = result.wall_s;
    summary.mean_iteration_s = result.mean_iteration_s;
    summary.final_accuracy = result.final_evaluation.test_accuracy;
    summary.best_accuracy = result.best_accuracy;
    summary.final_test_loss = result.final_evaluation.test_loss;
    summary.stopped = result.stopped;
}

// The run's end in its store: finished, or as the options name a stop.
inline void finish_recorded_run(db::RunRecorder* recorder, const RunOptions& options, const RunSummary& summary)
{
    if (recorder)
        recorder->finish_run(
            summary.stopped ? (options.stopped_status ? options.stopped_status() : "stopped") : "finished",
            to_json(summary));
}

// Runs `trainer`, shown to the options' on_trainer while it runs (the daemon's commands reach
// it), and withdrawn when it returns or throws.
inline train::TrainingResult run_shown(train::Trainer& trainer, const RunOptions& options)
{
    if (options.on_trainer)
        options.on_trainer(&trainer);
    try {
        train::TrainingResult result = trainer.run(options.stop);
        if (options.on_trainer)
            options.on_trainer(nullptr);
        return result;
    } catch (...) {
        if (options.on_trainer)
            options.on_trainer(nullptr);
        throw;
    }
}

// A run whose training threw: recorded as `status` ("failed"), never hiding the error.
inline void record_failure(db::RunRecorder* recorder, const std::string& status)
{
    if (!recorder)
        return;
    try {
        recorder->finish_run(status, "{}");
    } catch (...) {
        // the training error is the one to report
    }
}

} // namespace fulcrum::run
