#include "daemon/daemon.h"

#include "common/error.h"
#include "daemon/job_runtime.h"
#include "daemon/replay_session.h"
#include "db/run_reader.h"
#include "db/run_recorder.h"
#include "protocol/codec.h"
#include "scenario/scenario.h"

#include <algorithm>

namespace fulcrum::daemon {

using namespace protocol;

namespace {

Reply ok(const std::string& id, std::optional<JobId> job = std::nullopt)
{
    Reply r;
    r.id = id;
    r.job = job;
    return r;
}

Reply failure(const std::string& id, ErrorInfo error)
{
    Reply r;
    r.id = id;
    r.error = std::move(error);
    return r;
}

Reply failure(const std::string& id, std::string code, std::string message, std::string field = {})
{
    return failure(id, ErrorInfo { std::move(code), std::move(message), std::move(field) });
}

bool is_command(const ClientMessage& m)
{
    return std::holds_alternative<SubmitJob>(m) || std::holds_alternative<JobCommand>(m) || std::holds_alternative<ChangeJob>(m)
        || std::holds_alternative<WorkerCommand>(m);
}

} // namespace

Daemon::Daemon(DaemonOptions options)
    : options_(std::move(options))
{
    std::error_code ec;
    std::filesystem::create_directories(options_.data_dir / "runs", ec);
    if (ec)
        throw InputError(options_.data_dir.string(), "", "cannot create the data folder: " + ec.message());
}

Daemon::~Daemon() { stop_all(); }

void Daemon::stop_all()
{
    std::vector<JobRuntime*> running;
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        queued_.clear();
        for (auto& [id, job] : jobs_)
            running.push_back(job.get());
    }
    for (JobRuntime* job : running)
        job->cancel("system:shutdown");
    for (JobRuntime* job : running)
        job->join();
}

std::shared_ptr<Client> Daemon::connect(Role role, std::string name)
{
    std::uint64_t id = 0;
    {
        std::lock_guard lock(mutex_);
        id = next_client_++;
    }
    auto client = std::make_shared<Client>(id, role, std::move(name), options_.client_queue);
    hub_.add(client);
    return client;
}

void Daemon::disconnect(const Client& client)
{
    hub_.remove(client.id());
    std::shared_ptr<RemotePool> pool;
    {
        std::lock_guard lock(mutex_);
        if (const auto it = remote_workers_.find(client.id()); it != remote_workers_.end()) {
            if (const auto job_it = jobs_.find(it->second); job_it != jobs_.end())
                pool = job_it->second->remote();
            remote_workers_.erase(it);
        }
    }
    if (pool)
        pool->leave(client); // a task in flight is lost: the trainer drops the worker from its barrier
    std::vector<std::unique_ptr<ReplaySession>> closing;
    {
        std::lock_guard lock(replays_mutex_);
        for (auto it = replays_.begin(); it != replays_.end();)
            if (it->second->client() == client.id()) {
                closing.push_back(std::move(it->second));
                it = replays_.erase(it);
            } else {
                ++it;
            }
    }
    // Destroyed here, outside the lock: each joins its thread.
}

std::string Daemon::actor(const Client& client) const
{
    return std::string(to_string(client.role())) + ":" + client.name() + " at " + db::utc_timestamp();
}

Daemon::After Daemon::receive(Client& client, std::string_view frame)
{
    const Decoded<ClientMessage> decoded = decode_client(frame);
    if (!decoded) {
        if (decoded.request_id.empty())
            client.send(ProtocolError { decoded.error });
        else
            client.send(failure(decoded.request_id, decoded.error));
        return After::KeepOpen;
    }
    const ClientMessage& message = *decoded.message;
    if (const auto* hello = std::get_if<Hello>(&message)) {
        if (hello->version != kProtocolVersion) {
            client.send(ProtocolError { { "version-mismatch",
                "this server speaks protocol version " + std::to_string(kProtocolVersion) + ", the client "
                    + std::to_string(hello->version),
                "version" } });
            return After::Close;
        }
        client.set_greeted();
        client.send(Welcome { kProtocolVersion, options_.server_name, client.role() });
        return After::KeepOpen;
    }
    const std::string& id = decoded.request_id;
    if (!client.greeted()) {
        client.send(failure(id, "hello-first", "send hello with the protocol version before anything else"));
        return After::KeepOpen;
    }
    const bool join = std::holds_alternative<JoinJob>(message);
    if (client.role() == Role::Worker && !join) {
        client.send(failure(id, "not-authorized", "a worker token only joins jobs (join-job); '" + std::string(type_name(message))
            + "' needs a viewer or operator token"));
        return After::KeepOpen;
    }
    if (join && client.role() == Role::Viewer) {
        client.send(failure(id, "not-authorized", "'join-job' needs a worker or operator token; this client is a viewer"));
        return After::KeepOpen;
    }
    if (is_command(message) && client.role() != Role::Operator) {
        client.send(failure(id, "not-authorized", "'" + std::string(type_name(message)) + "' needs the operator role; this client is a viewer"));
        return After::KeepOpen;
    }
    try {
        handle(client, message);
    } catch (const RefusedRequest& e) {
        client.send(failure(id, e.code(), e.what()));
    } catch (const InputError& e) {
        client.send(failure(id, "invalid-scenario", e.what(), e.field()));
    } catch (const std::exception& e) {
        client.send(failure(id, "internal", e.what()));
    }
    return After::KeepOpen;
}

void Daemon::handle(Client& client, const ClientMessage& message)
{
    if (const auto* s = std::get_if<Subscribe>(&message)) {
        if (s->job)
            job(*s->job); // unknown-job before subscribing
        client.subscribe(*s);
        client.send(ok(s->id));
        send_snapshot(client, *s);
    } else if (const auto* u = std::get_if<Unsubscribe>(&message)) {
        if (!client.unsubscribe(u->id))
            throw RefusedRequest("unknown-subscription", "no subscription '" + u->id + "'");
        client.send(ok(u->id));
    } else if (const auto* l = std::get_if<ListJobs>(&message)) {
        Reply reply = ok(l->id);
        reply.jobs = jobs();
        client.send(reply);
    } else if (const auto* submit_job = std::get_if<SubmitJob>(&message)) {
        const JobId id = submit(submit_job->scenario_json, "submit-job from " + client.name());
        client.send(ok(submit_job->id, id));
    } else if (const auto* c = std::get_if<JobCommand>(&message)) {
        JobRuntime& j = job(c->job);
        switch (c->action) {
        case JobAction::Cancel:
            j.cancel(actor(client));
            break;
        case JobAction::Pause:
            j.pause(actor(client));
            break;
        case JobAction::Resume:
            j.resume(actor(client));
            break;
        }
        client.send(ok(c->id, c->job));
    } else if (const auto* change = std::get_if<ChangeJob>(&message)) {
        try {
            job(change->job).change(change->setting, change->spec_json, actor(client));
        } catch (const InputError& e) { // the spec itself: a field of the policy or sync section
            client.send(failure(change->id, "illegal-value", e.what(), e.field()));
            return;
        }
        client.send(ok(change->id, change->job));
    } else if (const auto* w = std::get_if<WorkerCommand>(&message)) {
        job(w->job).command(*w, actor(client));
        client.send(ok(w->id, w->job));
    } else if (const auto* r = std::get_if<ListRuns>(&message)) {
        Reply reply = ok(r->id);
        reply.runs = runs();
        client.send(reply);
    } else if (const auto* o = std::get_if<OpenReplay>(&message)) {
        open_replay(client, *o);
    } else if (const auto* rc = std::get_if<ReplayCommand>(&message)) {
        replay_command(client, *rc);
    } else if (const auto* jj = std::get_if<JoinJob>(&message)) {
        join_job(client, *jj);
    }
}

void Daemon::join_job(Client& client, const JoinJob& join)
{
    JobRuntime& j = job(join.job);
    if (!j.remote())
        throw RefusedRequest("no-remote-slot", "job " + std::to_string(join.job) + " has no remote worker slots (a scenario marks them \"remote\": true)");
    {
        std::lock_guard lock(mutex_);
        if (remote_workers_.contains(client.id()))
            throw RefusedRequest("already-joined", "this connection already computes for job " + std::to_string(remote_workers_[client.id()])
                + "; one connection is one worker");
    }
    const WorkerId worker = j.remote()->join(client.shared_from_this(), join.worker, join.host.empty() ? client.name() : join.host);
    {
        std::lock_guard lock(mutex_);
        remote_workers_[client.id()] = join.job;
    }
    Reply reply = ok(join.id, join.job);
    reply.assignment = WorkerAssignment { join.job, worker, j.scenario().json, 0 };
    client.send(reply);
}

void Daemon::receive_binary(Client& client, std::string_view frame)
{
    std::shared_ptr<RemotePool> pool;
    {
        std::lock_guard lock(mutex_);
        const auto it = remote_workers_.find(client.id());
        if (it != remote_workers_.end())
            if (const auto job_it = jobs_.find(it->second); job_it != jobs_.end())
                pool = job_it->second->remote();
    }
    std::string error = "binary frames are results of a joined remote worker; send join-job first";
    if (pool && pool->deliver(client, frame, &error))
        return;
    client.send(ProtocolError { { "unexpected-binary-frame", error, "" } });
}

// Only a plain file name in DATA_DIR/runs: a client cannot reach other files.
std::filesystem::path Daemon::run_store(const std::string& database) const
{
    const std::filesystem::path name(database);
    if (database.empty() || name.has_parent_path() || name.filename() != name || database == "." || database == ".."
        || database.find('\\') != std::string::npos)
        throw RefusedRequest("unknown-run", "'" + database + "' is not a run store name; list-runs gives the names");
    const auto path = options_.data_dir / "runs" / name;
    if (!std::filesystem::is_regular_file(path))
        throw RefusedRequest("unknown-run", "there is no run store '" + database + "'");
    return path;
}

void Daemon::open_replay(Client& client, const OpenReplay& open)
{
    const auto path = run_store(open.database);
    std::int64_t id = 0;
    {
        std::lock_guard lock(replays_mutex_);
        const auto mine = std::count_if(replays_.begin(), replays_.end(), [&](const auto& r) { return r.second->client() == client.id(); });
        if (mine >= options_.replays_per_client)
            throw RefusedRequest("too-many-replays", "this client already has " + std::to_string(mine)
                + " replays open; close one first (close-replay)");
        id = next_replay_++;
    }
    std::unique_ptr<ReplaySession> session;
    try {
        session = std::make_unique<ReplaySession>(id, client.shared_from_this(), path, open.database, open);
    } catch (const InputError& e) {
        throw RefusedRequest(e.field() == "run" ? "unknown-run" : "unreadable-run-store", e.what());
    }
    Reply reply = ok(open.id);
    reply.replay = id;
    client.send(reply);
    session->start();
    std::lock_guard lock(replays_mutex_);
    replays_[id] = std::move(session);
}

void Daemon::replay_command(Client& client, const ReplayCommand& command)
{
    std::unique_ptr<ReplaySession> closed;
    {
        std::lock_guard lock(replays_mutex_);
        const auto it = replays_.find(command.replay);
        if (it == replays_.end() || it->second->client() != client.id())
            throw RefusedRequest("unknown-replay", "this client has no replay " + std::to_string(command.replay));
        it->second->check(command);
        client.send(ok(command.id)); // the reply goes before anything the command makes the replay send
        it->second->command(command);
        if (command.action == ReplayAction::Close) {
            closed = std::move(it->second);
            replays_.erase(it);
        }
    }
}

std::vector<RunListing> Daemon::runs() const
{
    std::vector<std::filesystem::path> files;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(options_.data_dir / "runs", ec))
        if (entry.is_regular_file() && entry.path().extension() == ".db")
            files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    std::vector<RunListing> out;
    for (const auto& file : files) {
        const std::string database = file.filename().string();
        try {
            db::RunReader reader(file);
            for (const db::RunInfo& run : reader.runs()) {
                RunListing l { database, run.id, run.name, run.mode, run.status, run.started_at, run.finished_at };
                l.jobs = static_cast<int>(reader.jobs(run.id).size());
                l.iterations = reader.iteration_count(run.id);
                l.rows = reader.iteration_row_count(run.id);
                out.push_back(std::move(l));
            }
        } catch (const std::exception& e) {
            RunListing l;
            l.database = database;
            l.status = std::string("unreadable: ") + e.what();
            out.push_back(std::move(l));
        }
    }
    return out;
}

void Daemon::send_snapshot(Client& client, const Subscribe& s)
{
    const auto wants = [&](protocol::Stream stream) { return s.streams.empty() || std::find(s.streams.begin(), s.streams.end(), stream) != s.streams.end(); };
    std::vector<JobRuntime*> selected;
    {
        std::lock_guard lock(mutex_);
        for (const auto& [id, j] : jobs_)
            if (!s.job || *s.job == id)
                selected.push_back(j.get());
    }
    for (JobRuntime* j : selected) {
        if (wants(protocol::Stream::Jobs))
            client.send(JobUpdate { j->status() });
        if (wants(protocol::Stream::Workers))
            client.send(WorkerUpdate { j->id(), j->worker_states() });
        if (wants(protocol::Stream::Iterations))
            if (auto rows = j->last_rows()) {
                if (!s.workers.empty())
                    std::erase_if(rows->rows, [&](const IterationRecord& r) {
                        return std::find(s.workers.begin(), s.workers.end(), r.worker) == s.workers.end();
                    });
                client.send(*rows);
            }
    }
    client.send(SnapshotEnd { s.id });
}

JobRuntime& Daemon::job(JobId id) const
{
    std::lock_guard lock(mutex_);
    const auto it = jobs_.find(id);
    if (it == jobs_.end())
        throw RefusedRequest("unknown-job", "there is no job " + std::to_string(id));
    return *it->second;
}

JobId Daemon::submit(const std::string& scenario_json, const std::string& source)
{
    scenario::Scenario s = scenario::parse_scenario(scenario_json, source);
    if (static_cast<int>(s.workers.size()) > options_.worker_slots)
        throw InputError(source, "workers", "asks for " + std::to_string(s.workers.size()) + " workers; the cluster has "
            + std::to_string(options_.worker_slots) + " worker slots");
    std::lock_guard lock(mutex_);
    if (stopping_)
        throw RefusedRequest("shutting-down", "fulcrumd is shutting down");
    const JobId id = next_job_++;
    const auto database = options_.data_dir / "runs" / ("job-" + std::to_string(id) + ".db");
    jobs_[id] = std::make_unique<JobRuntime>(id, std::move(s), database, hub_, [this](JobId done) { on_job_done(done); });
    queued_.push_back(id);
    start_queued();
    return id;
}

// FIFO on worker slots: the head waits until its workers fit, and so does everyone behind it.
void Daemon::start_queued()
{
    while (!queued_.empty()) {
        JobRuntime& head = *jobs_.at(queued_.front());
        if (slots_in_use_ + head.workers() > options_.worker_slots)
            return;
        slots_in_use_ += head.workers();
        holding_[head.id()] = head.workers();
        queued_.pop_front();
        head.start();
    }
}

void Daemon::on_job_done(JobId id)
{
    std::lock_guard lock(mutex_);
    if (const auto it = holding_.find(id); it != holding_.end()) {
        slots_in_use_ -= it->second;
        holding_.erase(it);
    }
    if (!stopping_)
        start_queued();
}

std::vector<JobStatus> Daemon::jobs() const
{
    std::vector<JobStatus> out;
    std::lock_guard lock(mutex_);
    for (const auto& [id, j] : jobs_)
        out.push_back(j->status());
    return out;
}

} // namespace fulcrum::daemon
