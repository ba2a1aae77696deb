#include "train/stall_watch.h"

#include "balance/batch_size_manager.h"
#include "train/barrier_clock.h"
#include "train/job_state.h"
#include "train/remote_workers.h"
#include "train/training_observer.h"

#include <cstdio>

namespace fulcrum::train {

namespace {

// Two decimals from a second up, so the batch's start read back from the message (the
// event's time less the time it has taken) is right to 5 ms however long it stalled.
std::string seconds(double s)
{
    char text[48];
    std::snprintf(text, sizeof text, s >= 1 ? "%.2f s" : "%.3g s", s);
    return text;
}

} // namespace

std::string stall_message(
    const std::string& who, std::int32_t batch, double elapsed_s, double predicted_s, double limit_s)
{
    return who + " stalled: its batch of " + std::to_string(batch) + " has taken " + seconds(elapsed_s) + ", predicted "
        + seconds(predicted_s) + " (its limit " + seconds(limit_s)
        + ": on_stall's factor x the prediction, at least its min_s)";
}

std::string recovery_message(const std::string& who, std::int32_t batch, double took_s, double predicted_s)
{
    return who + " recovered: its batch of " + std::to_string(batch) + " took " + seconds(took_s) + ", predicted "
        + seconds(predicted_s);
}

StallWatch::StallWatch(const StallSpec& spec, JobState& job, TrainingObserver& observer,
    balance::BatchSizeManager& manager, BatchRelease& release)
    : spec_(spec)
    , job_(job)
    , observer_(observer)
    , manager_(manager)
    , release_(release)
{
}

void StallWatch::begin(std::int64_t iteration, double start, const std::vector<std::size_t>& active,
    const std::vector<std::int32_t>& sizes, const std::vector<std::optional<double>>& predicted_speeds)
{
    batches_.assign(sizes.size(), Batch {});
    for (const std::size_t i : active)
        begin_batch(i, iteration, start, sizes[i], i < predicted_speeds.size() ? predicted_speeds[i] : std::nullopt);
}

void StallWatch::begin_batch(
    std::size_t worker, std::int64_t iteration, double start, std::int32_t size, std::optional<double> predicted_speed)
{
    if (worker >= batches_.size())
        batches_.resize(worker + 1);
    if (worker >= measured_speed_.size()) {
        measured_speed_.resize(worker + 1, 0.0);
        measured_comm_.resize(worker + 1, 0.0);
    }
    Batch& b = batches_[worker];
    b = Batch {};
    b.iteration = iteration;
    b.active = true;
    b.size = size;
    b.start = start;
    const double speed = predicted_speed && *predicted_speed > 0 ? *predicted_speed : measured_speed_[worker];
    if (speed > 0) // its compute, and its pull and push as they last took
        b.predicted_s = size / speed + measured_comm_[worker];
}

void StallWatch::end_batch(std::size_t worker, double end, bool lost)
{
    if (worker >= batches_.size() || !batches_[worker].active)
        return;
    batches_[worker].active = false;
    if (batches_[worker].reported && !lost)
        recovered(worker, end);
}

void StallWatch::observe(std::span<const IterationRecord> rows)
{
    for (const IterationRecord& row : rows) {
        const auto i = static_cast<std::size_t>(row.worker);
        if (i < measured_speed_.size() && row.speed > 0) {
            measured_speed_[i] = row.speed;
            measured_comm_[i] = row.comm_s;
        }
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
        if (i < ended.size() && ended[i])
            b.active = false; // nothing more is due for it (finish reads `reported`)
        if (!b.active || !b.predicted_s)
            continue;
        const double stalled = b.start + spec_.threshold_s(*b.predicted_s);
        if (!b.reported && now >= stalled)
            report(i, now);
        if (b.reported && !b.acted && spec_.action == StallAction::Exclude && now >= stalled + spec_.after_s)
            act(i, now);
    }
}

void StallWatch::finish(const std::vector<BarrierTask>& tasks)
{
    for (std::size_t i = 0; i < batches_.size() && i < tasks.size(); ++i)
        if (batches_[i].reported && !tasks[i].batch.lost)
            recovered(i, tasks[i].end);
}

void StallWatch::judge(std::span<const IterationRecord> rows)
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
            act(i, stalled + spec_.after_s); // from the next barrier: this one has closed
        recovered(i, row.end_s);
    }
}

void StallWatch::report(std::size_t worker, double at)
{
    Batch& b = batches_[worker];
    b.reported = true;
    JobEvent e = job_.event(b.iteration, at, EventKind::WorkerStalled,
        stall_message("worker " + std::to_string(worker), b.size, at - b.start, *b.predicted_s,
            spec_.threshold_s(*b.predicted_s)));
    e.worker = static_cast<WorkerId>(worker);
    observer_.on_event(e);
}

void StallWatch::act(std::size_t worker, double at)
{
    batches_[worker].acted = true;
    const auto w = static_cast<WorkerId>(worker);
    try {
        manager_.exclude(w, spec_.for_s, EventActor::policy("on_stall"));
    } catch (const RefusedRequest& e) { // already excluded, or the last worker
        JobEvent warning = job_.event(batches_[worker].iteration, at, EventKind::Warning,
            "on_stall could not exclude stalled worker " + std::to_string(worker) + " (" + e.code() + "): " + e.what());
        warning.worker = w;
        observer_.on_event(warning);
        return;
    }
    release_.give_up(w); // the barrier goes on without it (real mode)
}

void StallWatch::recovered(std::size_t worker, double end)
{
    const Batch& b = batches_[worker];
    JobEvent e = job_.event(b.iteration, end, EventKind::WorkerRecovered,
        recovery_message("worker " + std::to_string(worker), b.size, end - b.start, *b.predicted_s));
    e.worker = static_cast<WorkerId>(worker);
    observer_.on_event(e);
}

} // namespace fulcrum::train
