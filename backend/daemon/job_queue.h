#pragma once

#include "common/job_event.h"
#include "daemon/cluster_book.h"
#include "daemon/data_cache.h"
#include "daemon/elastic_scheduling.h"
#include "daemon/job_journal.h"
#include "daemon/link_schedule.h"
#include "daemon/placement_pass.h"
#include "daemon/resource_book.h"
#include "daemon/shared_clock.h"
#include "daemon/start_watch.h"
#include "protocol/messages.h"
#include "serve/core_thread.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace fulcrum::serve {
class Client;
class StreamHub;
struct DaemonMetrics;
} // namespace fulcrum::serve

namespace fulcrum::archive {
class RunCatalogue;
class ServerFolders;
} // namespace fulcrum::archive

namespace fulcrum::daemon {

class JobRuntime;
class RemotePool;
struct DaemonOptions;

// fulcrumd's jobs: submitted to the journal, queued, placed on the cluster by the placement
// policy as their workers fit, run, recovered after a restart, and the remote workers that
// joined them. It is fulcrumd's cluster core: its state changes on its one thread only
// (CoreThread), with no lock. The operator's commands and the workers' joins are posted
// there (Daemon); a submission after its journal's fsync, the elastic scheduler's and the
// arrivals' decisions at their instants, a job's end and the tests' direct calls wait for it
// there (each public method that changes something calls its work onto that thread). After
// each change it publishes a View, which the WebSocket handlers read without waiting.
class JobQueue {
public:
    JobQueue(const DaemonOptions& options, const archive::ServerFolders& folders,
        const archive::RunCatalogue& catalogue, serve::StreamHub& hub);
    ~JobQueue(); // stop_all()
    JobQueue(const JobQueue&) = delete;
    JobQueue& operator=(const JobQueue&) = delete;

    enum class Origin { Client, Local };
    // Runs `task` on the core's thread later (it replies itself); dropped once stopping.
    void post(std::function<void()> task);
    // See Daemon::submit. The job belongs to `tenant`.
    JobId submit(const std::string& scenario_json, const std::string& source, Origin origin,
        const std::string& tenant = std::string(protocol::kDefaultTenant));
    // A client's workload: virtual-mode jobs of local workers, each queued when fulcrumd's
    // virtual clock reaches its arrival (seconds from now on that clock), so that a trace runs
    // through the live scheduler as it would through fulcrum-sim. All or none: a bad job is
    // an InputError naming jobs[i] and its field. Returns the jobs' statuses.
    std::vector<protocol::JobStatus> submit_workload(const std::vector<protocol::SubmitWorkload::Arrival>& jobs,
        const std::string& source, const std::string& tenant = std::string(protocol::kDefaultTenant));
    void cancel(JobId job, const EventActor& actor);
    // An operator's resize-job: see JobRuntime::resize; under --elastic eps or kill-restart a job the scheduler sizes
    // also needs an idle GPU for an added worker (RefusedRequest "no-free-gpu").
    void resize(const protocol::ResizeJob& resize, const EventActor& actor);
    // An operator's set-cluster-policy: the placement policy for the jobs placed from now on,
    // the elastic policy for running and future jobs, the communication scheduler from each
    // live job's next transfer. Throws InputError naming the field (placement, elastic, comm)
    // for a policy fulcrumd lacks; nothing changes then.
    void set_cluster_policy(const protocol::SetClusterPolicy& policies, const EventActor& actor);
    // An operator's resume-job: an interrupted job is queued to go on from its checkpoint,
    // a paused one resumes.
    void resume(JobId job, const EventActor& actor);
    struct Recovered {
        JobId job = 0;
        std::string message;
        bool operator==(const Recovered&) const = default;
    };
    std::vector<Recovered> recover();
    void stop_all();

    // What the I/O threads read, published after each change and never changed after. A job
    // stays in the table as long as the queue lives, so its pointer stays good.
    struct View {
        std::map<JobId, JobRuntime*> jobs;
        // Each worker connection that joined a job itself (a remote slot or an external rank),
        // and that job.
        std::map<std::uint64_t, JobId> workers;
        protocol::ClusterState cluster; // as the stream hub last sent it
        std::size_t queued = 0;
        std::int64_t placements = 0;
        std::size_t pooled_idle = 0, pooled_assigned = 0;
        double memory_held_bytes = 0, memory_budget_bytes = 0;
        int threads_held = 0, threads_budget = 0;
    };
    std::shared_ptr<const View> view() const { return view_.load(); }

    // Throws RefusedRequest("unknown-job").
    JobRuntime& job(JobId id) const;
    // The tenant job `id` belongs to; nothing for a job fulcrumd does not have. From the view.
    std::optional<std::string> tenant_of(JobId id) const;
    // The jobs a subscription selects (all when unset), in id order.
    std::vector<JobRuntime*> select(std::optional<JobId> job) const;
    std::vector<protocol::JobStatus> jobs() const;
    protocol::ClusterState cluster() const;
    // Each job's status, workers and latest rows, the queue's length and the placements made.
    void fill_metrics(serve::DaemonMetrics& metrics) const;

    // A worker connection joins a job's remote slot (or an external job's rank), recorded as a
    // worker-joined event naming its host, its connection and the slot, with `by` (the
    // worker's token) as actor. Throws RefusedRequest (no-remote-slot, already-joined, or the
    // pool's refusal).
    protocol::WorkerAssignment join(
        const std::shared_ptr<serve::Client>& client, const protocol::JoinJob& join, const EventActor& by);
    // A rank's report to the external job this connection joined. Throws RefusedRequest
    // (not-joined, not-external, or the rank pool's refusal).
    void report(const std::shared_ptr<serve::Client>& client, const protocol::ReportIteration& report);
    // A fulcrum-worker --pool connection waits in the worker pool (see ElasticScheduling).
    // Throws RefusedRequest("already-joined").
    void join_pool(const std::shared_ptr<serve::Client>& client, const protocol::JoinPool& join);
    // A connection closed: a worker's task in flight is lost (its barrier drops it).
    void client_left(const serve::Client& client);

private:
    // A scenario checked as a submission must be (throws InputError naming the field).
    struct Submission;
    // Throws InputError naming the field: a bad scenario, a job the cluster (or its tenant's
    // quota, when the tenant does not borrow) can never hold.
    Submission check_submission(
        const std::string& scenario_json, const std::string& source, Origin origin, const std::string& tenant) const;
    // What a journaled job's path fields become at recovery: confined as at its submission
    // for a client's; for one its operator gave locally, absolute paths as given.
    const PathPolicy& paths_of(JobJournal::Origin origin) const;
    // Off the core: a new job id, its scenario and tenant in the journal (an fsync).
    JobId journal_job(const std::string& scenario_json, Origin origin, const std::string& tenant);
    // On the core: a journaled job in the jobs' table, not queued yet. If fulcrumd is
    // stopping, its journal entry is removed and it is refused.
    JobRuntime& add_job(JobId id, Submission submission);
    JobRuntime& table_job(JobId id, Submission submission); // add_job's, and a recovered job's

    std::string queued_message(const JobRuntime& job) const; // on the core: what it asks for, who is ahead
    void arrivals_loop(); // a workload's jobs queued as the shared clock reaches their arrivals
    void start_queued(); // on the core: places what fits (PlacementPass) and starts it
    std::vector<ElasticJob*> queued_jobs() const; // on the core: in the queue's order
    // A queued job waits that idle GPUs could serve (EPS grows no job meanwhile).
    bool waits_for_idle_gpus() const;
    // On the core: the pooled processes of an ended job wait in the pool again.
    void release_pooled_workers(JobRuntime& job);
    void publish_cluster(); // on the core; publishes the view too
    // On the core: the view from the tables now, with the cluster as last published
    // unless a new state is given.
    void publish_view(std::optional<protocol::ClusterState> cluster = std::nullopt);
    // Per worker of a placement: the live jobs on its GPU and on its server's link.
    struct ClusterShares {
        std::vector<int> gpu, link;
    };
    static std::vector<std::set<JobId>> jobs_on_servers(const protocol::ClusterState& state);
    static ClusterShares shares_of(const std::vector<std::int32_t>& placement, const protocol::ClusterState& state,
        const std::vector<std::set<JobId>>& on_server);
    // Tells a live job what it shares; a job whose transfers the communication scheduler
    // decides learns their contention from it, transfer by transfer, instead.
    void send_shares(JobRuntime& job, const std::vector<std::int32_t>& placement, const protocol::ClusterState& state,
        const std::vector<std::set<JobId>>& on_server) const;
    double remaining_s(JobId id) const; // on the core: a job's estimated compute still to run
    RemainingWork remaining_work() const; // remaining_s, for the cluster book (on the core)
    protocol::ClusterState cluster_state() const; // on the core
    void queue_resumed(JobId id, const EventActor& actor); // on the core
    void on_job_done(JobId id);
    void release_job(JobId id); // on the core: its journal entry, GPUs, pooled workers, memory
    std::vector<JobRuntime*> running_jobs() const; // on the core: placed and not ended
    // Why a recovered job is failed instead of started again: fulcrumd died of a fatal signal
    // in one of its starts, or stopped in three of them; empty otherwise.
    static std::string start_failure(const StartWatch::Record& record);
    void elastic_loop(); // eps or kill-restart: growth rounds, trials, releases for waiting jobs; static: follow_pool
    // The jobs the elastic policy sizes all run in virtual mode (and one does): it decides on
    // their shared clock, not in wall time (on the core).
    bool elastic_on_shared_clock() const;

    const DaemonOptions& options_;
    const archive::ServerFolders& folders_;
    const archive::LocalJobPaths local_paths_ { folders_ };
    const archive::RunCatalogue& catalogue_;
    serve::StreamHub& hub_;
    JobJournal journal_;
    std::atomic<std::shared_ptr<const View>> view_ { std::make_shared<const View>() };
    SharedVirtualClock clock_; // the virtual-mode jobs' one clock: outlives every job
    LinkSchedule links_; // their transfers on the servers' links (--comm): outlives every job
    ResourceBook resources_; // memory and threads the running jobs hold
    DataCache data_; // their data sets, read once: outlives every job
    StartWatch start_watch_; // the jobs being started, for the crash handler
    std::map<JobId, std::unique_ptr<JobRuntime>> jobs_;
    std::deque<JobId> queued_;
    ClusterBook cluster_;
    WorkerPool worker_pool_; // fulcrum-worker --pool processes: the elastic scheduler hands them out
    ElasticScheduling elastic_;
    PlacementPass placement_ { options_, cluster_, elastic_, worker_pool_, resources_ };
    std::mutex wake_mutex_; // the elastic thread's sleep between ticks: no state of the core
    std::condition_variable wake_elastic_;
    void wake_elastic();
    std::thread elastic_thread_;
    std::atomic<bool> elastic_stop_ { false }; // frees the elastic thread's wait on the shared clock
    // The elastic scheduler as a participant of the shared clock (a JobId no job has): the
    // virtual time it joined at and the steps it has decided at since, while it is one.
    static constexpr JobId kScheduler = std::numeric_limits<JobId>::max();
    std::atomic<bool> scheduler_entered_ { false }; // read by its wait off the core
    std::optional<double> scheduler_origin_;
    std::int64_t scheduler_steps_ = 0;
    std::set<JobId> arriving_; // a workload's jobs, submitted and not arrived yet
    std::thread arrivals_thread_;
    std::atomic<bool> arrivals_stop_ { false };
    std::atomic<JobId> next_job_ { 1 }; // taken before the journal's fsync, which runs off the core
    std::int64_t placements_ = 0;
    std::map<std::uint64_t, JobId> remote_workers_; // worker connections and the job each joined
    std::atomic<bool> stopping_ { false }; // read off the core: a submission, the elastic wait
    // Last: its thread ends before anything it touches goes, after stop_all.
    serve::CoreThread core_;
};

} // namespace fulcrum::daemon
