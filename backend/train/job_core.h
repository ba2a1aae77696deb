#pragma once

#include "balance/batch_size_manager.h"
#include "common/state_archive.h"
#include "engine/event_queue.h"
#include "engine/pacer.h"
#include "train/job_control.h"
#include "train/job_state.h"
#include "train/safe_point_mail.h"
#include "train/training_observer.h"

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fulcrum::train {

// What training carries from one safe point to the next whichever sync model runs it; a
// sync-model switch hands it from one engine to the other.
struct TrainingProgress {
    std::int64_t updates = 0; // parameter-server updates made: a barrier is one, a push is one
    // The iteration every worker runs next: a barrier engine's k; a free-running engine
    // starts each worker's clock here and leaves it past every worker's last iteration, so
    // no (iteration, worker) row is written twice.
    std::int64_t next = 0;
    double now = 0; // the run clock
    std::int64_t samples = 0;
    double train_loss = 0;
    TrainingResult result;
    // The barrier engine's last observations (empty after a free-running segment).
    std::vector<balance::WorkerObservation> observations;
    std::int64_t max_staleness = 0, supersteps = 0; // the free-running segments'
    bool free_running_ran = false;
    bool done = false; // the budget, the target accuracy or a stop request ended training
    bool checkpointed_at_stop = false; // a stop request left a checkpoint to resume from
};

// The parts of a checkpoint both engines write: the progress (next iteration, run clock,
// samples, training loss, last evaluation, best accuracy, target, the last barrier's
// observations) and the totals (updates, the free-running segments' staleness and
// supersteps). `job` names the evaluation records read back.
void save_progress(StateWriter& out, const TrainingProgress& progress);
void load_progress(StateReader& in, TrainingProgress& progress, JobId job);
void save_totals(StateWriter& out, const TrainingProgress& progress);
void load_totals(StateReader& in, TrainingProgress& progress);

// One job's training state shared by the engines that run its sync models: the job (server,
// workers, evaluator), its BatchSizeManager and control mailbox, the virtual clock and the
// pacer, the sync model and the workers' conditions in effect, and the progress. The
// safe-point steps every engine takes are here, so pauses, stragglers, sync-model switches
// and the manager's events behave the same whatever the sync model; what those steps change
// (the sync model, the conditions, the mailbox) the engines only read.
class JobCore {
public:
    JobCore(TrainerConfig config, std::unique_ptr<balance::BatchSizeManager> manager, TrainingObserver& observer);
    JobCore(const JobCore&) = delete; // its mailbox's check refers to its own configuration
    JobCore& operator=(const JobCore&) = delete;

    // A pause asked for: "job-paused" (with `where`), held until resumed or stopped, then
    // "job-resumed"; paced mode's clock resumes where it stopped.
    void hold_if_paused(std::int64_t at, double now, const std::atomic<bool>* stop, const std::string& where);
    // Injected stragglers requested since the last safe point, and the cluster's GPU sharing
    // and link contention (live, or as a resumed job's first attempt recorded them); each
    // change is an event.
    void apply_slowdowns(std::int64_t at, double now);
    // The manager's events since the last call (overrides, phase changes, warnings), then
    // the notes asked for since (record_notes).
    void forward_manager_events(std::int64_t at, double now);
    // The notes asked for since the last safe point (an operator's freeze, the scheduler's
    // early feedback). Engines record them before the resizes they take at the same safe
    // point: a note asked for first (job-unfrozen) often caused the resizes (remove-worker).
    // Those asked for after the last safe point are recorded before job-finished/stopped.
    void record_notes(std::int64_t at, double now);
    // A set-sync-model asked for since the last safe point: in effect from here on, the
    // mailbox told, a sync-model-change event. The model switched from, or none when none was
    // asked.
    std::optional<sync::SyncSpec> switch_sync_model(std::int64_t at, double now);
    // The scenario's scheduled requests due by iteration `at` go to the mailbox (first at a
    // safe point, so the engine applies them there); a refusal is an event.
    void request_scheduled(std::int64_t at, double now);
    // Resumed from a checkpoint: the requests due before iteration `at` were made before it.
    void scheduled_done_before(std::int64_t at);
    // An event stamped with this job, iteration `at` and run time `now`, by `actor`.
    void emit(std::int64_t at, double now, EventKind kind, std::string message, const EventActor& actor,
        std::optional<WorkerId> worker = std::nullopt);
    bool stop_requested(const std::atomic<bool>* stop) const { return stop && stop->load(std::memory_order_relaxed); }
    // A trainer with its own rules for requests (federated rounds) replaces the mailbox; the
    // safe-point hand-over then reads the new one.
    void replace_control(std::unique_ptr<JobControl> replacement);
    // A checkpoint's stragglers and sync model in effect (the mailbox learns them on load).
    void save_sync(StateWriter& out) const;
    void load_sync(StateReader& in);

    // What the engines work through.
    JobState& job() { return job_; }
    const JobState& job() const { return job_; }
    const TrainerConfig& config() const { return job_.config; }
    balance::BatchSizeManager& manager() { return *manager_; }
    TrainingObserver& observer() { return observer_; }
    JobControl& control() { return *control_; }
    engine::EventQueue& clock() { return clock_; }
    engine::Pacer& pacer() { return pacer_; }
    TrainingProgress& progress() { return progress_; }
    const TrainingProgress& progress() const { return progress_; }
    const sync::SyncSpec& sync_model() const { return sync_model_; } // in effect
    // A worker's conditions in effect: an injected straggler's factor; the live jobs
    // time-sharing its GPU (fulcrumd's cluster), 1 alone; eq. 5's T(k) / T(1) for the live
    // jobs crossing its server's link, 1 alone. The training thread's.
    double slowdown(std::size_t worker) const { return slowdown_[worker]; }
    double sharing(std::size_t worker) const { return sharing_[worker]; }
    double contention(std::size_t worker) const { return contention_[worker]; }

private:
    // Eq. 5's T(k) / T(1) for this job's model over `link`.
    double link_stretch(int k, const JobControl::LinkModel& link) const;
    // Each worker whose share changes gets it, with an event.
    void contend_links(std::int64_t at, double now, const JobControl::LinkContention& link);
    void share_gpus(std::int64_t at, double now, const JobControl::GpuSharing& asked);

    JobState job_;
    std::unique_ptr<balance::BatchSizeManager> manager_;
    TrainingObserver& observer_;
    std::unique_ptr<JobControl> control_;
    std::unique_ptr<SafePointMail> mail_; // the mailbox's hand-over at safe points
    engine::EventQueue clock_;
    engine::Pacer pacer_;
    sync::SyncSpec sync_model_;
    std::vector<double> slowdown_;
    std::vector<double> sharing_; // not in a checkpoint: fulcrumd sends it again when the job starts
    std::vector<double> contention_;
    TrainingProgress progress_;
    std::size_t next_scheduled_ = 0; // config.scheduled's first request not yet made
    std::optional<JobControl::RecordedShares> replaying_; // a resumed job's first attempt's shares
    std::size_t replayed_ = 0; // its changes applied
};

// The parts of a job an engine works through most, by the names its code uses; the rest
// (the mailbox, the sync model and the workers' conditions in effect) through `core`.
struct EngineRefs {
    explicit EngineRefs(JobCore& c)
        : core(c)
        , job(c.job())
        , config(c.config())
        , manager(c.manager())
        , observer(c.observer())
        , clock(c.clock())
        , progress(c.progress())
    {
    }

    JobCore& core;
    JobState& job;
    const TrainerConfig& config;
    balance::BatchSizeManager& manager;
    TrainingObserver& observer;
    engine::EventQueue& clock;
    TrainingProgress& progress;
};

} // namespace fulcrum::train
