#include "daemon/daemon.h"

#include "balance/policy_registry.h"
#include "common/error.h"
#include "daemon/confine_paths.h"
#include "daemon/job_runtime.h"
#include "daemon/replay_session.h"
#include "db/run_reader.h"
#include "db/run_recorder.h"
#include "protocol/codec.h"
#include "scenario/scenario.h"
#include "sched/placement.h"

#include <algorithm>
#include <set>
#include <sstream>

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

// The reply to a request whose handling threw: the error's class names the code.
Reply failure_of(const std::string& id, std::exception_ptr error)
{
    try {
        std::rethrow_exception(std::move(error));
    } catch (const OutsidePath& e) {
        return failure(id, "illegal-value", e.what(), e.field());
    } catch (const RefusedRequest& e) {
        return failure(id, e.code(), e.what());
    } catch (const InputError& e) {
        return failure(id, "invalid-scenario", e.what(), e.field());
    } catch (const std::exception& e) {
        return failure(id, "internal", e.what());
    }
}

bool is_command(const ClientMessage& m)
{
    return std::holds_alternative<SubmitJob>(m) || std::holds_alternative<JobCommand>(m)
        || std::holds_alternative<ChangeJob>(m) || std::holds_alternative<WorkerCommand>(m);
}

// One GPU per local worker (remote workers run where they were started), each worker a
// whole GPU unless the scenario asks for less.
GpuDemand demand_of(const scenario::Scenario& s, const sched::ClusterSpec& cluster)
{
    GpuDemand demand;
    demand.workers
        = static_cast<int>(std::count_if(s.workers.begin(), s.workers.end(), [](const auto& w) { return !w.remote; }));
    demand.memory_gb = s.placement_memory_gb.value_or(cluster.gpu_memory_gb);
    return demand;
}

std::string run_store_name(JobId id)
{
    return "job-" + std::to_string(id) + ".db";
}

// Job ids go on from the largest job-N.db in the runs folder, so a restarted fulcrumd never
// hands out an id (and a run store) that an earlier one used.
JobId first_free_job_id(const std::filesystem::path& runs)
{
    JobId last = 0;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(runs, ec))
        if (const auto job = job_of_file(entry.path().filename().string(), ".db"))
            last = std::max(last, *job);
    return last + 1;
}

} // namespace

Daemon::Daemon(DaemonOptions options)
    : options_(std::move(options))
    , folders_(options_.data_dir, options_.folders)
    , journal_(options_.data_dir / "jobs")
    , cluster_(options_.cluster, options_.placement)
{
    next_job_ = first_free_job_id(folders_.home(FolderKind::Runs));
    for (const JobJournal::Entry& e : journal_.entries())
        next_job_ = std::max(next_job_, e.job + 1);
}

Daemon::~Daemon()
{
    stop_all();
}

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
        opening_.erase(client.id());
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
        client.send(failure(id, "not-authorized",
            "a worker token only joins jobs (join-job); '" + std::string(type_name(message))
                + "' needs a viewer or operator token"));
        return After::KeepOpen;
    }
    if (join && client.role() == Role::Viewer) {
        client.send(
            failure(id, "not-authorized", "'join-job' needs a worker or operator token; this client is a viewer"));
        return After::KeepOpen;
    }
    if (is_command(message) && client.role() != Role::Operator) {
        client.send(failure(id, "not-authorized",
            "'" + std::string(type_name(message)) + "' needs the operator role; this client is a viewer"));
        return After::KeepOpen;
    }
    try {
        handle(client, message);
    } catch (...) {
        client.send(failure_of(id, std::current_exception()));
    }
    return After::KeepOpen;
}

void Daemon::handle(Client& client, const ClientMessage& message)
{
    std::visit([&](const auto& m) { on(client, m); }, message);
}

void Daemon::on(Client&, const Hello&)
{
    // receive() answers hello before anything else; one that comes again changes nothing.
}

void Daemon::on(Client& client, const Subscribe& s)
{
    if (s.job)
        job(*s.job); // unknown-job before subscribing
    client.subscribe(s);
    client.send(ok(s.id));
    send_snapshot(client, s);
}

void Daemon::on(Client& client, const Unsubscribe& u)
{
    if (!client.unsubscribe(u.id))
        throw RefusedRequest("unknown-subscription", "no subscription '" + u.id + "'");
    client.send(ok(u.id));
}

void Daemon::on(Client& client, const ListJobs& l)
{
    Reply reply = ok(l.id);
    reply.jobs = jobs();
    client.send(reply);
}

void Daemon::on(Client& client, const SubmitJob& submit_job)
{
    // The job is written to the journal (an fsync) before the reply: disk work, off the I/O
    // threads.
    disk_.post([this, client = client.shared_from_this(), submit_job] {
        try {
            const JobId id = submit(submit_job.scenario_json, "submit-job from " + client->name(), Origin::Client);
            client->send(ok(submit_job.id, id));
        } catch (...) {
            client->send(failure_of(submit_job.id, std::current_exception()));
        }
    });
}

void Daemon::on(Client& client, const JobCommand& c)
{
    JobRuntime& j = job(c.job);
    switch (c.action) {
    case JobAction::Cancel:
        cancel(c.job, actor(client));
        break;
    case JobAction::Pause:
        j.pause(actor(client));
        break;
    case JobAction::Resume:
        if (j.resumable()) { // an interrupted job goes on from its checkpoint
            std::lock_guard lock(mutex_);
            queue_resumed(c.job, actor(client));
            start_queued();
            publish_cluster();
        } else {
            j.resume(actor(client));
        }
        break;
    }
    client.send(ok(c.id, c.job));
}

void Daemon::on(Client& client, const ChangeJob& change)
{
    try {
        job(change.job).change(change.setting, change.spec_json, actor(client));
    } catch (const InputError& e) { // the spec itself: a field of the policy or sync section
        client.send(failure(change.id, "illegal-value", e.what(), e.field()));
        return;
    }
    client.send(ok(change.id, change.job));
}

void Daemon::on(Client& client, const WorkerCommand& w)
{
    job(w.job).command(w, actor(client));
    client.send(ok(w.id, w.job));
}

void Daemon::on(Client& client, const ListCapabilities& l)
{
    // From the registries this fulcrumd was built with: a client lists only what it has.
    const auto listed = [](const std::vector<CatalogueEntry>& entries) {
        std::vector<Capability> out;
        for (const CatalogueEntry& e : entries)
            out.push_back({ e.name, e.description });
        return out;
    };
    Reply reply = ok(l.id);
    reply.capabilities = Capabilities { listed(balance::policy_catalogue()), listed(sync::sync_catalogue()),
        listed(predict::predictor_catalogue()), listed(sched::placement_catalogue()) };
    client.send(reply);
}

void Daemon::on(Client& client, const ListRuns& r)
{
    // Every run store is opened and read: disk work, off the I/O threads.
    disk_.post([this, client = client.shared_from_this(), id = r.id] {
        try {
            Reply reply = ok(id);
            reply.runs = runs();
            client->send(reply);
        } catch (...) {
            client->send(failure_of(id, std::current_exception()));
        }
    });
}

void Daemon::on(Client& client, const JoinJob& join)
{
    JobRuntime& j = job(join.job);
    if (!j.remote())
        throw RefusedRequest("no-remote-slot",
            "job " + std::to_string(join.job) + " has no remote worker slots (a scenario marks them \"remote\": true)");
    {
        std::lock_guard lock(mutex_);
        if (remote_workers_.contains(client.id()))
            throw RefusedRequest("already-joined",
                "this connection already computes for job " + std::to_string(remote_workers_[client.id()])
                    + "; one connection is one worker");
    }
    const WorkerId worker
        = j.remote()->join(client.shared_from_this(), join.worker, join.host.empty() ? client.name() : join.host);
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
    std::filesystem::path path;
    try {
        path = folders_.resolve(FolderKind::Runs, database, "open-replay", "database");
    } catch (const OutsidePath& e) {
        throw RefusedRequest("unknown-run", e.reason() + "; list-runs gives the names");
    }
    if (!std::filesystem::is_regular_file(path))
        throw RefusedRequest("unknown-run", "there is no run store '" + database + "'");
    return path;
}

void Daemon::on(Client& client, const OpenReplay& open)
{
    const auto path = run_store(open.database);
    std::int64_t id = 0;
    {
        std::lock_guard lock(replays_mutex_);
        const auto mine = std::count_if(replays_.begin(), replays_.end(), [&](const auto& r) {
            return r.second->client() == client.id();
        }) + opening_[client.id()];
        if (mine >= options_.replays_per_client)
            throw RefusedRequest("too-many-replays",
                "this client already has " + std::to_string(mine) + " replays open; close one first (close-replay)");
        id = next_replay_++;
        ++opening_[client.id()];
    }
    // Opening reads the run store (its runs, rows and events): disk work, off the I/O threads.
    disk_.post([this, id, path, open, client = client.shared_from_this()] {
        std::unique_ptr<ReplaySession> session;
        try {
            try {
                session = std::make_unique<ReplaySession>(id, client, path, open.database, open);
            } catch (const InputError& e) {
                throw RefusedRequest(e.field() == "run" ? "unknown-run" : "unreadable-run-store", e.what());
            }
        } catch (...) {
            {
                std::lock_guard lock(replays_mutex_);
                if (const auto it = opening_.find(client->id()); it != opening_.end())
                    --it->second;
            }
            client->send(failure_of(open.id, std::current_exception()));
            return;
        }
        Reply reply = ok(open.id);
        reply.replay = id;
        client->send(reply);
        session->start();
        std::unique_lock lock(replays_mutex_);
        const auto it = opening_.find(client->id());
        if (it == opening_.end()) { // the client left meanwhile: its replay ends here
            lock.unlock();
            return;
        }
        --it->second;
        replays_[id] = std::move(session);
    });
}

void Daemon::on(Client& client, const ReplayCommand& command)
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
    std::set<std::string> names; // a name found in an earlier folder hides the same name later on
    for (const auto& folder : folders_.roots(FolderKind::Runs)) {
        std::vector<std::filesystem::path> here;
        std::error_code ec;
        for (const auto& entry : std::filesystem::directory_iterator(folder, ec))
            if (entry.is_regular_file() && entry.path().extension() == ".db"
                && names.insert(entry.path().filename().string()).second)
                here.push_back(entry.path());
        std::sort(here.begin(), here.end());
        files.insert(files.end(), here.begin(), here.end());
    }
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
            l.status = "unreadable: " + folders_.for_clients(e.what());
            out.push_back(std::move(l));
        }
    }
    return out;
}

void Daemon::send_snapshot(Client& client, const Subscribe& s)
{
    const auto wants = [&](protocol::Stream stream) {
        return s.streams.empty() || std::find(s.streams.begin(), s.streams.end(), stream) != s.streams.end();
    };
    std::vector<JobRuntime*> selected;
    {
        std::lock_guard lock(mutex_);
        for (const auto& [id, j] : jobs_)
            if (!s.job || *s.job == id)
                selected.push_back(j.get());
    }
    if (wants(protocol::Stream::Cluster))
        client.send(ClusterUpdate { cluster() });
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

JobId Daemon::submit(const std::string& scenario_json, const std::string& source, Origin origin)
{
    scenario::Scenario s = scenario::parse_scenario(scenario_json, source);
    if (origin == Origin::Client)
        confine_paths(s, folders_);
    const GpuDemand demand = demand_of(s, options_.cluster);
    if (const std::string why = cluster_.impossible(demand); !why.empty())
        throw InputError(source,
            s.placement_memory_gb && demand.memory_gb > options_.cluster.gpu_memory_gb ? "placement.memory_gb"
                                                                                       : "workers",
            why);
    std::lock_guard lock(mutex_);
    if (stopping_)
        throw RefusedRequest("shutting-down", "fulcrumd is shutting down");
    const JobId id = next_job_++;
    // On disk before the submission is answered: a crash from here on loses no job.
    journal_.add(id, origin == Origin::Local ? JobJournal::Origin::Local : JobJournal::Origin::Client, scenario_json);
    const auto database = folders_.home(FolderKind::Runs) / run_store_name(id);
    auto runtime = std::make_unique<JobRuntime>(
        id, std::move(s), database, folders_, hub_, [this](JobId done) { on_job_done(done); });
    std::ostringstream asks;
    asks << "submitted: " << demand.workers << (demand.workers == 1 ? " GPU" : " GPUs") << " with " << demand.memory_gb
         << " GB each, " << cluster_.room_for(demand) << " with room now; " << queued_.size() << " job"
         << (queued_.size() == 1 ? "" : "s") << " ahead";
    runtime->scheduler_event("job-queued", asks.str());
    jobs_[id] = std::move(runtime);
    queued_.push_back(id);
    start_queued();
    publish_cluster(); // the queue changed, whether or not the job was placed
    return id;
}

void Daemon::cancel(JobId id, const std::string& actor)
{
    JobRuntime& runtime = job(id);
    std::lock_guard lock(mutex_);
    if (const auto it = std::find(queued_.begin(), queued_.end(), id); it != queued_.end()) {
        queued_.erase(it);
        runtime.cancel_queued(actor); // it held no GPUs: nothing behind it fits any better now
        journal_.remove(id);
        publish_cluster();
        return;
    }
    if (runtime.resumable()) { // interrupted, waiting for an operator's resume-job
        runtime.cancel_queued(actor);
        journal_.remove(id);
        return;
    }
    runtime.cancel(actor);
}

std::vector<Daemon::Recovered> Daemon::recover()
{
    std::vector<Recovered> found;
    std::vector<std::string> problems;
    const std::vector<JobJournal::Entry> entries = journal_.entries(&problems);
    for (const std::string& p : problems)
        found.push_back({ 0, p });
    for (const JobJournal::Entry& entry : entries) {
        const JobId id = entry.job;
        const std::filesystem::path path = folders_.home(FolderKind::Runs) / run_store_name(id);
        std::optional<run::RunOptions::Resume> resume;
        std::optional<RunId> abandoned; // a run without a checkpoint: the job starts again in a new one
        if (std::filesystem::exists(path)) {
            try {
                db::RunReader reader(path);
                const auto runs = reader.runs();
                if (!runs.empty()) {
                    const db::RunInfo& last = runs.back(); // the job's run (a restarted job's newest)
                    if (last.status != "running" && last.status != "interrupted") {
                        journal_.remove(id); // it ended; only the journal did not know yet
                        continue;
                    }
                    if (auto checkpoint = reader.checkpoint(last.id, 0))
                        resume = run::RunOptions::Resume { last.id, std::move(*checkpoint), {} };
                    else
                        abandoned = last.id;
                }
            } catch (const std::exception& e) {
                found.push_back(
                    { id, "its run store cannot be read (" + folders_.for_clients(e.what()) + "); not recovered" });
                continue;
            }
        }
        if (abandoned) {
            try {
                db::RunRecorder(path).end_run(*abandoned, "interrupted");
            } catch (const std::exception& e) {
                found.push_back(
                    { id, "its run store cannot be written (" + folders_.for_clients(e.what()) + "); not recovered" });
                continue;
            }
        }
        scenario::Scenario s;
        try {
            s = scenario::parse_scenario(entry.scenario_json, run_store_name(id));
            confine_paths(s, folders_, entry.origin == JobJournal::Origin::Local);
        } catch (const std::exception& e) {
            found.push_back(
                { id, "its scenario no longer loads (" + folders_.for_clients(e.what()) + "); not recovered" });
            continue;
        }
        std::lock_guard lock(mutex_);
        auto runtime = std::make_unique<JobRuntime>(
            id, std::move(s), path, folders_, hub_, [this](JobId done) { on_job_done(done); });
        JobRuntime& job = *runtime;
        jobs_[id] = std::move(runtime);
        if (!resume) {
            job.scheduler_event("job-queued",
                "queued again from the beginning after fulcrumd's restart: it had no checkpoint yet "
                "(or its policy keeps none); rows it recorded before stay in its run store");
            queued_.push_back(id);
            found.push_back({ id, "queued again from the beginning (no checkpoint)" });
            continue;
        }
        resume->adjust_policy = [this, local = entry.origin == JobJournal::Origin::Local, source = run_store_name(id)](
                                    balance::PolicySpec& p) { confine_paths(p, folders_, source, "policy", local); };
        const std::int64_t at = resume->checkpoint.iteration;
        const bool automatic = options_.resume == DaemonOptions::Resume::Automatic;
        job.interrupted(std::move(*resume),
            "interrupted when fulcrumd stopped; its checkpoint is at iteration " + std::to_string(at)
                + (automatic ? ": resuming" : ": resume-job goes on from it"));
        found.push_back({ id, job.status().message });
        if (automatic)
            queue_resumed(id, "system:restart");
    }
    std::lock_guard lock(mutex_);
    start_queued();
    publish_cluster();
    return found;
}

void Daemon::queue_resumed(JobId id, const std::string& actor)
{
    JobRuntime& job = *jobs_.at(id);
    if (std::find(queued_.begin(), queued_.end(), id) != queued_.end())
        return;
    job.scheduler_event("job-queued", "resuming from its checkpoint (" + actor + ")");
    queued_.push_back(id);
}

double Daemon::remaining_s(JobId id) const
{
    const auto it = jobs_.find(id);
    if (it == jobs_.end())
        return 0;
    const JobStatus s = it->second->status();
    // The run clock's mean iteration so far; before the first barrier nothing is known, and
    // the job counts one second per iteration.
    const double per_iteration = s.iteration > 0 ? s.time_s / static_cast<double>(s.iteration) : 1.0;
    return static_cast<double>(std::max<std::int64_t>(0, s.iterations - s.iteration)) * per_iteration;
}

// Every queued job in submission order, each placed if it fits now (as the scheduling
// module's simulator does): a job too large for the free GPUs waits without holding back
// the smaller ones behind it.
void Daemon::start_queued()
{
    const RemainingWork remaining = remaining_work();
    bool changed = false;
    for (auto it = queued_.begin(); it != queued_.end();) {
        JobRuntime& job = *jobs_.at(*it);
        const GpuDemand demand = demand_of(job.scenario(), options_.cluster);
        const std::vector<int> gpus = cluster_.place(job.id(), demand, remaining);
        if (demand.workers > 0 && gpus.empty()) {
            job.set_waiting("waiting for " + std::to_string(demand.workers) + " GPUs with room for a worker; "
                + std::to_string(cluster_.room_for(demand)) + " have room now");
            ++it;
            continue;
        }
        std::vector<std::int32_t> placement;
        std::size_t next = 0;
        for (const auto& w : job.scenario().workers)
            placement.push_back(w.remote ? -1 : gpus[next++]);
        job.start(std::move(placement),
            cluster_.placement() + " placed " + std::to_string(demand.workers) + " local worker"
                + (demand.workers == 1 ? "" : "s") + " on " + cluster_.describe(gpus));
        it = queued_.erase(it);
        changed = true;
    }
    if (changed)
        publish_cluster();
}

RemainingWork Daemon::remaining_work() const
{
    return [this](JobId id) { return remaining_s(id); };
}

protocol::ClusterState Daemon::cluster_state() const
{
    return cluster_.state({ queued_.begin(), queued_.end() }, remaining_work());
}

void Daemon::publish_cluster()
{
    hub_.publish(ClusterUpdate { cluster_state() });
}

protocol::ClusterState Daemon::cluster() const
{
    std::lock_guard lock(mutex_);
    return cluster_state();
}

void Daemon::on_job_done(JobId id)
{
    std::lock_guard lock(mutex_);
    if (const auto it = jobs_.find(id); it != jobs_.end()) {
        if (it->second->status().state != JobState::Interrupted) // ended: nothing to recover
            journal_.remove(id);
        std::vector<int> gpus;
        for (const std::int32_t g : it->second->status().placement)
            if (g >= 0)
                gpus.push_back(g);
        EventRecord released;
        released.job = id;
        released.kind = "job-released";
        released.message = cluster_.describe(gpus) + " free again";
        released.actor = "scheduler at " + db::utc_timestamp();
        hub_.publish(Event { released });
    }
    cluster_.release(id);
    if (!stopping_)
        start_queued();
    publish_cluster();
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
