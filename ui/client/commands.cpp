#include "ui/client/commands.h"

#include "ui/client/protocol_client.h"
#include "ui/console_store.h"

namespace fulcrum::ui {

using namespace protocol;

namespace {

QString job_worker(JobId job, WorkerId worker)
{
    return QStringLiteral("worker %1 of job %2").arg(worker).arg(job);
}

QString text(const std::string& s)
{
    return QString::fromStdString(s);
}

} // namespace

Commands::Commands(ProtocolClient& client, ConsoleStore& store, QObject* parent)
    : QObject(parent)
    , client_(client)
    , store_(store)
{
    connect(&client_, &ProtocolClient::received, this, [this](const ServerMessage& message) {
        if (const auto* reply = std::get_if<Reply>(&message))
            on_reply(*reply);
    });
    connect(&client_, &ProtocolClient::sessionLost, this, [this](const QString& why) {
        for (auto& [id, message] : in_flight_) {
            // Replay requests die with their connection's replays; only commands leave a fate to tell.
            if (std::holds_alternative<WorkerCommand>(message) || std::holds_alternative<JobCommand>(message)
                || std::holds_alternative<ChangeJob>(message) || std::holds_alternative<SubmitJob>(message)) {
                emit fateUnknown(describe(message), why);
                unknown_.push_back(message);
            }
        }
        in_flight_.clear();
    });
    connect(&client_, &ProtocolClient::snapshotReceived, this, [this] {
        for (const ClientMessage& message : unknown_)
            emit fateKnown(describe(message), fate(message, store_));
        unknown_.clear();
    });
}

bool Commands::can_command() const
{
    return client_.state() == ProtocolClient::State::Connected
        && (client_.role() == Role::Operator || client_.role() == Role::Admin);
}

std::optional<std::string> Commands::send(ClientMessage message, bool command)
{
    const QString what = describe(message);
    if (client_.state() != ProtocolClient::State::Connected) {
        emit failed(what, QStringLiteral("not connected (%1)").arg(client_.status_text()));
        return std::nullopt;
    }
    if (command && client_.role() != Role::Operator && client_.role() != Role::Admin) {
        emit failed(what, QStringLiteral("this console is connected as a viewer: commands need an operator token"));
        return std::nullopt;
    }
    const std::string id = client_.send(message);
    std::visit(
        [&id](auto& m) {
            if constexpr (requires { m.id; })
                m.id = id;
        },
        message);
    in_flight_.emplace(id, std::move(message));
    emit sent(what);
    return id;
}

void Commands::on_reply(const Reply& reply)
{
    const auto it = in_flight_.find(reply.id);
    if (it == in_flight_.end())
        return; // the subscription's, or a request sent before a reconnect
    const ClientMessage message = std::move(it->second);
    in_flight_.erase(it);
    const QString what = describe(message);
    if (reply.error) {
        QString why = text(reply.error->message);
        if (!reply.error->field.empty())
            why += QStringLiteral(" (field %1)").arg(text(reply.error->field));
        emit failed(what, why);
        return;
    }
    if (std::holds_alternative<ListRuns>(message))
        emit runsListed(reply.runs);
    if (std::holds_alternative<OpenReplay>(message) && reply.replay)
        emit replayOpened(*reply.replay);
    emit succeeded(what);
}

namespace {

WorkerCommand worker_command(WorkerAction action, JobId job, WorkerId worker)
{
    WorkerCommand c;
    c.action = action;
    c.job = job;
    c.worker = worker;
    return c;
}

} // namespace

bool Commands::pin(JobId job, WorkerId worker, std::int32_t batch_size)
{
    WorkerCommand c = worker_command(WorkerAction::Pin, job, worker);
    c.batch_size = batch_size;
    return send(c, true).has_value();
}

bool Commands::unpin(JobId job, WorkerId worker)
{
    return send(worker_command(WorkerAction::Unpin, job, worker), true).has_value();
}

bool Commands::exclude(JobId job, WorkerId worker, std::optional<double> for_s)
{
    WorkerCommand c = worker_command(WorkerAction::Exclude, job, worker);
    c.for_s = for_s;
    return send(c, true).has_value();
}

bool Commands::include(JobId job, WorkerId worker)
{
    return send(worker_command(WorkerAction::Include, job, worker), true).has_value();
}

bool Commands::job_action(JobId job, JobAction action)
{
    return send(JobCommand { {}, action, job }, true).has_value();
}

bool Commands::change(JobId job, JobSetting setting, const QString& spec_json)
{
    return send(ChangeJob { {}, setting, job, spec_json.toStdString() }, true).has_value();
}

bool Commands::resize(JobId job, ResizeAction action, std::optional<WorkerId> worker)
{
    return send(ResizeJob { {}, job, action, worker }, true).has_value();
}

bool Commands::set_cluster_policy(
    std::optional<std::string> placement, std::optional<std::string> elastic, std::optional<std::string> comm)
{
    return send(SetClusterPolicy { {}, std::move(placement), std::move(elastic), std::move(comm) }, true).has_value();
}

bool Commands::submit(const QString& scenario_json, const QString&)
{
    return send(SubmitJob { {}, scenario_json.toStdString() }, true).has_value();
}

bool Commands::list_runs()
{
    return send(ListRuns {}, false).has_value();
}

bool Commands::open_replay(const OpenReplay& open)
{
    return send(open, false).has_value();
}

std::optional<std::string> Commands::replay(ReplayCommand command)
{
    return send(std::move(command), false);
}

QString Commands::describe(const ClientMessage& message)
{
    if (const auto* c = std::get_if<WorkerCommand>(&message)) {
        switch (c->action) {
        case WorkerAction::Pin:
            return QStringLiteral("pin %1 at %2 samples").arg(job_worker(c->job, c->worker)).arg(c->batch_size);
        case WorkerAction::Unpin:
            return QStringLiteral("unpin %1").arg(job_worker(c->job, c->worker));
        case WorkerAction::Exclude:
            return c->for_s ? QStringLiteral("exclude %1 for %2 s").arg(job_worker(c->job, c->worker)).arg(*c->for_s)
                            : QStringLiteral("exclude %1").arg(job_worker(c->job, c->worker));
        case WorkerAction::Include:
            return QStringLiteral("re-include %1").arg(job_worker(c->job, c->worker));
        case WorkerAction::InjectStraggler:
            return QStringLiteral("slow down %1 ×%2").arg(job_worker(c->job, c->worker)).arg(c->slowdown);
        case WorkerAction::ClearStraggler:
            return QStringLiteral("clear the slowdown of %1").arg(job_worker(c->job, c->worker));
        }
    }
    if (const auto* c = std::get_if<JobCommand>(&message)) {
        // In words ("cancel job 3"), not the message's name ("cancel-job job 3").
        switch (c->action) {
        case JobAction::Cancel:
            return QStringLiteral("cancel job %1").arg(c->job);
        case JobAction::Pause:
            return QStringLiteral("pause job %1").arg(c->job);
        case JobAction::Resume:
            return QStringLiteral("resume job %1").arg(c->job);
        case JobAction::Freeze:
            return QStringLiteral("freeze job %1's workers").arg(c->job);
        case JobAction::Unfreeze:
            return QStringLiteral("unfreeze job %1's workers").arg(c->job);
        }
    }
    if (const auto* c = std::get_if<ChangeJob>(&message))
        return QStringLiteral("set the %1 of job %2")
            .arg(c->setting == JobSetting::Policy ? QStringLiteral("policy") : QStringLiteral("sync model"))
            .arg(c->job);
    if (const auto* r = std::get_if<ResizeJob>(&message)) {
        const QString target = r->worker ? QStringLiteral(" %1").arg(*r->worker) : QString();
        switch (r->action) {
        case ResizeAction::AddWorker:
            return QStringLiteral("add worker%1 to job %2").arg(target).arg(r->job);
        case ResizeAction::RemoveWorker:
            return QStringLiteral("remove worker%1 from job %2").arg(target).arg(r->job);
        case ResizeAction::AddServer:
            return QStringLiteral("add a server to job %1").arg(r->job);
        case ResizeAction::RemoveServer:
            return QStringLiteral("remove server%1 from job %2").arg(target).arg(r->job);
        }
    }
    if (const auto* p = std::get_if<SetClusterPolicy>(&message)) {
        QStringList changes;
        if (p->placement)
            changes << QStringLiteral("placement %1").arg(text(*p->placement));
        if (p->elastic)
            changes << QStringLiteral("elastic %1").arg(text(*p->elastic));
        if (p->comm)
            changes << QStringLiteral("communication %1").arg(text(*p->comm));
        return QStringLiteral("set the cluster's %1").arg(changes.join(QStringLiteral(" and ")));
    }
    if (std::holds_alternative<SubmitJob>(message))
        return QStringLiteral("submit a job");
    if (std::holds_alternative<ListRuns>(message))
        return QStringLiteral("list the recorded runs");
    if (const auto* o = std::get_if<OpenReplay>(&message))
        return QStringLiteral("replay run %1 of %2").arg(o->run).arg(text(o->database));
    if (const auto* r = std::get_if<ReplayCommand>(&message)) {
        switch (r->action) {
        case ReplayAction::Play:
            return QStringLiteral("play the replay");
        case ReplayAction::Pause:
            return QStringLiteral("pause the replay");
        case ReplayAction::Seek:
            return r->iteration ? QStringLiteral("seek the replay to iteration %1").arg(*r->iteration)
                                : QStringLiteral("seek the replay to %1 s").arg(r->time_s.value_or(0));
        case ReplayAction::SetSpeed:
            return QStringLiteral("set the replay speed to ×%1").arg(r->speed);
        case ReplayAction::Close:
            return QStringLiteral("close the replay");
        }
    }
    return QStringLiteral("a request");
}

QString Commands::fate(const ClientMessage& message, const ConsoleStore& store)
{
    if (const auto* c = std::get_if<WorkerCommand>(&message)) {
        const WorkerState* state = store.worker_state(c->job, c->worker);
        if (!state)
            return QStringLiteral("unknown: the server no longer reports %1").arg(job_worker(c->job, c->worker));
        bool applied = false;
        switch (c->action) {
        case WorkerAction::Pin:
            applied = state->pinned == c->batch_size;
            break;
        case WorkerAction::Unpin:
            applied = !state->pinned;
            break;
        case WorkerAction::Exclude:
            applied = state->excluded;
            break;
        case WorkerAction::Include:
            applied = !state->excluded;
            break;
        case WorkerAction::InjectStraggler:
            applied = state->slowdown == c->slowdown;
            break;
        case WorkerAction::ClearStraggler:
            applied = state->slowdown == 1;
            break;
        }
        return applied
            ? QStringLiteral("applied: the server shows it in effect")
            : QStringLiteral("not applied: the server does not show it; send it again if it is still wanted");
    }
    if (const auto* c = std::get_if<JobCommand>(&message)) {
        const JobStatus* job = store.jobs().job(c->job);
        if (!job)
            return QStringLiteral("unknown: the server no longer reports job %1").arg(c->job);
        const bool frozen = job->elastic && job->elastic->frozen;
        bool applied = job->state == JobState::Running;
        switch (c->action) {
        case JobAction::Cancel:
            applied = job->state == JobState::Stopped;
            break;
        case JobAction::Pause:
            applied = job->state == JobState::Paused;
            break;
        case JobAction::Resume:
            break;
        case JobAction::Freeze:
        case JobAction::Unfreeze:
            return (frozen == (c->action == JobAction::Freeze)
                    ? QStringLiteral("applied: job %1 is %2")
                    : QStringLiteral("not applied: job %1 is %2; send it again if it is still wanted"))
                .arg(c->job)
                .arg(frozen ? QStringLiteral("frozen") : QStringLiteral("not frozen"));
        }
        return (applied ? QStringLiteral("applied: job %1 is %2")
                        : QStringLiteral("not applied: job %1 is %2; send it again if it is still wanted"))
            .arg(c->job)
            .arg(text(std::string(to_string(job->state))));
    }
    if (const auto* c = std::get_if<ChangeJob>(&message)) {
        const JobStatus* job = store.jobs().job(c->job);
        if (!job)
            return QStringLiteral("unknown: the server no longer reports job %1").arg(c->job);
        return QStringLiteral(
            "the job now runs policy %1 with sync model %2; the events list shows whether the change was made")
            .arg(text(job->policy), text(job->sync_model));
    }
    if (const auto* r = std::get_if<ResizeJob>(&message)) {
        if (r->worker && (r->action == ResizeAction::AddWorker || r->action == ResizeAction::RemoveWorker)) {
            const WorkerState* state = store.worker_state(r->job, *r->worker);
            if (!state)
                return QStringLiteral("unknown: the server no longer reports %1").arg(job_worker(r->job, *r->worker));
            return state->member == (r->action == ResizeAction::AddWorker)
                ? QStringLiteral("applied: the server shows it in effect")
                : QStringLiteral("not applied: the server does not show it; send it again if it is still wanted");
        }
        return QStringLiteral("unknown: the job's events show whether the resize was made");
    }
    if (const auto* p = std::get_if<SetClusterPolicy>(&message)) {
        const ClusterState* c = store.cluster();
        if (!c)
            return QStringLiteral("unknown: no cluster state yet");
        const bool applied = (!p->placement || c->placement == *p->placement)
            && (!p->elastic || c->elastic == *p->elastic) && (!p->comm || c->comm == *p->comm);
        return (applied
                ? QStringLiteral("applied: the cluster runs placement %1, elastic %2 and communication %3")
                : QStringLiteral("not applied: the cluster runs placement %1, elastic %2 and communication %3; send "
                                 "it again if it is still wanted"))
            .arg(text(c->placement), text(c->elastic), text(c->comm));
    }
    return QStringLiteral("unknown: look for the new job in the jobs table");
}

} // namespace fulcrum::ui
