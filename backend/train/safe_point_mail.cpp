#include "train/safe_point_mail.h"

namespace fulcrum::train {

SafePointMail::SafePointMail(
    JobId job, JobControl& control, balance::BatchSizeManager& manager, TrainingObserver& observer)
    : job_(job)
    , control_(control)
    , manager_(manager)
    , observer_(observer)
{
}

void SafePointMail::emit(std::int64_t at, double now, EventKind kind, std::string message, const EventActor& actor,
    std::optional<WorkerId> worker) const
{
    JobEvent e = job_event(kind, at, now, std::move(message), actor, worker);
    e.job = job_;
    observer_.on_event(e);
}

void SafePointMail::hold_if_paused(std::int64_t at, double now, const std::atomic<bool>* stop,
    const std::string& held_text, const std::function<double(double held_s)>& resumed_at) const
{
    const std::optional<EventActor> by = control_.pause_requested();
    if (!by)
        return;
    emit(at, now, EventKind::JobPaused, held_text, *by);
    const auto [held, resumed_by] = control_.hold(stop);
    emit(at, resumed_at(held), EventKind::JobResumed, "after " + std::to_string(held) + " s", resumed_by);
}

void SafePointMail::forward_manager_events(std::int64_t at, double now, std::optional<std::int64_t> sizes) const
{
    for (JobEvent e : manager_.take_events()) {
        e.job = job_;
        e.iteration = sizes.value_or(at);
        e.time_s = now;
        if (e.kind == EventKind::PolicyChange)
            control_.policy_in_effect(manager_.policy().name());
        observer_.on_event(e);
    }
    record_notes(at, now);
    if (std::optional<JobControl::ClusterChange> cluster = control_.take_one<JobControl::ClusterChange>())
        observer_.on_cluster(ClusterRecord { job_, at, now, std::move(cluster->state), cluster->cluster_job });
}

void SafePointMail::record_notes(std::int64_t at, double now) const
{
    for (JobControl::Note& note : control_.take<JobControl::Note>())
        emit(at, now, note.kind, std::move(note.message), note.actor, note.worker);
}

} // namespace fulcrum::train
