#pragma once

#include "access/auth_limiter.h"
#include "archive/replay_manager.h"
#include "archive/run_catalogue.h"
#include "archive/server_folders.h"
#include "daemon/core_request.h"
#include "daemon/daemon_options.h"
#include "daemon/job_queue.h"
#include "protocol/messages.h"
#include "serve/stream_hub.h"
#include "serve/task_threads.h"

#include <atomic>
#include <memory>
#include <string>
#include <string_view>

namespace fulcrum::daemon {

// What fulcrumd is apart from its sockets: a router from clients' frames to the parts that
// do the work, the job queue (jobs, placement, recovery, remote joins), the replay manager
// and the run catalogue, with the stream hub carrying what they publish. It checks each
// frame (version, greeting, role, fields) and dispatches it by std::visit. A frame handler
// never waits for the cluster core or a disk: it reads the core's published view (job
// lists, statuses, the cluster, metrics), and posts the rest: to the core's thread as a
// typed CoreRequest (job and worker commands, a resize, cluster policies, joins, a closed
// connection; core_request.h), answered from there, or to the disk threads (the journal's
// fsync at a submission, reading run stores). The WebSocket server feeds it frames; tests call it
// directly, and read the replies from the client's queue when they come.
class Daemon {
public:
    explicit Daemon(DaemonOptions options);
    ~Daemon(); // cancels every job at its next barrier and waits: recorded data is flushed
    Daemon(const Daemon&) = delete;
    Daemon& operator=(const Daemon&) = delete;

    // `name`: the client program and address; `person`: who holds the token it used, when
    // the token file names them (the audit trail names the person then).
    // `reach`: the tenants whose jobs its token reaches; by default a token-file line's that
    // names no tenant (access::TenantReach::of).
    std::shared_ptr<serve::Client> connect(protocol::Role role, std::string name, std::string person = {},
        std::optional<access::TenantReach> reach = std::nullopt);
    // The connection closed: it leaves the stream now, and its joins on the core's thread.
    void disconnect(serve::Client& client);

    enum class After { KeepOpen, Close };
    // One frame from a client: decoded, checked (version, role, fields) and handled; the
    // reply and any snapshot go to the client's queue. Never throws for bad input.
    After receive(serve::Client& client, std::string_view frame);
    // One binary frame from a joined remote worker (a result). Anything else gets an
    // `error` message; the connection stays open.
    void receive_binary(serve::Client& client, std::string_view frame);

    // Who gave a scenario: a client over the protocol (its paths are names inside the
    // server's folders) or the operator on fulcrumd's command line (any path).
    using Origin = JobQueue::Origin;
    // A job of `tenant` from a scenario's JSON text: queued, then placed on the cluster by the placement
    // policy and started as soon as its workers fit (a job that does not fit yet does not
    // hold back the jobs behind it). Throws InputError naming the field, also for a job
    // that could never fit this cluster, and OutsidePath for a client's path that leaves
    // the server's folders.
    JobId submit(const std::string& scenario_json, const std::string& source, Origin origin = Origin::Client,
        const std::string& tenant = std::string(protocol::kDefaultTenant));
    // A queued job leaves the queue at once, stopped; a placed one ends at its next barrier.
    // Throws RefusedRequest ("unknown-job").
    void cancel(JobId job, const EventActor& actor);
    std::vector<protocol::JobStatus> jobs() const;
    protocol::ClusterState cluster() const;
    // fulcrumd's /metrics page (Prometheus text format): in memory only, no disk. Given the
    // reach of the token that asked, the series of jobs of the tenants it reaches only.
    std::string metrics_text(const std::optional<access::TenantReach>& reach = std::nullopt) const;
    void stop_all();
    // After a crash or a restart: every job the journal holds (accepted, not ended) becomes
    // its job again under its own id. One whose run store has a checkpoint is interrupted
    // and (automatic resume) queued to go on from it in the same run; one with none (it had
    // not reached its first checkpoint, or its sync model keeps none) is queued again from
    // the beginning, its earlier rows kept. Returns what was found, each with what became of
    // it (a journal entry that cannot be used is named with job 0).
    using Recovered = JobQueue::Recovered;
    std::vector<Recovered> recover();
    serve::StreamHub& hub() { return hub_; }
    // The failed upgrades of each source, for the WebSocket server (its /metrics counters).
    access::AuthLimiter& auth_limiter() { return auth_limiter_; }
    const DaemonOptions& options() const { return options_; }
    const archive::ServerFolders& folders() const { return folders_; }

private:
    // One handler per client message, chosen by std::visit: a kind of CoreAsk is posted to the
    // core (post_to_core, answered there by its apply()), every other kind has an on() on the
    // I/O thread, and a message with neither does not compile. An on() replies to the request
    // or throws (RefusedRequest, InputError, OutsidePath).
    void handle(serve::Client& client, const protocol::ClientMessage& message);
    // Why the client's role or tenant may not send this message (the reason of its
    // not-authorized refusal), or nothing: the one place roles and tenants are checked.
    std::optional<std::string> refusal(const serve::Client& client, const protocol::ClientMessage& message) const;
    // Why the client may not reach job `job` (another tenant's), or nothing. refusal() asks on
    // the I/O thread; a command's apply() asks again on the core (check_reach, throwing
    // not-authorized), where a job submitted since is in the table: a job's tenant never
    // changes, but whether it exists yet can between the two.
    std::optional<std::string> beyond_reach(const serve::Client& client, JobId job) const;
    void check_reach(const serve::Client& client, JobId job) const;
    void on(serve::Client& client, const protocol::Hello& hello);
    void on(serve::Client& client, const protocol::Subscribe& subscribe);
    void on(serve::Client& client, const protocol::Unsubscribe& unsubscribe);
    void on(serve::Client& client, const protocol::ListJobs& list);
    void on(serve::Client& client, const protocol::SubmitJob& submit_job);
    void on(serve::Client& client, const protocol::SubmitWorkload& workload);
    void on(serve::Client& client, const protocol::ListRuns& list);
    void on(serve::Client& client, const protocol::OpenReplay& open);
    void on(serve::Client& client, const protocol::ReplayCommand& command);
    void on(serve::Client& client, const protocol::ListCapabilities& list);
    void on(serve::Client& client, const protocol::Heartbeat& heartbeat);
    void on(serve::Client& client, const protocol::ReportIteration& report);
    void send_snapshot(serve::Client& client, const protocol::Subscribe& subscription);
    // Sends a command's reply and logs it: the actor, the command, its job and how it ended.
    void answer(serve::Client& to, const CommandName& command, const protocol::Reply& reply) const;
    // The message kinds of a CoreAsk go to the core's thread as a CoreRequest, in the order
    // the connection sent them.
    void post_to_core(serve::Client& client, CoreAsk ask);
    // On the core's thread: one visit to the request's handler, whose reply (or the failure
    // what it threw maps to) goes to the client, logged as the command's outcome when it is
    // a command.
    void on_core(const CoreRequest& request);
    // The core's handlers, one per CoreAsk kind: each returns its reply or throws
    // (RefusedRequest, InputError).
    protocol::Reply apply(serve::Client& to, const protocol::JobCommand& command, const EventActor& actor);
    protocol::Reply apply(serve::Client& to, const protocol::ChangeJob& change, const EventActor& actor);
    protocol::Reply apply(serve::Client& to, const protocol::ResizeJob& resize, const EventActor& actor);
    protocol::Reply apply(serve::Client& to, const protocol::SetClusterPolicy& policy, const EventActor& actor);
    protocol::Reply apply(serve::Client& to, const protocol::WorkerCommand& command, const EventActor& actor);
    protocol::Reply apply(serve::Client& to, const protocol::JoinJob& join, const EventActor& actor);
    protocol::Reply apply(serve::Client& to, const protocol::JoinPool& join, const EventActor& actor);
    EventActor actor(const serve::Client& client) const;

    DaemonOptions options_;
    archive::ServerFolders folders_;
    serve::StreamHub hub_;
    archive::RunCatalogue catalogue_;
    JobQueue queue_;
    std::atomic<std::uint64_t> next_client_ { 1 };
    access::AuthLimiter auth_limiter_;
    archive::ReplayManager replays_; // posts its openings to disk_
    // Last, so that its tasks (which touch the parts above) stop before anything else goes.
    serve::TaskThreads disk_;
};

} // namespace fulcrum::daemon
