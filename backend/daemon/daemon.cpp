#include "daemon/daemon.h"

#include "balance/policy_registry.h"
#include "common/error.h"
#include "daemon/job_runtime.h"
#include "db/run_recorder.h"
#include "log/log.h"
#include "model/model_factory.h"
#include "protocol/codec.h"
#include "sched/comm_policy.h"
#include "sched/elastic_simulator.h"
#include "sched/placement.h"
#include "serve/metrics.h"
#include "serve/replies.h"
#include "sync/barrier_window.h"

#include <algorithm>
#include <iterator>

namespace fulcrum::daemon {

using serve::Client;
using serve::DaemonMetrics;
using serve::failure;
using serve::failure_of;
using serve::IoPath;
using serve::JobMetrics;
using serve::ok;
using serve::prometheus_exposition;

using namespace protocol;

namespace {

template <class T, class... Of> constexpr bool one_of = (std::is_same_v<T, Of> || ...);

// A message of one of these kinds.
template <class... Of> bool holds_one_of(const ClientMessage& m)
{
    return std::visit([](const auto& x) { return one_of<std::decay_t<decltype(x)>, Of...>; }, m);
}

bool is_command(const ClientMessage& m)
{
    return holds_one_of<SubmitJob, SubmitWorkload, JobCommand, ChangeJob, WorkerCommand, ResizeJob, SetClusterPolicy>(
        m);
}

// The live job a message acts on or reads, if it names one (a replay's job is a recorded
// one: open-replay checks its store's tenant instead).
std::optional<JobId> live_job_of(const ClientMessage& m)
{
    return std::visit(
        [](const auto& x) -> std::optional<JobId> {
            if constexpr (one_of<std::decay_t<decltype(x)>, Subscribe, JobCommand, ChangeJob, ResizeJob, WorkerCommand,
                              JoinJob, ReportIteration>)
                return x.job;
            else
                return std::nullopt;
        },
        m);
}

} // namespace

Daemon::Daemon(DaemonOptions options)
    : options_(std::move(options))
    , folders_(options_.data_dir, options_.folders)
    , catalogue_(folders_)
    , queue_(options_, folders_, catalogue_, hub_)
    , auth_limiter_(access::AuthLimiter::Options { .failures = options_.auth_limit })
    , replays_(catalogue_, disk_, options_.replays_per_client)
    , disk_(2, options_.job_niceness) // reading and writing stores can wait as the jobs can
{
}

Daemon::~Daemon()
{
    replays_.stop(); // before disk_, which goes first, is gone
    stop_all();
}

void Daemon::stop_all()
{
    queue_.stop_all();
}

JobId Daemon::submit(
    const std::string& scenario_json, const std::string& source, Origin origin, const std::string& tenant)
{
    return queue_.submit(scenario_json, source, origin, tenant);
}

void Daemon::cancel(JobId job, const EventActor& actor)
{
    queue_.cancel(job, actor);
}

std::vector<JobStatus> Daemon::jobs() const
{
    return queue_.jobs();
}

ClusterState Daemon::cluster() const
{
    return queue_.cluster();
}

std::vector<Daemon::Recovered> Daemon::recover()
{
    return queue_.recover();
}

std::shared_ptr<Client> Daemon::connect(
    Role role, std::string name, std::string person, std::optional<access::TenantReach> reach)
{
    const IoPath on_io_path;
    auto client = std::make_shared<Client>(next_client_++, role, std::move(name), options_.client_queue);
    client->set_person(std::move(person));
    client->set_reach(reach ? std::move(*reach) : access::TenantReach::of(role, std::nullopt));
    client->set_text_filter([this](std::string text) { return folders_.for_clients(std::move(text)); });
    hub_.add(client);
    return client;
}

std::string Daemon::metrics_text(const std::optional<access::TenantReach>& reach) const
{
    const IoPath on_io_path;
    DaemonMetrics metrics;
    queue_.fill_metrics(metrics);
    if (reach)
        std::erase_if(metrics.jobs, [&](const JobMetrics& j) { return !reach->covers(j.status.tenant); });
    metrics.clients = hub_.clients();
    const protocol::Missed missed = hub_.missed_totals();
    metrics.frames_dropped = missed.dropped;
    metrics.frames_coalesced = missed.coalesced;
    const access::AuthLimiter::Totals auth = auth_limiter_.totals();
    metrics.auth_failures = auth.failures;
    metrics.auth_limits = auth.limits;
    metrics.auth_refused = auth.refused;
    metrics.log_lines_dropped = log::dropped();
    return prometheus_exposition(metrics);
}

void Daemon::disconnect(Client& client)
{
    const IoPath on_io_path;
    hub_.remove(client.id());
    replays_.client_left(client.id());
    post_to_core(client, ConnectionClosed {});
}

void Daemon::post_to_core(Client& client, CoreAsk ask)
{
    queue_.post([this, request = CoreRequest { client.shared_from_this(), actor(client), std::move(ask) }] {
        on_core(request);
    });
}

void Daemon::on_core(const CoreRequest& request)
{
    Client& to = *request.client;
    if (std::holds_alternative<ConnectionClosed>(request.ask)) {
        queue_.client_left(to);
        return;
    }
    const std::optional<CommandName> command = command_name(request.ask);
    const auto reply_with = [&](const Reply& reply) {
        if (command)
            answer(to, *command, reply);
        else
            to.send(reply);
    };
    bool applied = false;
    try {
        const Reply reply = std::visit(
            [&](const auto& ask) -> Reply {
                if constexpr (std::is_same_v<std::decay_t<decltype(ask)>, ConnectionClosed>)
                    return {}; // taken above
                else
                    return apply(to, ask, request.actor);
            },
            request.ask);
        applied = !reply.error;
        reply_with(reply);
    } catch (...) {
        applied = false;
        reply_with(failure_of(request_id(request.ask), std::current_exception()));
    }
    const auto* worker_command = std::get_if<WorkerCommand>(&request.ask);
    if (!worker_command || !applied)
        return;
    // Then the pending change, shown before the next barrier applies it: encoding every
    // worker's state (p50 0.9 ms at 500 workers, benchmarks.md) is no part of the reply,
    // and a failure here is no second reply to it.
    try {
        queue_.job(worker_command->job).publish_workers();
    } catch (const std::exception& e) {
        log::error("workers not published",
            { { "job", static_cast<std::int64_t>(worker_command->job) }, { "reason", e.what() } });
    }
}

void Daemon::answer(Client& to, const CommandName& command, const Reply& reply) const
{
    const std::optional<JobId> job = command.job ? command.job : reply.job;
    const std::string& actor = to.person().empty() ? to.name() : to.person();
    const bool refused = reply.error.has_value();
    log::write(refused ? log::Level::Warning : log::Level::Info, refused ? "command refused" : "command",
        { { "actor", actor }, { "role", to_string(to.role()) },
            { "tenant", to.reach().tenant == kDefaultTenant ? std::string() : to.reach().tenant }, // empty: left out
            { "client", static_cast<std::int64_t>(to.id()) }, { "command", command.what }, { "job", job },
            { "outcome", refused ? reply.error->code : "ok" },
            { "reason", refused ? reply.error->message : "" } }); // an empty reason is left out
    to.send(reply);
}

EventActor Daemon::actor(const Client& client) const
{
    // The person when the token names one (and the program they used), else the program.
    const std::string role(to_string(client.role()));
    // Its token's tenant, named unless it is the default one (an installation without tenants
    // writes its actors as before).
    const std::string tenant = client.reach().tenant == kDefaultTenant ? std::string() : client.reach().tenant;
    if (client.person().empty())
        return EventActor::person(role, client.name(), {}, db::utc_timestamp(), tenant);
    return EventActor::person(role, client.person(), client.name(), db::utc_timestamp(), tenant);
}

Daemon::After Daemon::receive(Client& client, std::string_view frame)
{
    const IoPath on_io_path;
    client.heard();
    const Decoded<ClientMessage> decoded = decode_client(frame);
    if (!decoded) {
        if (decoded.request_id.empty())
            client.send(ProtocolError { decoded.error });
        else
            client.send(failure(decoded.request_id, decoded.error));
        return After::KeepOpen;
    }
    const ClientMessage& message = *decoded.message;
    if (const auto* heartbeat = std::get_if<Heartbeat>(&message)) {
        client.heard_heartbeat(heartbeat->evaluating, heartbeat->collective);
        return After::KeepOpen; // heard: that is all it says
    }
    if (const auto* hello = std::get_if<Hello>(&message)) {
        if (hello->version < kOldestProtocolVersion || hello->version > kProtocolVersion) {
            client.send(ProtocolError { { "version-mismatch",
                "this server speaks protocol versions " + std::to_string(kOldestProtocolVersion) + " to "
                    + std::to_string(kProtocolVersion) + ", the client " + std::to_string(hello->version),
                "version" } });
            return After::Close;
        }
        client.set_greeted(hello->version);
        Welcome welcome;
        welcome.server = options_.server_name;
        welcome.role = client.role();
        welcome.tenant = client.reach().tenant;
        welcome.all_tenants = client.reach().all;
        client.send(welcome);
        return After::KeepOpen;
    }
    const std::string& id = decoded.request_id;
    if (!client.greeted()) {
        client.send(failure(id, "hello-first", "send hello with the protocol version before anything else"));
        return After::KeepOpen;
    }
    if (const std::optional<std::string> why = refusal(client, message)) {
        const Reply refused = failure(id, "not-authorized", *why);
        if (is_command(message))
            answer(client, { std::string(type_name(message)), live_job_of(message) }, refused);
        else
            client.send(refused);
        return After::KeepOpen;
    }
    try {
        handle(client, message);
    } catch (...) {
        client.send(failure_of(id, std::current_exception()));
    }
    return After::KeepOpen;
}

std::optional<std::string> Daemon::refusal(const Client& client, const ClientMessage& message) const
{
    const std::string what = "'" + std::string(type_name(message)) + "'";
    const std::string role(to_string(client.role()));
    const bool join = holds_one_of<JoinJob, ReportIteration, JoinPool>(message);
    if (client.role() == Role::Worker && !join)
        return "a worker token only joins jobs (join-job, join-pool, report-iteration); " + what
            + " needs a viewer, operator or admin token";
    if (join && client.role() == Role::Viewer)
        return what + " needs a worker, operator or admin token; this client is a viewer";
    if (is_command(message) && client.role() != Role::Operator && client.role() != Role::Admin)
        return what + " needs the operator or admin role; this client is a " + role;
    if (std::holds_alternative<SetClusterPolicy>(message) && !client.reach().all)
        return what + " changes every tenant's jobs: it needs an admin token; this " + role + " token reaches "
            + client.reach().describe();
    if (const std::optional<JobId> job = live_job_of(message))
        return beyond_reach(client, *job);
    return std::nullopt;
}

std::optional<std::string> Daemon::beyond_reach(const Client& client, JobId job) const
{
    const std::optional<std::string> tenant = queue_.tenant_of(job);
    if (!tenant || client.reach().covers(*tenant))
        return std::nullopt; // a job fulcrumd does not have is the handler's to refuse (unknown-job)
    return "job " + std::to_string(job) + " belongs to tenant '" + *tenant + "'; this "
        + std::string(to_string(client.role())) + " token reaches " + client.reach().describe();
}

void Daemon::check_reach(const Client& client, JobId job) const
{
    if (const std::optional<std::string> why = beyond_reach(client, job))
        throw RefusedRequest("not-authorized", *why);
}

void Daemon::handle(Client& client, const ClientMessage& message)
{
    std::visit(
        [&](const auto& m) {
            if constexpr (kGoesToCore<std::decay_t<decltype(m)>>)
                post_to_core(client, m);
            else
                on(client, m);
        },
        message);
}

void Daemon::on(Client&, const Heartbeat&)
{
    // receive() takes it: the frame's arrival is all it says.
}

void Daemon::on(Client&, const Hello&)
{
    // receive() answers hello before anything else; one that comes again changes nothing.
}

void Daemon::on(Client& client, const Subscribe& s)
{
    if (s.job)
        queue_.job(*s.job); // unknown-job before subscribing
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
    std::erase_if(reply.jobs, [&](const JobStatus& s) { return !client.reach().covers(s.tenant); });
    client.send(reply);
}

void Daemon::on(Client& client, const SubmitJob& submit_job)
{
    // The job is written to the journal (an fsync) before the reply: disk work, off the I/O
    // threads.
    disk_.post([this, client = client.shared_from_this(), submit_job] {
        try {
            const JobId id = queue_.submit(
                submit_job.scenario_json, "submit-job from " + client->name(), Origin::Client, client->reach().tenant);
            answer(*client, { "submit-job", id }, ok(submit_job.id, id));
        } catch (...) {
            answer(*client, { "submit-job", std::nullopt }, failure_of(submit_job.id, std::current_exception()));
        }
    });
}

void Daemon::on(Client& client, const SubmitWorkload& workload)
{
    disk_.post([this, client = client.shared_from_this(), workload] {
        try {
            Reply reply = ok(workload.id);
            reply.jobs = queue_.submit_workload(
                workload.jobs, "submit-workload from " + client->name(), client->reach().tenant);
            answer(*client, { "submit-workload " + std::to_string(reply.jobs.size()) + " jobs", std::nullopt }, reply);
        } catch (...) {
            answer(*client, { "submit-workload", std::nullopt }, failure_of(workload.id, std::current_exception()));
        }
    });
}

// Every command runs on the core's thread, in the order its connection sent it: a resume
// and then a pause leave the job paused, a resize and then a pin of the new worker apply.
Reply Daemon::apply(Client& to, const JobCommand& c, const EventActor& actor)
{
    check_reach(to, c.job);
    switch (c.action) {
    case JobAction::Cancel:
        queue_.cancel(c.job, actor);
        break;
    case JobAction::Pause:
        queue_.job(c.job).pause(actor);
        break;
    case JobAction::Resume:
        queue_.resume(c.job, actor);
        break;
    case JobAction::Freeze:
    case JobAction::Unfreeze:
        queue_.job(c.job).set_frozen(c.action == JobAction::Freeze, actor);
        break;
    }
    return ok(c.id, c.job);
}

Reply Daemon::apply(Client& to, const ChangeJob& change, const EventActor& actor)
{
    check_reach(to, change.job);
    try {
        queue_.job(change.job).change(change.setting, change.spec_json, actor);
    } catch (const InputError& e) { // the spec itself: a field of the policy or sync section
        return failure(change.id, "illegal-value", e.what(), e.field());
    }
    return ok(change.id, change.job);
}

Reply Daemon::apply(Client& to, const ResizeJob& r, const EventActor& actor)
{
    check_reach(to, r.job);
    try {
        queue_.resize(r, actor);
    } catch (const RefusedRequest& e) { // named by the field that asked for it
        const std::string field
            = e.code() == "unknown-worker" || e.code() == "already-member" || e.code() == "not-a-member"
            ? "worker"
            : (e.code() == "unknown-job" ? "job" : "action");
        return failure(r.id, e.code(), e.what(), field);
    }
    return ok(r.id, r.job);
}

Reply Daemon::apply(Client&, const SetClusterPolicy& p, const EventActor& actor)
{
    try {
        queue_.set_cluster_policy(p, actor);
    } catch (const InputError& e) { // names the field: placement, elastic or comm
        return failure(p.id, "illegal-value", e.reason(), e.field());
    }
    return ok(p.id);
}

Reply Daemon::apply(Client& to, const WorkerCommand& w, const EventActor& actor)
{
    check_reach(to, w.job);
    queue_.job(w.job).command(w, actor);
    return ok(w.id, w.job);
}

void Daemon::on(Client& client, const ListCapabilities& l)
{
    // From the registries this fulcrumd was built with: a client lists only what it has.
    const auto listed = [](const std::vector<CatalogueEntry>& entries) {
        std::vector<Capability> out;
        out.reserve(entries.size());
        for (const CatalogueEntry& e : entries)
            out.push_back({ e.name, e.description, e.family, e.required, e.fields });
        return out;
    };
    Reply reply = ok(l.id);
    reply.capabilities = Capabilities { listed(balance::policy_catalogue()), listed(sync::sync_catalogue()),
        listed(predict::predictor_catalogue()), listed(sched::placement_catalogue()), listed(sched::comm_catalogue()),
        listed(sched::elastic_catalogue()), listed(sync::window_catalogue()), listed(model::model_catalogue()) };
    client.send(reply);
}

void Daemon::on(Client& client, const ListRuns& r)
{
    // Every run store is opened and read: disk work, off the I/O threads, in a pass shared
    // with the other clients' listings.
    disk_.post([this, client = client.shared_from_this(), id = r.id] {
        // The answer may come from another disk thread's pass: it holds its own client and id.
        catalogue_.list(
            [client, id](const std::vector<RunListing>* runs, const std::exception_ptr& error) {
                try {
                    if (error)
                        std::rethrow_exception(error);
                    Reply reply = ok(id);
                    std::copy_if(runs->begin(), runs->end(), std::back_inserter(reply.runs),
                        [&](const RunListing& run) { return client->reach().covers(run.tenant); });
                    client->send(reply);
                } catch (...) {
                    client->send(failure_of(id, std::current_exception()));
                }
            },
            [this](std::function<void()> pass) { disk_.post(std::move(pass)); });
    });
}

Reply Daemon::apply(Client& to, const JoinJob& join, const EventActor& actor)
{
    check_reach(to, join.job);
    Reply reply = ok(join.id, join.job);
    reply.assignment = queue_.join(to.shared_from_this(), join, actor);
    return reply;
}

Reply Daemon::apply(Client& to, const JoinPool& join, const EventActor&)
{
    queue_.join_pool(to.shared_from_this(), join);
    return ok(join.id);
}

void Daemon::on(Client& client, const ReportIteration& report)
{
    if (client.version() < 2)
        throw RefusedRequest("version-too-old",
            "report-iteration is protocol version 2; this client said version " + std::to_string(client.version())
                + " in its hello");
    // Answered at the job's barrier, from its thread, when every rank has reported.
    queue_.report(client.shared_from_this(), report);
}

void Daemon::receive_binary(Client& client, std::string_view frame)
{
    const IoPath on_io_path;
    client.heard();
    const std::shared_ptr<serve::ResultSink> pool = client.results_to();
    std::string error = "binary frames are results of a joined remote worker; send join-job first";
    if (pool && pool->deliver(client, frame, &error))
        return;
    client.send(ProtocolError { { "unexpected-binary-frame", error, "" } });
}

void Daemon::on(Client& client, const OpenReplay& open)
{
    replays_.open(client.shared_from_this(), open);
}

void Daemon::on(Client& client, const ReplayCommand& command)
{
    replays_.command(client.shared_from_this(), command);
}

void Daemon::send_snapshot(Client& client, const Subscribe& s)
{
    const auto wants = [&](protocol::Stream stream) {
        return s.streams.empty() || std::find(s.streams.begin(), s.streams.end(), stream) != s.streams.end();
    };
    const std::vector<JobRuntime*> selected = queue_.select(s.job);
    if (wants(protocol::Stream::Cluster))
        client.send(ClusterUpdate { access::shown_to(queue_.cluster(), client.reach()) });
    for (JobRuntime* j : selected) {
        if (!client.reach().covers(j->tenant()))
            continue;
        const std::shared_ptr<const JobRuntime::Published> p = j->published();
        if (wants(protocol::Stream::Jobs))
            client.send(JobUpdate { p->status });
        if (wants(protocol::Stream::Workers))
            client.send(*p->workers);
        if (wants(protocol::Stream::Iterations) && p->rows) {
            IterationRows rows = *p->rows;
            if (!s.workers.empty())
                std::erase_if(rows.rows, [&](const IterationRecord& r) {
                    return std::find(s.workers.begin(), s.workers.end(), r.worker) == s.workers.end();
                });
            client.send(rows);
        }
    }
    client.send(SnapshotEnd { s.id });
}

} // namespace fulcrum::daemon
