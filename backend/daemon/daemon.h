#pragma once

#include "daemon/cluster_book.h"
#include "daemon/disk_work.h"
#include "daemon/job_journal.h"
#include "daemon/server_folders.h"
#include "daemon/stream_hub.h"
#include "protocol/messages.h"

#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace fulcrum::daemon {

class JobRuntime;
class ReplaySession;

struct DaemonOptions {
    std::filesystem::path data_dir = "fulcrum-data"; // run stores go to DATA_DIR/runs/
    FolderOptions folders; // where clients' data set and model names are looked up
    // The GPUs (worker slots) jobs are placed on, and the scheduling module's placement
    // policy that picks them: rand, ff, ls or lwf-K.
    sched::ClusterSpec cluster; // 16 servers of 4 GPUs with 16 GB
    std::string placement = "lwf-1";
    std::size_t client_queue = 1024; // frames a client may fall behind before rows are dropped
    int replays_per_client = 4;
    std::string server_name = "fulcrumd";
    // Jobs an earlier fulcrumd was running when it died or was stopped: recover() queues them
    // to go on from their checkpoints (automatic), or lists them as interrupted until an
    // operator's resume-job (manual).
    enum class Resume { Automatic, Manual } resume = Resume::Automatic;
};

// What fulcrumd is apart from its sockets: the jobs, the clients and the protocol's
// request handling. The WebSocket server feeds it frames; tests call it directly.
class Daemon {
public:
    explicit Daemon(DaemonOptions options);
    ~Daemon(); // cancels every job at its next barrier and waits: recorded data is flushed
    Daemon(const Daemon&) = delete;
    Daemon& operator=(const Daemon&) = delete;

    std::shared_ptr<Client> connect(protocol::Role role, std::string name);
    void disconnect(const Client& client);

    enum class After { KeepOpen, Close };
    // One frame from a client: decoded, checked (version, role, fields) and handled; the
    // reply and any snapshot go to the client's queue. Never throws for bad input.
    After receive(Client& client, std::string_view frame);
    // One binary frame from a joined remote worker (a result). Anything else gets an
    // `error` message; the connection stays open.
    void receive_binary(Client& client, std::string_view frame);

    // Who gave a scenario: a client over the protocol (its paths are names inside the
    // server's folders) or the operator on fulcrumd's command line (any path).
    enum class Origin { Client, Local };
    // A job from a scenario's JSON text: queued, then placed on the cluster by the placement
    // policy and started as soon as its workers fit (a job that does not fit yet does not
    // hold back the jobs behind it). Throws InputError naming the field, also for a job
    // that could never fit this cluster, and OutsidePath for a client's path that leaves
    // the server's folders.
    JobId submit(const std::string& scenario_json, const std::string& source, Origin origin = Origin::Client);
    // A queued job leaves the queue at once, stopped; a placed one ends at its next barrier.
    // Throws RefusedRequest ("unknown-job").
    void cancel(JobId job, const std::string& actor);
    std::vector<protocol::JobStatus> jobs() const;
    protocol::ClusterState cluster() const;
    // The run stores in DATA_DIR/runs and their runs; a file that cannot be read is listed
    // with its reason as the status.
    std::vector<protocol::RunListing> runs() const;
    void stop_all();
    // After a crash or a restart: every job the journal holds (accepted, not ended) becomes
    // its job again under its own id. One whose run store has a checkpoint is interrupted
    // and (automatic resume) queued to go on from it in the same run; one with none (it had
    // not reached its first checkpoint, or its sync model keeps none) is queued again from
    // the beginning, its earlier rows kept. Returns what was found, each with what became of
    // it (a journal entry that cannot be used is named with job 0).
    struct Recovered {
        JobId job = 0;
        std::string message;
        bool operator==(const Recovered&) const = default;
    };
    std::vector<Recovered> recover();
    StreamHub& hub() { return hub_; }
    const DaemonOptions& options() const { return options_; }
    const ServerFolders& folders() const { return folders_; }

private:
    // One handler per client message, chosen by std::visit: a message without one does not
    // compile. Each replies to the request or throws (RefusedRequest, InputError, OutsidePath).
    void handle(Client& client, const protocol::ClientMessage& message);
    void on(Client& client, const protocol::Hello& hello);
    void on(Client& client, const protocol::Subscribe& subscribe);
    void on(Client& client, const protocol::Unsubscribe& unsubscribe);
    void on(Client& client, const protocol::ListJobs& list);
    void on(Client& client, const protocol::SubmitJob& submit_job);
    void on(Client& client, const protocol::JobCommand& command);
    void on(Client& client, const protocol::ChangeJob& change);
    void on(Client& client, const protocol::WorkerCommand& command);
    void on(Client& client, const protocol::ListRuns& list);
    void on(Client& client, const protocol::OpenReplay& open);
    void on(Client& client, const protocol::ReplayCommand& command);
    void on(Client& client, const protocol::JoinJob& join);
    void on(Client& client, const protocol::ListCapabilities& list);
    void send_snapshot(Client& client, const protocol::Subscribe& subscription);
    JobRuntime& job(JobId id) const; // throws RefusedRequest("unknown-job")
    void start_queued(); // with mutex_ held: places what fits, in submission order
    void publish_cluster(); // with mutex_ held
    double remaining_s(JobId id) const; // with mutex_ held: a job's estimated compute still to run
    RemainingWork remaining_work() const; // remaining_s, for the cluster book (mutex_ held)
    protocol::ClusterState cluster_state() const; // with mutex_ held
    void on_job_done(JobId id);
    std::string actor(const Client& client) const;
    void queue_resumed(JobId id, const std::string& actor); // with mutex_ held
    std::filesystem::path run_store(const std::string& database) const; // throws RefusedRequest

    DaemonOptions options_;
    ServerFolders folders_;
    JobJournal journal_;
    StreamHub hub_;
    mutable std::mutex mutex_;
    std::map<JobId, std::unique_ptr<JobRuntime>> jobs_;
    std::deque<JobId> queued_;
    ClusterBook cluster_;
    JobId next_job_ = 1;
    std::mutex replays_mutex_;
    std::map<std::int64_t, std::unique_ptr<ReplaySession>> replays_;
    std::map<std::uint64_t, int> opening_; // replays each client is opening on the disk threads (replays_mutex_)
    std::int64_t next_replay_ = 1;
    std::map<std::uint64_t, JobId> remote_workers_; // worker clients and the job each joined (mutex_)
    std::uint64_t next_client_ = 1;
    bool stopping_ = false;
    // Last, so it stops (its tasks touch the members above) before anything else goes.
    DiskWork disk_;
};

} // namespace fulcrum::daemon
