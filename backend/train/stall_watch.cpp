#include "train/stall_watch.h"

#include "balance/batch_size_manager.h"
#include "train/barrier_clock.h"
#include "train/job_state.h"
#include "train/remote_workers.h"
#include "train/training_observer.h"

#include <cstdio>

namespace fulcrum::train {

namespace {

std::string seconds(double s)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.3g s", s);
    return text;
}

} // namespace

StallWatch::StallWatch(const StallSpec& spec, JobState& job, TrainingObserver& observer,
    balance::BatchSizeManager& manager, RemoteWorkers* remote)
    : spec_(spec)
    , job_(job)
    , observer_(observer)
    , manager_(manager)
    , remote_(remote)
{
}

void StallWatch::begin(std::int64_t iteration, double start, const std::vector<std::size_t>& active,
    const std::vector<std::int32_t>& sizes, const std::vector<std::optional<double>>& predicted_speeds)
{
    iteration_ = iteration;
    batches_.assign(sizes.size(), Batch {});
    measured_speed_.resize(sizes.size(), 0.0);
    for (const std::size_t i : active) {
        Batch& b = batches_[i];
        b.active = true;
        b.size = sizes[i];
        b.start = start;
        const double speed = i < predicted_speeds.size() && predicted_speeds[i] && *predicted_speeds[i] > 0
            ? *predicted_speeds[i]
            : measured_speed_[i];
        if (speed > 0)
            b.predicted_s = sizes[i] / speed;
    }
}

void StallWatch::observe(const std::vector<IterationRecord>& rows)
{
    for (const IterationRecord& row : rows) {
        const auto i = static_cast<std::size_t>(row.worker);
        if (i < measured_speed_.size() && row.speed > 0)
            measured_speed_[i] = row.speed;
    }
}

std::optional<double> StallWatch::next_due() const
{
    std::optional<double> due;
    for (const Batch& b : batches_) {
        if (!b.active || !b.predicted_s || b.acted)
            continue;
        const double stalled = b.start + spec_.threshold_s(*b.predicted_s);
        std::optional<double> at;
        if (!b.reported)
            at = stalled;
        else if (spec_.action == StallAction::Exclude)
            at = stalled + spec_.after_s;
        if (at && (!due || *at < *due))
            due = at;
    }
    return due;
}

void StallWatch::check(double now, const std::vector<bool>& ended)
{
    for (std::size_t i = 0; i < batches_.size(); ++i) {
        Batch& b = batches_[i];
        if (!b.active || !b.predicted_s || (i < ended.size() && ended[i]))
            continue;
        const double stalled = b.start + spec_.threshold_s(*b.predicted_s);
        if (!b.reported && now >= stalled)
            report(i, now);
        if (b.reported && !b.acted && spec_.action == StallAction::Exclude && now >= stalled + spec_.after_s)
            act(i);
    }
}

void StallWatch::finish(const std::vector<BarrierTask>& tasks)
{
    for (std::size_t i = 0; i < batches_.size() && i < tasks.size(); ++i)
        if (batches_[i].reported && !tasks[i].batch.lost)
            recovered(i, tasks[i].end);
}

void StallWatch::judge(const std::vector<IterationRecord>& rows)
{
    for (const IterationRecord& row : rows) {
        const auto i = static_cast<std::size_t>(row.worker);
        if (i >= batches_.size() || !batches_[i].predicted_s || row.decision.starts_with("dropped"))
            continue;
        Batch& b = batches_[i];
        b.start = row.start_s;
        const double stalled = b.start + spec_.threshold_s(*b.predicted_s);
        if (row.end_s <= stalled)
            continue;
        report(i, stalled);
        if (spec_.action == StallAction::Exclude && row.end_s > stalled + spec_.after_s)
            act(i); // from the next barrier: this one has closed
        recovered(i, row.end_s);
    }
}

void StallWatch::report(std::size_t worker, double at)
{
    Batch& b = batches_[worker];
    b.reported = true;
    JobEvent e = job_.event(iteration_, at, EventKind::WorkerStalled,
        "worker " + std::to_string(worker) + " stalled: its batch of " + std::to_string(b.size) + " has taken "
            + seconds(at - b.start) + ", predicted " + seconds(*b.predicted_s) + " (its limit "
            + seconds(spec_.threshold_s(*b.predicted_s)) + ": on_stall's factor x the prediction, at least its min_s)");
    e.worker = static_cast<WorkerId>(worker);
    observer_.on_event(e);
}

void StallWatch::act(std::size_t worker)
{
    batches_[worker].acted = true;
    const auto w = static_cast<WorkerId>(worker);
    try {
        manager_.exclude(w, spec_.for_s, EventActor::policy("on_stall"));
    } catch (const RefusedRequest& e) { // already excluded, or the last worker
        JobEvent warning = job_.event(iteration_, job_.wall_seconds(), EventKind::Warning,
            "on_stall could not exclude stalled worker " + std::to_string(worker) + " (" + e.code() + "): " + e.what());
        warning.worker = w;
        observer_.on_event(warning);
        return;
    }
    if (remote_ && remote_->is_remote(w))
        remote_->give_up_task(w); // the barrier goes on without it (real mode)
}

void StallWatch::recovered(std::size_t worker, double end)
{
    const Batch& b = batches_[worker];
    JobEvent e = job_.event(iteration_, end, EventKind::WorkerRecovered,
        "worker " + std::to_string(worker) + " recovered: its batch of " + std::to_string(b.size) + " took "
            + seconds(end - b.start) + ", predicted " + seconds(*b.predicted_s));
    e.worker = static_cast<WorkerId>(worker);
    observer_.on_event(e);
}

} // namespace fulcrum::train
