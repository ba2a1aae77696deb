#pragma once

// A job's events, typed. The run store and the wire keep an event as text (EventRecord: a
// kind name, an actor line, a message); everything that decides from events (live status,
// replay, the console's chart marks, a job's members) reads this form instead, made by
// `typed()` through one table, and folds it with `JobFold` (common/job_fold.h). Renaming an
// event is then one line of that table, and stores written by earlier releases read the same.

#include "common/records.h"
#include "common/resize_action.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace fulcrum {

// Every kind fulcrum records. `Other` is a kind this build does not know (a store written
// by a newer release); its name is kept in JobEvent::other_kind.
enum class EventKind : std::uint8_t {
    // a run's course
    JobStarted,
    JobFinished,
    JobStopped,
    JobLost,
    CheckpointResumed,
    CheckpointsOff,
    RanksReady,
    GpuDevice,
    // an operator's (or a scenario's) change
    Pin,
    Unpin,
    Exclude,
    Include,
    Readmit,
    StragglerInjected,
    StragglerCleared,
    JobPaused,
    JobResumed,
    PolicyChange,
    SyncModelChange,
    TotalBatch,
    CommandRefused,
    // elasticity
    AddWorker,
    RemoveWorker,
    AddServer,
    RemoveServer,
    ResizeRefused,
    ScheduledChangeRefused,
    JobRestarted,
    JobFrozen,
    JobUnfrozen,
    WorkerAssigned,
    WorkerReleased,
    WorkerJoined, // a fulcrum-worker process or a rank took a slot: its host, connection and slot
    EarlyFeedback,
    // the cluster around the job
    JobQueued,
    JobArriving,
    JobPlaced,
    JobCancelled,
    JobReleased,
    ClusterPolicy,
    GpuShared,
    GpuExclusive,
    LinkContended,
    LinkFree,
    // trouble and the policy's own notes
    WorkerLost,
    WorkerStalled,
    WorkerRecovered,
    Warning,
    PhaseChange,
    Other,
};

std::string_view to_string(EventKind kind);
std::optional<EventKind> parse_event_kind(std::string_view name);
// Kinds a person (or a scenario on their behalf) causes on a running job: the console marks
// them on its charts.
bool is_operator_change(EventKind kind);
// The event a carried-out resize records.
EventKind event_kind(ResizeAction action);

// Who caused an event or asked for a change. It travels typed from the command that made it
// to the trainer that carries it out; only the run store and the wire keep it as one line
// ("operator:alice (fulcrum) at 2026-11-26T10:00:00Z", "scheduler (eps)", "scenario",
// "system: worker lost"), which `EventActor::parse` reads back exactly.
struct EventActor {
    enum class Kind : std::uint8_t {
        System, // fulcrum itself: a job's start and end, a lost worker (`reason` says which, if any)
        Person, // a client's command: its role, its holder's name and program, when
        Scheduler, // fulcrumd's scheduler: `reason` names its policy ("eps"), `at` when
        Scenario, // the job's own scenario (its scheduled changes)
        Elastic, // the trainer's elastic plan (a scenario's elastic section)
        Policy, // a job's own policy acting on what it saw: `reason` names it ("on_stall")
        Other, // a line this build does not know: kept in `text`
    };
    Kind kind = Kind::System;
    std::string role; // a person's: "operator", "admin"
    std::string name; // a person's name, or the program when the token names no one
    std::string program; // the program a named person used ("fulcrum"), empty otherwise
    // A person's token's tenant ("ROLE@TENANT:WHO"); empty for the default tenant, whose
    // actors are written as before tenants existed.
    std::string tenant;
    std::string at; // when a person or the scheduler acted (UTC), empty when not recorded
    std::string reason; // the scheduler's policy ("eps", "kill-restart"), fulcrum's own why; empty for none
    std::string text; // Other's line

    static EventActor system(std::string why = {});
    // fulcrumd stopping: its jobs resume later. Written "system:shutdown", as every release has.
    static EventActor shutdown() { return person("system", "shutdown"); }
    static EventActor scenario();
    static EventActor elastic();
    static EventActor policy(std::string which);
    static EventActor scheduler(std::string policy, std::string at = {});
    // A client's command: its token's role, the person the token names (or the program when it
    // names no one), the program they used, when (UTC), and its token's tenant (empty: default).
    static EventActor person(
        std::string role, std::string name, std::string program = {}, std::string at = {}, std::string tenant = {});
    static EventActor parse(std::string_view line);
    std::string line() const; // parse(line()) == *this
    // A person's command, or a change the job's scenario or elastic plan asked for.
    bool is_scheduled() const { return kind == Kind::Scenario || kind == Kind::Elastic; }
    bool is_shutdown() const { return *this == shutdown(); }

    bool operator==(const EventActor&) const = default;
};

// What an event says beyond its kind, worker and actor, typed for the kinds whose text a
// fold needs.
struct NameChange { // policy-change, sync-model-change
    std::string from, to;
    bool operator==(const NameChange&) const = default;
};
struct ExclusionLimit { // exclude: for how long (run clock), none = until included
    std::optional<double> for_s;
    bool operator==(const ExclusionLimit&) const = default;
};
struct Slowdown { // straggler-injected: the factor its batches take longer
    double factor = 1;
    bool operator==(const Slowdown&) const = default;
};
struct Sharing { // gpu-shared, gpu-exclusive, link-contended, link-free: the live jobs on it
    int jobs = 1; // the worker's own job included: 1 is alone
    bool operator==(const Sharing&) const = default;
};
struct Stall { // worker-stalled, worker-recovered: the batch's time so far (or in all) and its prediction
    double elapsed_s = 0;
    double predicted_s = 0;
    bool operator==(const Stall&) const = default;
};
struct Reach { // checkpoint-resumed: the run clock to which the attempt repeats the last one's cluster
    std::optional<double> until_s; // unset in stores of earlier releases
    bool operator==(const Reach&) const = default;
};
using EventDetail = std::variant<std::monostate, NameChange, ExclusionLimit, Slowdown, Sharing, Reach, Stall>;

struct JobEvent {
    JobId job = 0;
    std::int64_t iteration = 0;
    double time_s = 0;
    EventKind kind = EventKind::Other;
    std::string other_kind; // the name of an Other kind
    std::optional<WorkerId> worker;
    EventActor actor;
    std::string message; // for a person, as recorded
    EventDetail detail;
    // A resize event's (add-worker, ..., resize-refused): the ask of fulcrumd's it answers
    // (train::ResizeRequest::ticket), 0 for none. Live only: never recorded, so a stored
    // event reads back with 0.
    std::uint64_t answers = 0;

    bool operator==(const JobEvent&) const = default;
};

// The one table between the text form and the typed form, both ways: record(typed(r)) == r
// for every record, those of stores written by earlier releases included.
JobEvent typed(const EventRecord& record);
EventRecord record(const JobEvent& event);
std::vector<EventRecord> records(const std::vector<JobEvent>& events);

// The shortest text that reads back as `value` exactly (a number a fold compares, in a message).
std::string exact_number(double value);

// A typed event made where it happens; the message is what a person reads.
JobEvent job_event(EventKind kind, std::int64_t iteration, double time_s, std::string message, EventActor actor = {},
    std::optional<WorkerId> worker = std::nullopt);

} // namespace fulcrum
