#pragma once

#include "balance/batch_size_manager.h"
#include "train/job_control.h"
#include "train/training_observer.h"

#include <atomic>
#include <functional>
#include <optional>
#include <string>

namespace fulcrum::train {

// What a job's mailbox hands over at a safe point, recorded the same way by every trainer
// (JobCore's engines and ExternalTrainer): a pause, the manager's events, the notes asked
// for from outside and the newest cluster. Each is an event stamped with the job, the safe
// point's iteration and its run time.
class SafePointMail {
public:
    SafePointMail(JobId job, JobControl& control, balance::BatchSizeManager& manager, TrainingObserver& observer);

    // An event of this job at iteration `at`, run time `now`, by `actor`.
    void emit(std::int64_t at, double now, EventKind kind, std::string message, const EventActor& actor,
        std::optional<WorkerId> worker = std::nullopt) const;
    // A pause asked for: "job-paused" (`held_text`), held until resumed or stopped, then
    // "job-resumed" at the run time `resumed_at` gives for the seconds held (a paced clock
    // shifts by them; an external job's clock is the wall's).
    void hold_if_paused(std::int64_t at, double now, const std::atomic<bool>* stop, const std::string& held_text,
        const std::function<double(double held_s)>& resumed_at) const;
    // The manager's events since the last call (overrides, phase changes, warnings; a policy
    // change also tells the mailbox the policy now in effect), then the notes, then the
    // newest cluster. The manager's events are marked at `sizes` when given: the iteration the
    // allocation just made is for (an external job's plan_ahead sizes one ahead of `at`).
    void forward_manager_events(std::int64_t at, double now, std::optional<std::int64_t> sizes = std::nullopt) const;
    // The notes asked for since the last safe point (an operator's freeze, the scheduler's
    // early feedback).
    void record_notes(std::int64_t at, double now) const;

private:
    JobId job_;
    JobControl& control_;
    balance::BatchSizeManager& manager_;
    TrainingObserver& observer_;
};

} // namespace fulcrum::train
