#include "common/job_event.h"

#include "common/named_values.h"
#include "common/tenant_name.h"

#include <charconv>

namespace fulcrum {

namespace {

// The names as the run store and the wire spell them, since schema 1: a store written by any
// release reads through this table.
constexpr NameTable<EventKind, 49> kKinds { {
    { EventKind::JobStarted, "job-started" },
    { EventKind::JobFinished, "job-finished" },
    { EventKind::JobStopped, "job-stopped" },
    { EventKind::JobLost, "job-lost" },
    { EventKind::CheckpointResumed, "checkpoint-resumed" },
    { EventKind::CheckpointsOff, "checkpoints-off" },
    { EventKind::RanksReady, "ranks-ready" },
    { EventKind::GpuDevice, "gpu-device" },
    { EventKind::Pin, "pin" },
    { EventKind::Unpin, "unpin" },
    { EventKind::Exclude, "exclude" },
    { EventKind::Include, "include" },
    { EventKind::Readmit, "readmit" },
    { EventKind::StragglerInjected, "straggler-injected" },
    { EventKind::StragglerCleared, "straggler-cleared" },
    { EventKind::JobPaused, "job-paused" },
    { EventKind::JobResumed, "job-resumed" },
    { EventKind::PolicyChange, "policy-change" },
    { EventKind::SyncModelChange, "sync-model-change" },
    { EventKind::TotalBatch, "total-batch" },
    { EventKind::CommandRefused, "command-refused" },
    { EventKind::AddWorker, "add-worker" },
    { EventKind::RemoveWorker, "remove-worker" },
    { EventKind::AddServer, "add-server" },
    { EventKind::RemoveServer, "remove-server" },
    { EventKind::ResizeRefused, "resize-refused" },
    { EventKind::ScheduledChangeRefused, "scheduled-change-refused" },
    { EventKind::JobRestarted, "job-restarted" },
    { EventKind::JobFrozen, "job-frozen" },
    { EventKind::JobUnfrozen, "job-unfrozen" },
    { EventKind::WorkerAssigned, "worker-assigned" },
    { EventKind::WorkerReleased, "worker-released" },
    { EventKind::WorkerJoined, "worker-joined" },
    { EventKind::EarlyFeedback, "early-feedback" },
    { EventKind::JobQueued, "job-queued" },
    { EventKind::JobArriving, "job-arriving" },
    { EventKind::JobPlaced, "job-placed" },
    { EventKind::JobCancelled, "job-cancelled" },
    { EventKind::JobReleased, "job-released" },
    { EventKind::ClusterPolicy, "cluster-policy" },
    { EventKind::GpuShared, "gpu-shared" },
    { EventKind::GpuExclusive, "gpu-exclusive" },
    { EventKind::LinkContended, "link-contended" },
    { EventKind::LinkFree, "link-free" },
    { EventKind::WorkerLost, "worker-lost" },
    { EventKind::WorkerStalled, "worker-stalled" },
    { EventKind::WorkerRecovered, "worker-recovered" },
    { EventKind::Warning, "warning" },
    { EventKind::PhaseChange, "phase-change" },
} };

// The number that follows `marker` in `text`, if there is one.
std::optional<double> number_after(std::string_view text, std::string_view marker)
{
    const auto at = text.find(marker);
    if (at == std::string_view::npos)
        return std::nullopt;
    const char* first = text.data() + at + marker.size();
    double value = 0;
    const auto [end, ec] = std::from_chars(first, text.data() + text.size(), value);
    if (ec != std::errc {} || end == first)
        return std::nullopt;
    return value;
}

// The typed part of a message, by kind. The store keeps only the text, as every release
// wrote it: "uniform -> lbbsp-cpu", "worker 2 excluded for 30 s", "worker 1's batches take
// 4.000000x longer", "worker 0's GPU is time-shared by 3 live jobs".
EventDetail detail_of(EventKind kind, std::string_view message)
{
    switch (kind) {
    case EventKind::PolicyChange:
    case EventKind::SyncModelChange: {
        const auto arrow = message.rfind(" -> ");
        if (arrow == std::string_view::npos)
            return NameChange { "", std::string(message) };
        return NameChange { std::string(message.substr(0, arrow)), std::string(message.substr(arrow + 4)) };
    }
    case EventKind::Exclude:
        return ExclusionLimit { number_after(message, " for ") };
    case EventKind::StragglerInjected:
        return Slowdown { number_after(message, "take ").value_or(1.0) };
    case EventKind::GpuShared: // "worker 0's GPU is time-shared by 3 live jobs"
        return Sharing { static_cast<int>(number_after(message, "time-shared by ").value_or(2.0)) };
    case EventKind::LinkContended: // "... cross its server's link with 2 other live jobs' (eq. 5)"
        return Sharing { static_cast<int>(number_after(message, "link with ").value_or(1.0)) + 1 };
    case EventKind::GpuExclusive:
    case EventKind::LinkFree:
        return Sharing { 1 };
    case EventKind::WorkerStalled: // "worker 2 stalled: its batch of 64 has taken 12.5 s, predicted 0.04 s (...)"
        return Stall { number_after(message, " has taken ").value_or(0.0),
            number_after(message, "predicted ").value_or(0.0) };
    case EventKind::WorkerRecovered: // "worker 2 recovered: its batch of 64 took 14 s, predicted 0.04 s"
        return Stall { number_after(message, " took ").value_or(0.0),
            number_after(message, "predicted ").value_or(0.0) };
    case EventKind::CheckpointResumed: // "...; it follows the cluster its store recorded until 12.5 s"
        return Reach { number_after(message, "recorded until ") };
    default:
        return std::monostate {};
    }
}

EventActor parse_actor_line(std::string_view line)
{
    EventActor a;
    if (line == "system")
        return a;
    if (line.starts_with("system: ")) {
        a.reason = std::string(line.substr(8));
        return a;
    }
    if (line == "scenario") {
        a.kind = EventActor::Kind::Scenario;
        return a;
    }
    if (line == "elastic") {
        a.kind = EventActor::Kind::Elastic;
        return a;
    }
    if (line.starts_with("policy: ")) {
        a.kind = EventActor::Kind::Policy;
        a.reason = std::string(line.substr(8));
        return a;
    }
    // "... at TIME": a person's and the scheduler's lines end with when they acted.
    std::string_view rest = line;
    if (const auto at = rest.rfind(" at "); at != std::string_view::npos) {
        a.at = std::string(rest.substr(at + 4));
        rest = rest.substr(0, at);
    }
    if (rest.starts_with("scheduler")) {
        a.kind = EventActor::Kind::Scheduler;
        rest.remove_prefix(9);
        if (rest.starts_with(" (") && rest.ends_with(')'))
            a.reason = std::string(rest.substr(2, rest.size() - 3));
        else if (!rest.empty())
            a.kind = EventActor::Kind::Other;
        return a;
    }
    // "ROLE:WHO", WHO being "NAME (PROGRAM)" or the program alone.
    const auto colon = rest.find(':');
    if (colon == std::string_view::npos || colon == 0 || rest.substr(0, colon).find(' ') != std::string_view::npos) {
        a.kind = EventActor::Kind::Other;
        return a;
    }
    a.kind = EventActor::Kind::Person;
    a.role = std::string(rest.substr(0, colon));
    if (const auto at_sign = a.role.find('@'); at_sign != std::string::npos) { // "ROLE@TENANT": roles hold no '@'
        a.tenant = a.role.substr(at_sign + 1);
        a.role.resize(at_sign);
        if (a.role.empty() || !valid_tenant_name(a.tenant)) {
            a.kind = EventActor::Kind::Other;
            return a;
        }
    }
    std::string_view who = rest.substr(colon + 1);
    if (const auto open = who.rfind(" ("); open != std::string_view::npos && who.ends_with(')')) {
        a.program = std::string(who.substr(open + 2, who.size() - open - 3));
        who = who.substr(0, open);
    }
    a.name = std::string(who);
    return a;
}

} // namespace

std::string_view to_string(EventKind kind)
{
    return name_of(kKinds, kind);
}

std::optional<EventKind> parse_event_kind(std::string_view name)
{
    return value_named(kKinds, name);
}

bool is_operator_change(EventKind kind)
{
    switch (kind) {
    case EventKind::Pin:
    case EventKind::Unpin:
    case EventKind::Exclude:
    case EventKind::Include:
    case EventKind::StragglerInjected:
    case EventKind::StragglerCleared:
    case EventKind::JobPaused:
    case EventKind::JobResumed:
    case EventKind::PolicyChange:
    case EventKind::SyncModelChange:
    case EventKind::AddWorker:
    case EventKind::RemoveWorker:
    case EventKind::AddServer:
    case EventKind::RemoveServer:
        return true;
    default:
        return false;
    }
}

EventKind event_kind(ResizeAction action)
{
    switch (action) {
    case ResizeAction::AddServer:
        return EventKind::AddServer;
    case ResizeAction::RemoveServer:
        return EventKind::RemoveServer;
    case ResizeAction::AddWorker:
        return EventKind::AddWorker;
    case ResizeAction::RemoveWorker:
        break;
    }
    return EventKind::RemoveWorker;
}

EventActor EventActor::system(std::string why)
{
    EventActor a;
    a.reason = std::move(why);
    return a;
}

EventActor EventActor::scenario()
{
    EventActor a;
    a.kind = Kind::Scenario;
    return a;
}

EventActor EventActor::elastic()
{
    EventActor a;
    a.kind = Kind::Elastic;
    return a;
}

EventActor EventActor::policy(std::string which)
{
    EventActor a;
    a.kind = Kind::Policy;
    a.reason = std::move(which);
    return a;
}

EventActor EventActor::scheduler(std::string policy, std::string at)
{
    EventActor a;
    a.kind = Kind::Scheduler;
    a.reason = std::move(policy);
    a.at = std::move(at);
    return a;
}

EventActor EventActor::person(
    std::string role, std::string name, std::string program, std::string at, std::string tenant)
{
    EventActor a;
    a.kind = Kind::Person;
    a.tenant = std::move(tenant);
    a.role = std::move(role);
    a.name = std::move(name);
    a.program = std::move(program);
    a.at = std::move(at);
    return a;
}

EventActor EventActor::parse(std::string_view line)
{
    EventActor a = parse_actor_line(line);
    // Whatever does not come back as it was written is kept as it was written.
    if (a.kind == Kind::Other || a.line() != line) {
        a = EventActor {};
        a.kind = Kind::Other;
        a.text = std::string(line);
    }
    return a;
}

std::string EventActor::line() const
{
    const std::string when = at.empty() ? "" : " at " + at;
    switch (kind) {
    case Kind::System:
        return reason.empty() ? "system" : "system: " + reason;
    case Kind::Scenario:
        return "scenario";
    case Kind::Elastic:
        return "elastic";
    case Kind::Policy:
        return "policy: " + reason;
    case Kind::Scheduler:
        return "scheduler" + (reason.empty() ? "" : " (" + reason + ")") + when;
    case Kind::Person:
        return role + (tenant.empty() ? "" : "@" + tenant) + ":"
            + (program.empty() ? name : name + " (" + program + ")") + when;
    case Kind::Other:
        break;
    }
    return text;
}

JobEvent typed(const EventRecord& r)
{
    const std::optional<EventKind> kind = parse_event_kind(r.kind);
    JobEvent e = job_event(
        kind.value_or(EventKind::Other), r.iteration, r.time_s, r.message, EventActor::parse(r.actor), r.worker);
    e.job = r.job;
    if (!kind)
        e.other_kind = r.kind;
    return e;
}

EventRecord record(const JobEvent& e)
{
    EventRecord r;
    r.job = e.job;
    r.iteration = e.iteration;
    r.time_s = e.time_s;
    r.kind = e.kind == EventKind::Other ? e.other_kind : std::string(to_string(e.kind));
    r.worker = e.worker;
    r.message = e.message;
    r.actor = e.actor.line();
    return r;
}

std::vector<EventRecord> records(const std::vector<JobEvent>& events)
{
    std::vector<EventRecord> out;
    out.reserve(events.size());
    for (const JobEvent& e : events)
        out.push_back(record(e));
    return out;
}

JobEvent job_event(EventKind kind, std::int64_t iteration, double time_s, std::string message, EventActor actor,
    std::optional<WorkerId> worker)
{
    JobEvent e;
    e.iteration = iteration;
    e.time_s = time_s;
    e.kind = kind;
    e.worker = worker;
    e.actor = std::move(actor);
    e.detail = detail_of(kind, message);
    e.message = std::move(message);
    return e;
}

std::string exact_number(double value)
{
    char text[64];
    const auto [end, error] = std::to_chars(text, text + sizeof text, value);
    return error == std::errc {} ? std::string(text, end) : std::to_string(value);
}

} // namespace fulcrum
