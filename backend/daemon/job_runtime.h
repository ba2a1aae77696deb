#pragma once

#include "archive/server_folders.h"
#include "common/job_fold.h"
#include "daemon/elastic_job.h"
#include "daemon/rank_pool.h"
#include "daemon/remote_pool.h"
#include "protocol/messages.h"
#include "run/run_scenario.h"
#include "scenario/scenario.h"
#include "sched/cluster.h"
#include "serve/io_path.h"
#include "serve/stream_hub.h"
#include "train/job_control.h"

#include <atomic>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <thread>

namespace fulcrum::train {
class Trainer;
}

namespace fulcrum::daemon {

class LinkSchedule;
class SharedVirtualClock;

// A job's run-clock seconds still to run: its iterations left at its mean iteration so far
// (one second an iteration before its first barrier). What LWF balances and SRSF orders by.
double remaining_run_s(const protocol::JobStatus& status);

// One live job in fulcrumd: the scenario's trainer on its own thread, recorded into its
// own run store, its stream published to the hub, and the operator's commands applied at
// its barriers. Thread-safe. As the elastic scheduling sees it, an ElasticJob.
class JobRuntime : public ElasticJob {
public:
    // `folders` turns server paths in messages into the names clients know; `tenant` is its
    // submitter's, who owns it (issue 47).
    JobRuntime(JobId id, std::string tenant, scenario::Scenario scenario, std::filesystem::path database,
        const archive::ServerFolders& folders, serve::StreamHub& hub, std::function<void(JobId)> on_done);
    ~JobRuntime() override; // stops the job and waits for it
    JobRuntime(const JobRuntime&) = delete;
    JobRuntime& operator=(const JobRuntime&) = delete;

    JobId id() const override { return id_; }
    const std::string& tenant() const override { return tenant_; }
    // Placed: `placement` is the GPU of each worker (-1 for a remote one, or one not a
    // member), `placed` says where for the "job-placed" event. Starts the job's thread. An
    // elastic job starts with `members` workers when given (the first slots), else with its
    // scenario's elastic.initial_workers; `server_gpus`, when given, are fewer than its
    // placement.server_gpus, and it starts with a server less for each GPU it lacks.
    // False when it could not start (no thread for it): it is failed, with the reason.
    bool start(std::vector<std::int32_t> placement, const std::string& placed, std::optional<int> members = {},
        std::optional<int> server_gpus = {});
    // A scheduler event before the run starts ("job-queued", "job-placed"): published now,
    // and recorded first in the job's run store when the run begins.
    void scheduler_event(EventKind kind, const std::string& message);
    // Why a queued job waits, for its status.
    void set_waiting(const std::string& why);
    // Ends the job at its next barrier; it is recorded as stopped (as interrupted when the
    // actor is EventActor::shutdown(), so the next fulcrumd resumes it).
    void cancel(const EventActor& actor);
    // A job an earlier fulcrumd was running: interrupted, and when placed and started it goes
    // on from `resume`'s checkpoint in its own run store, or from the beginning in a new run
    // when it had none (resume_jobs: manual holds such a job too).
    void interrupted(std::optional<run::RunOptions::Resume> resume, const std::string& why);
    bool resumable() const;
    bool has_checkpoint() const; // an interrupted job's, to go on from
    // A recovered job that cannot go on (no checkpoint): failed, with the reason.
    void set_failed(const std::string& why) { set_state(protocol::JobState::Failed, why); }
    // A recovered external job: its ranks went with the fulcrumd that ran it.
    void set_lost(const std::string& why) { set_state(protocol::JobState::Lost, why); }
    // A job that was never placed: stopped at once, with a "job-cancelled" event.
    void cancel_queued(const EventActor& actor);
    // The operator's commands. A job whose trainer has not started yet (queued, waiting for
    // remote workers or ranks, or loading its data and model) holds them and applies them in
    // order when it starts; one its trainer then refuses is reported as a "command-refused"
    // event. They throw RefusedRequest ("job-not-running" once the job has ended, or the
    // trainer's and manager's codes).
    void pause(const EventActor& actor);
    void resume(const EventActor& actor);
    // A pin, exclusion or straggler injection. The caller publishes the workers' states
    // after answering (publish_workers): encoding hundreds of workers is no part of a reply.
    void command(const protocol::WorkerCommand& command, const EventActor& actor);
    // set-policy / set-sync-model: takes effect at the trainer's next safe point, where it
    // records it as an event and the job's status follows. Throws InputError for a bad spec
    // (naming its field) and RefusedRequest ("job-not-running", "sync-model-not-switchable",
    // "policy-not-applicable", "over-memory-limit", "illegal-value").
    void change(protocol::JobSetting setting, const std::string& spec_json, const EventActor& actor);
    // freeze-job / unfreeze-job: the elastic scheduler leaves the job's workers as they are
    // while frozen. Recorded as a job-frozen / job-unfrozen event. Throws RefusedRequest
    // ("not-elastic", "job-not-running").
    void set_frozen(bool frozen, const EventActor& actor);
    bool frozen() const override;
    // An event recorded in the job's run store at its next safe point (throws
    // RefusedRequest "job-not-running" once it has ended).
    void note(
        EventKind kind, std::optional<WorkerId> worker, const std::string& message, const EventActor& actor) override;
    // ... about one of its workers (its event names the worker).
    // kill-restart: the job stops at its next barrier with a checkpoint, and starts again
    // from it at once, in the same run, with `changes` applied at its first barrier (events
    // with `actor` and `reason`); a job-restarted event says what the restart cost. Throws
    // RefusedRequest ("no-checkpoints" for a scenario that keeps none, "job-not-running").
    // Each change is resolved (resolve) in turn, as if the ones before it were made.
    void restart(
        const std::vector<protocol::ResizeJob>& changes, const EventActor& actor, const std::string& reason) override;
    // Reclaim of a rigid borrower (the cluster file's rigid_borrowers: requeue): the job stops
    // at its next barrier with a checkpoint and its thread ends Interrupted, its GPUs given
    // back; the queue then queues it again (take_requeue), and placed again it goes on from
    // that checkpoint in the same run. Throws RefusedRequest ("no-checkpoints" for a scenario
    // that keeps none, "not-requeueable" for remote workers or external ranks, whose processes
    // outlive no stop, "job-not-running").
    void requeue(const EventActor& actor, const std::string& reason);
    // Once, after a requeue stopped it: why, for the queue's job-queued event.
    std::optional<std::string> take_requeue();
    std::optional<std::string> requeue_reason() const;
    bool cancelled() const; // cancel-job (or fulcrumd's shutdown) asked it to end
    // The record of an elastic job's members and servers that its resizes are checked
    // against (ElasticJob::resolve): the trainer's, as its events told (every slot a member
    // for another job; its servers, before it starts, the ones it starts with: its scenario's,
    // fewer when it was placed with fewer server GPUs), with the resizes asked of it and not
    // yet applied or refused (so two asked at once are checked one after the other).
    train::Membership membership() const override;
    std::optional<Holdings> holdings() const override;
    // Asks the trainer to make a resolved resize between iterations; it records what it did
    // (or why not, when its data cannot be split so) as an event. Throws RefusedRequest
    // ("job-not-running") once the job has ended.
    void resize(const train::ResizeRequest& resolved) override;
    // Its work in iterations of its first plan (run::Progress: its samples over its total
    // batch when it scales weakly, else its barriers). Zero before its first iteration.
    Work work() const override;
    // How many resizes were handed to its trainer that it has not applied or refused yet
    // (those held for a trainer not started yet are not, but a kill-restart's changes are).
    int resizes_in_flight() const override;
    std::int64_t member_since(WorkerId worker) const override;
    // Samples, not barriers: a job whose batch per worker is fixed takes more per barrier as it grows.
    std::optional<double> samples_per_s(std::int64_t from, std::int64_t to) const override;
    // The worker's GPU on the cluster changed (an elastic resize): -1 for none.
    void place_worker(WorkerId worker, std::int32_t gpu) override;
    // How many live jobs share each worker's GPU (1: alone). In the virtual and paced modes
    // the job's modelled compute times stretch by it from its next safe point (a gpu-shared
    // or gpu-exclusive event); the real mode measures what sharing does. Sent on a change.
    void set_gpu_sharing(const std::vector<int>& jobs_per_gpu);
    // How many live jobs' pushes and pulls cross each worker's server link (1: its own job
    // alone), with the cluster's eq. 5 parameters: the same, for communication.
    void set_link_contention(const std::vector<int>& jobs_per_link, const sched::ContentionModel& link);
    // The cluster the job runs on (a cluster-state message, encoded once for every job),
    // recorded in its run store at the trainer's next safe point for a replay's scheduler view
    // and cluster map. Recorded on a change, and by every trainer the job starts.
    void record_cluster(const std::string& cluster_message);
    void join();
    // fulcrumd's one clock for its virtual-mode jobs (before start); null: the job's own.
    void use_shared_clock(class SharedVirtualClock* clock) { shared_clock_ = clock; }
    // A job on that clock arrived (was submitted, or came due in a workload) and started at
    // these daemon times; its end is the time the clock last let it go (status().daemon_clock).
    void set_daemon_arrival(double at);
    void set_daemon_start(double at); // the first start: a restart keeps it
    // ... and the communication scheduler of its jobs' transfers (before start).
    void use_link_schedule(class LinkSchedule* links) { links_ = links; }
    // The daemon's data sets, read once and shared with its other jobs.
    void use_data_cache(class DataCache* data) { data_ = data; }
    // The daemon's record of jobs being started, for its crash handler.
    void use_start_watch(class StartWatch* watch) { watch_ = watch; }
    // Its threads' nice value above the process's (DaemonOptions::job_niceness; before start).
    void set_niceness(int niceness) { niceness_ = niceness; }
    // Its transfers are the communication scheduler's to decide when one is set: a virtual-mode
    // job, a paced one with a pace (not as fast as possible), or a real-mode one with remote
    // workers, whose pulls and pushes cross fulcrumd's link (when they start; their lengths are
    // measured, never modelled).
    bool scheduled_by_links() const
    {
        return scenario_.mode == scenario::Mode::Virtual
            || (scenario_.mode == scenario::Mode::Paced && scenario_.pace > 0)
            || (scenario_.mode == scenario::Mode::Real && remote_);
    }

    protocol::JobStatus status() const override;
    std::vector<protocol::WorkerState> worker_states() const;
    void publish_workers(); // to the workers stream, as they are now
    // What the I/O threads read of the job (list-jobs, a subscription's snapshot, /metrics):
    // its status, workers and latest rows as its streams last sent them, published with each
    // send and never changed after. Reading it takes no lock, so no frame handler waits for
    // the job's trainer or the core.
    struct Published {
        protocol::JobStatus status;
        std::shared_ptr<const protocol::WorkerUpdate> workers; // as the hub last published it
        std::shared_ptr<const protocol::IterationRows> rows; // null before the first
    };
    std::shared_ptr<const Published> published() const { return published_.load(); }
    // The job's remote worker slots; null when it has none.
    const std::shared_ptr<RemotePool>& remote() const override { return remote_; }
    // An external job's ranks; null for a built-in job.
    const std::shared_ptr<RankPool>& ranks() const { return ranks_; }
    const scenario::Scenario& scenario() const override { return scenario_; }

private:
    void run();
    // An external job (external.max_restarts): each attempt of its ranks' group is a run of
    // its store; a lost rank ends one, and while restarts are left the ranks' pool opens again
    // (a job-restarted event says why) for the restarted group, which goes on from its own
    // checkpoint (the resume_from of its ready report).
    run::RunSummary run_attempts(const scenario::Scenario& scenario, run::RunOptions& options);
    void set_state(protocol::JobState state, std::string message = {});
    void publish_status();
    // Applies `apply` to the running trainer now, or holds it until the trainer starts;
    // `what` names the command in a "command-refused" event.
    // `resize_ticket`: the ask it hands over, when it is a resize (resizes_in_flight).
    void apply_or_hold(std::string what, std::function<void(train::Trainer&)> apply, bool note = false,
        std::uint64_t resize_ticket = 0);
    void trainer_started(train::Trainer* trainer);
    void check_worker(WorkerId worker) const;
    void hold_note(const train::JobControl::Note& note); // recorded at its next safe point
    // Folds an event the trainer recorded into the job's state (fold_): its pause, policy,
    // sync model and members, as replay folds it.
    void fold(const JobEvent& e);
    // The trainer's comm_gate: asks the link schedule, waiting on the shared clock while held.
    std::optional<train::CommGrant> schedule_transfer(
        const train::CommTransfer& transfer, const std::atomic<bool>* stop);

    const JobId id_;
    const std::string tenant_;
    const scenario::Scenario scenario_;
    const std::filesystem::path database_;
    const archive::ServerFolders& folders_;
    const archive::LocalJobPaths restart_paths_ { folders_ }; // a kill-restart's checkpoint policy
    serve::StreamHub& hub_;
    std::shared_ptr<RemotePool> remote_;
    std::shared_ptr<RankPool> ranks_;
    std::function<void(JobId)> on_done_;
    std::atomic<bool> stop_ { false };
    int niceness_ = 0;
    std::thread thread_;

    mutable serve::StateMutex mutex_;
    protocol::JobStatus status_;
    std::vector<std::int32_t> batch_sizes_;
    std::atomic<std::shared_ptr<const Published>> published_;
    // With mutex_ held (so publishes are ordered): status_ as it is now, with the workers or
    // rows given, else the last ones.
    void republish(const std::shared_ptr<const protocol::WorkerUpdate>& workers = {},
        const std::shared_ptr<const protocol::IterationRows>& rows = {});
    std::vector<protocol::WorkerState> worker_states_locked() const;
    // The workers stream's message as the workers are now, built once for the snapshot and
    // the hub (with mutex_ held).
    std::shared_ptr<const protocol::WorkerUpdate> workers_update_locked() const;
    train::Trainer* trainer_ = nullptr;
    bool trained_ = false; // the trainer has run and ended
    struct HeldCommand {
        std::string what;
        std::function<void(train::Trainer&)> apply;
        bool note = false; // a record of what happened: kept even if the job is cancelled meanwhile
        std::uint64_t resize_ticket = 0; // a resize's ask (ResizeRequest::ticket)
    };
    std::vector<HeldCommand> held_;
    std::chrono::steady_clock::time_point started_;
    const std::chrono::steady_clock::time_point submitted_ = std::chrono::steady_clock::now();
    std::vector<JobEvent> recorded_before_; // the scheduler's events, until the run records them
    std::optional<run::RunOptions::Resume> resume_;
    std::atomic<bool> shutdown_ { false };
    bool cancelled_ = false;
    SharedVirtualClock* shared_clock_ = nullptr;
    LinkSchedule* links_ = nullptr;
    DataCache* data_ = nullptr;
    StartWatch* watch_ = nullptr;
    std::atomic<bool> built_ { false }; // its trainer was built: its start is over
    std::vector<int> sharing_; // as last sent to the trainer
    std::optional<train::JobControl::LinkContention> contention_; // as last sent
    std::string cluster_; // the cluster-state message as last handed to the trainer
    std::optional<int> start_members_; // an elastic job started smaller (or larger) than its scenario says
    Work work_;
    std::optional<int> start_servers_; // ... and with fewer servers, its servers' GPUs being fewer
    // The job's state from its events: the starting members and names until its trainer
    // starts (then the trainer's, a resumed job's checkpoint's), each event folded after.
    JobFold fold_;
    std::deque<train::ResizeRequest> asked_resizes_; // resolved, not yet applied or refused, in order
    std::uint64_t last_ticket_ = 0; // the last ask's ResizeRequest::ticket
    struct Pace {
        std::int64_t iteration = 0; // iterations done
        double time_s = 0; // run clock
        std::int64_t samples = 0; // computed in that iteration
    };
    std::deque<Pace> pace_; // of recent barriers
    train::Membership membership_locked() const;
    int resizes_in_flight_locked() const;
    void forget_asked(const JobEvent& answered); // its ask, by ticket (with mutex_ held)
    struct Restart {
        std::vector<train::ResizeRequest> changes; // resolved
        EventActor actor;
        std::string reason;
        std::chrono::steady_clock::time_point asked;
        std::int64_t stopped_at = 0;
        bool requeue = false; // stop and go back to the queue instead of starting again at once
    };
    std::optional<Restart> restart_; // asked for, until the trainer stopped
    std::optional<Restart> restarting_; // stopped, until the new trainer started
    std::optional<std::string> requeued_; // stopped by requeue: why, until the queue takes it back
};

} // namespace fulcrum::daemon
