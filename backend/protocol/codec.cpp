#include "protocol/codec.h"

#include "common/named_values.h"
#include "protocol/precise_parse.h"

#include <boost/json.hpp>

#include <cmath>
#include <limits>

namespace fulcrum::protocol {

namespace json = boost::json;

namespace {

constexpr NameTable<Role, 3> kRoles { { { Role::Viewer, "viewer" }, { Role::Operator, "operator" }, { Role::Worker, "worker" } } };
constexpr NameTable<Stream, 6> kStreams { {
    { Stream::Iterations, "iterations" },
    { Stream::Evaluations, "evaluations" },
    { Stream::Events, "events" },
    { Stream::Jobs, "jobs" },
    { Stream::Workers, "workers" },
    { Stream::Cluster, "cluster" },
} };
constexpr NameTable<JobState, 7> kJobStates { {
    { JobState::Queued, "queued" },
    { JobState::Running, "running" },
    { JobState::Paused, "paused" },
    { JobState::Finished, "finished" },
    { JobState::Stopped, "stopped" },
    { JobState::Failed, "failed" },
    { JobState::Interrupted, "interrupted" },
} };
constexpr NameTable<JobAction, 3> kJobActions { {
    { JobAction::Cancel, "cancel-job" },
    { JobAction::Pause, "pause-job" },
    { JobAction::Resume, "resume-job" },
} };
constexpr NameTable<JobSetting, 2> kJobSettings { {
    { JobSetting::Policy, "set-policy" },
    { JobSetting::SyncModel, "set-sync-model" },
} };
// The field each setting's spec travels in.
std::string_view spec_field(JobSetting setting) { return setting == JobSetting::Policy ? "policy" : "sync"; }
constexpr NameTable<WorkerAction, 6> kWorkerActions { {
    { WorkerAction::Pin, "pin-worker" },
    { WorkerAction::Unpin, "unpin-worker" },
    { WorkerAction::Exclude, "exclude-worker" },
    { WorkerAction::Include, "include-worker" },
    { WorkerAction::InjectStraggler, "inject-straggler" },
    { WorkerAction::ClearStraggler, "clear-straggler" },
} };

constexpr NameTable<ReplayAction, 5> kReplayActions { {
    { ReplayAction::Play, "play-replay" },
    { ReplayAction::Pause, "pause-replay" },
    { ReplayAction::Seek, "seek-replay" },
    { ReplayAction::SetSpeed, "set-replay-speed" },
    { ReplayAction::Close, "close-replay" },
} };
constexpr NameTable<ReplayPhase, 4> kReplayPhases { {
    { ReplayPhase::Playing, "playing" },
    { ReplayPhase::Paused, "paused" },
    { ReplayPhase::Finished, "finished" },
    { ReplayPhase::Closed, "closed" },
} };

// A field that is missing, of the wrong JSON type or out of range; becomes an ErrorInfo.
struct FieldError {
    std::string code;
    std::string field;
    std::string message;
};

std::string_view kind_of(const json::value& v)
{
    switch (v.kind()) {
    case json::kind::null:
        return "null";
    case json::kind::bool_:
        return "a boolean";
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_:
        return "a number";
    case json::kind::string:
        return "a string";
    case json::kind::array:
        return "an array";
    case json::kind::object:
        return "an object";
    }
    return "a value";
}

// One of an enum's names, at `at` (a field or an array element).
template <class Enum, std::size_t N>
Enum named_value(const json::value& v, const std::string& at, const NameTable<Enum, N>& table)
{
    if (!v.is_string())
        throw FieldError { "wrong-type", at, "'" + at + "' must be a string, got " + std::string(kind_of(v)) };
    const std::string_view text = v.get_string();
    if (const auto value = value_named(table, text))
        return *value;
    std::string expected;
    for (const auto& entry : table) {
        expected += expected.empty() ? "" : ", ";
        expected += entry.second;
    }
    throw FieldError { "illegal-value", at, "'" + at + "' must be one of " + expected + ", got '" + std::string(text) + "'" };
}

// Reads the fields of one JSON object, naming each field in its errors by its full path.
class Fields {
public:
    Fields(const json::object& object, std::string prefix = {})
        : object_(object)
        , prefix_(std::move(prefix))
    {
    }

    std::string path(std::string_view name) const { return prefix_.empty() ? std::string(name) : prefix_ + "." + std::string(name); }
    bool has(std::string_view name) const
    {
        const json::value* v = object_.if_contains(name);
        return v && !v->is_null();
    }

    const json::value& required(std::string_view name, std::string_view expected) const
    {
        const json::value* v = object_.if_contains(name);
        if (!v || v->is_null())
            throw FieldError { "missing-field", path(name), "'" + path(name) + "' is required (" + std::string(expected) + ")" };
        return *v;
    }

    [[noreturn]] void wrong(std::string_view name, std::string_view expected, const json::value& v) const
    {
        throw FieldError { "wrong-type", path(name),
            "'" + path(name) + "' must be " + std::string(expected) + ", got " + std::string(kind_of(v)) };
    }
    [[noreturn]] void illegal(std::string_view name, const std::string& why) const
    {
        throw FieldError { "illegal-value", path(name), "'" + path(name) + "' " + why };
    }

    std::string string(std::string_view name) const
    {
        const json::value& v = required(name, "a string");
        if (!v.is_string())
            wrong(name, "a string", v);
        return std::string(v.get_string());
    }
    std::string string_or(std::string_view name, std::string fallback) const { return has(name) ? string(name) : fallback; }

    double number(std::string_view name) const
    {
        const json::value& v = required(name, "a number");
        if (!v.is_number())
            wrong(name, "a number", v);
        const double d = v.to_number<double>();
        if (!std::isfinite(d))
            illegal(name, "must be finite");
        return d;
    }
    std::optional<double> optional_number(std::string_view name) const
    {
        return has(name) ? std::optional<double>(number(name)) : std::nullopt;
    }

    std::int64_t integer(std::string_view name, std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                         std::int64_t max = std::numeric_limits<std::int64_t>::max()) const
    {
        const json::value& v = required(name, "a whole number");
        std::int64_t n = 0;
        if (v.is_int64())
            n = v.get_int64();
        else if (v.is_uint64() && v.get_uint64() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            n = static_cast<std::int64_t>(v.get_uint64());
        else if (v.is_double() && std::floor(v.get_double()) == v.get_double() && std::abs(v.get_double()) < 9.0e15)
            n = static_cast<std::int64_t>(v.get_double());
        else
            wrong(name, "a whole number", v);
        if (n < min || n > max)
            illegal(name, "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " + std::to_string(n));
        return n;
    }
    std::int32_t int32(std::string_view name, std::int32_t min = std::numeric_limits<std::int32_t>::min()) const
    {
        return static_cast<std::int32_t>(integer(name, min, std::numeric_limits<std::int32_t>::max()));
    }

    bool boolean(std::string_view name) const
    {
        const json::value& v = required(name, "true or false");
        if (!v.is_bool())
            wrong(name, "true or false", v);
        return v.get_bool();
    }

    const json::array& array(std::string_view name) const
    {
        const json::value& v = required(name, "an array");
        if (!v.is_array())
            wrong(name, "an array", v);
        return v.get_array();
    }
    const json::object& object(std::string_view name) const
    {
        const json::value& v = required(name, "an object");
        if (!v.is_object())
            wrong(name, "an object", v);
        return v.get_object();
    }
    // An array of whole numbers from `min` up to the largest Int.
    template <class Int>
    std::vector<Int> integers(std::string_view name, std::int64_t min) const
    {
        std::vector<Int> out;
        const json::array& a = array(name);
        out.reserve(a.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
            const std::string at = path(name) + "[" + std::to_string(i) + "]";
            if (!a[i].is_int64())
                throw FieldError { "wrong-type", at, "'" + at + "' must be a whole number, got " + std::string(kind_of(a[i])) };
            const std::int64_t n = a[i].get_int64();
            if (n < min || n > std::numeric_limits<Int>::max())
                throw FieldError { "illegal-value", at, "'" + at + "' must be between " + std::to_string(min) + " and "
                    + std::to_string(std::numeric_limits<Int>::max()) + ", got " + std::to_string(n) };
            out.push_back(static_cast<Int>(n));
        }
        return out;
    }
    Fields element(std::string_view name, std::size_t i, const json::value& v) const
    {
        const std::string at = path(name) + "[" + std::to_string(i) + "]";
        if (!v.is_object())
            throw FieldError { "wrong-type", at, "'" + at + "' must be an object, got " + std::string(kind_of(v)) };
        return Fields(v.get_object(), at);
    }

    template <class Enum, std::size_t N>
    Enum named(std::string_view name, const NameTable<Enum, N>& table) const
    {
        return named_value(required(name, "a string"), path(name), table);
    }

private:
    const json::object& object_;
    std::string prefix_;
};

template <class Int>
json::array integers_json(const std::vector<Int>& values)
{
    json::array a;
    a.reserve(values.size());
    for (Int v : values)
        a.emplace_back(static_cast<std::int64_t>(v));
    return a;
}

// --- records ---------------------------------------------------------------------------

json::object to_json(const IterationRecord& r)
{
    json::object o {
        { "job", r.job }, { "worker", r.worker }, { "iteration", r.iteration }, { "start_s", r.start_s }, { "end_s", r.end_s },
        { "batch_size", r.batch_size }, { "compute_s", r.compute_s }, { "comm_s", r.comm_s }, { "wait_s", r.wait_s },
        { "cpu_share", r.cpu_share }, { "memory_share", r.memory_share }, { "speed", r.speed }, { "loss", r.loss },
        { "decision", r.decision },
    };
    if (r.predicted_speed)
        o["predicted_speed"] = *r.predicted_speed;
    return o;
}

IterationRecord iteration_from(const Fields& f)
{
    IterationRecord r;
    r.job = f.int32("job");
    r.worker = f.int32("worker");
    r.iteration = f.integer("iteration");
    r.start_s = f.number("start_s");
    r.end_s = f.number("end_s");
    r.batch_size = f.int32("batch_size");
    r.compute_s = f.number("compute_s");
    r.comm_s = f.number("comm_s");
    r.wait_s = f.number("wait_s");
    r.cpu_share = f.number("cpu_share");
    r.memory_share = f.number("memory_share");
    r.speed = f.number("speed");
    r.predicted_speed = f.optional_number("predicted_speed");
    r.loss = f.number("loss");
    r.decision = f.string_or("decision", "");
    return r;
}

json::object to_json(const EvaluationRecord& e)
{
    return { { "job", e.job }, { "iteration", e.iteration }, { "time_s", e.time_s }, { "wall_s", e.wall_s }, { "epoch", e.epoch },
        { "train_loss", e.train_loss }, { "test_loss", e.test_loss }, { "test_accuracy", e.test_accuracy } };
}

EvaluationRecord evaluation_from(const Fields& f)
{
    EvaluationRecord e;
    e.job = f.int32("job");
    e.iteration = f.integer("iteration");
    e.time_s = f.number("time_s");
    e.wall_s = f.number("wall_s");
    e.epoch = f.number("epoch");
    e.train_loss = f.number("train_loss");
    e.test_loss = f.number("test_loss");
    e.test_accuracy = f.number("test_accuracy");
    return e;
}

json::object to_json(const EventRecord& e)
{
    json::object o { { "job", e.job }, { "iteration", e.iteration }, { "time_s", e.time_s }, { "kind", e.kind },
        { "message", e.message }, { "actor", e.actor } };
    if (e.worker)
        o["worker"] = *e.worker;
    return o;
}

EventRecord event_from(const Fields& f)
{
    EventRecord e;
    e.job = f.int32("job");
    e.iteration = f.integer("iteration");
    e.time_s = f.number("time_s");
    e.kind = f.string("kind");
    if (f.has("worker"))
        e.worker = f.int32("worker");
    e.message = f.string_or("message", "");
    e.actor = f.string_or("actor", "system");
    return e;
}

json::object to_json(const JobStatus& s)
{
    json::object o { { "job", s.job }, { "name", s.name }, { "state", to_string(s.state) }, { "model", s.model },
        { "sync_model", s.sync_model }, { "policy", s.policy }, { "mode", s.mode }, { "workers", s.workers },
        { "iteration", s.iteration }, { "iterations", s.iterations }, { "time_s", s.time_s }, { "elapsed_s", s.elapsed_s },
        { "database", s.database }, { "run", s.run }, { "message", s.message } };
    if (s.accuracy)
        o["accuracy"] = *s.accuracy;
    if (!s.placement.empty())
        o["placement"] = integers_json(s.placement);
    return o;
}

JobStatus job_status_from(const Fields& f)
{
    JobStatus s;
    s.job = f.int32("job");
    s.name = f.string_or("name", "");
    s.state = f.named("state", kJobStates);
    s.model = f.string_or("model", "");
    s.sync_model = f.string_or("sync_model", "");
    s.policy = f.string_or("policy", "");
    s.mode = f.string_or("mode", "");
    s.workers = f.int32("workers", 0);
    s.iteration = f.integer("iteration");
    s.iterations = f.integer("iterations");
    s.time_s = f.number("time_s");
    s.elapsed_s = f.number("elapsed_s");
    s.accuracy = f.optional_number("accuracy");
    s.database = f.string_or("database", "");
    s.run = f.has("run") ? f.integer("run") : 0;
    s.message = f.string_or("message", "");
    if (f.has("placement"))
        s.placement = f.integers<std::int32_t>("placement", -1);
    return s;
}

json::object to_json(const GpuUsage& g)
{
    return { { "gpu", g.gpu }, { "server", g.server }, { "free_memory_gb", g.free_memory_gb }, { "workload_s", g.workload_s },
        { "jobs", integers_json(g.jobs) } };
}

GpuUsage gpu_usage_from(const Fields& f)
{
    return { f.int32("gpu", 0), f.int32("server", 0), f.number("free_memory_gb"), f.number("workload_s"),
        f.integers<JobId>("jobs", 0) };
}

json::object to_json(const ClusterState& c)
{
    json::array gpus;
    for (const GpuUsage& g : c.gpus)
        gpus.push_back(to_json(g));
    return { { "placement", c.placement }, { "servers", c.servers }, { "gpus_per_server", c.gpus_per_server },
        { "gpu_memory_gb", c.gpu_memory_gb }, { "gpus", std::move(gpus) }, { "queue", integers_json(c.queue) } };
}

json::object to_json(const WorkerState& w)
{
    json::object o { { "worker", w.worker }, { "name", w.name }, { "batch_size", w.batch_size }, { "excluded", w.excluded },
        { "member", w.member }, { "slowdown", w.slowdown } };
    if (w.pinned)
        o["pinned"] = *w.pinned;
    if (w.excluded_until)
        o["excluded_until"] = *w.excluded_until;
    return o;
}

WorkerState worker_state_from(const Fields& f)
{
    WorkerState w;
    w.worker = f.int32("worker");
    w.name = f.string_or("name", "");
    w.batch_size = f.int32("batch_size", 0);
    if (f.has("pinned"))
        w.pinned = f.int32("pinned");
    w.excluded = f.boolean("excluded");
    w.excluded_until = f.optional_number("excluded_until");
    w.member = f.has("member") ? f.boolean("member") : true;
    w.slowdown = f.has("slowdown") ? f.number("slowdown") : 1.0;
    return w;
}

json::object to_json(const RunListing& r)
{
    return { { "database", r.database }, { "run", r.run }, { "name", r.name }, { "mode", r.mode }, { "status", r.status },
        { "started_at", r.started_at }, { "finished_at", r.finished_at }, { "jobs", r.jobs }, { "iterations", r.iterations },
        { "rows", r.rows } };
}

RunListing run_listing_from(const Fields& f)
{
    RunListing r;
    r.database = f.string("database");
    r.run = f.integer("run");
    r.name = f.string_or("name", "");
    r.mode = f.string_or("mode", "");
    r.status = f.string_or("status", "");
    r.started_at = f.string_or("started_at", "");
    r.finished_at = f.string_or("finished_at", "");
    r.jobs = f.int32("jobs", 0);
    r.iterations = f.integer("iterations", 0);
    r.rows = f.integer("rows", 0);
    return r;
}

// Stream messages name their replay only when they come from one.
json::object tagged(json::object o, std::int64_t replay)
{
    if (replay != 0)
        o["replay"] = replay;
    return o;
}
std::int64_t replay_of(const Fields& f) { return f.has("replay") ? f.integer("replay", 1) : 0; }

json::object to_json(const ErrorInfo& e)
{
    json::object o { { "code", e.code }, { "message", e.message } };
    if (!e.field.empty())
        o["field"] = e.field;
    return o;
}

ErrorInfo error_from(const Fields& f)
{
    return { f.string("code"), f.string_or("message", ""), f.string_or("field", "") };
}

// --- client messages -------------------------------------------------------------------

struct ClientEncoder {
    json::object operator()(const Hello& m) const { return { { "type", "hello" }, { "version", m.version }, { "client", m.client } }; }
    json::object operator()(const Subscribe& m) const
    {
        json::object o { { "type", "subscribe" }, { "id", m.id } };
        json::array streams;
        for (Stream s : m.streams)
            streams.emplace_back(to_string(s));
        o["streams"] = std::move(streams);
        if (m.job)
            o["job"] = *m.job;
        if (!m.workers.empty()) {
            json::array workers;
            for (WorkerId w : m.workers)
                workers.emplace_back(w);
            o["workers"] = std::move(workers);
        }
        return o;
    }
    json::object operator()(const Unsubscribe& m) const { return { { "type", "unsubscribe" }, { "id", m.id } }; }
    json::object operator()(const ListJobs& m) const { return { { "type", "list-jobs" }, { "id", m.id } }; }
    json::object operator()(const SubmitJob& m) const
    {
        // The scenario travels as a JSON object when it is one, so the frame stays readable.
        json::object o { { "type", "submit-job" }, { "id", m.id } };
        boost::system::error_code ec;
        json::value scenario = json::parse(m.scenario_json, ec);
        if (ec)
            o["scenario"] = m.scenario_json;
        else
            o["scenario"] = std::move(scenario);
        return o;
    }
    json::object operator()(const JobCommand& m) const { return { { "type", to_string(m.action) }, { "id", m.id }, { "job", m.job } }; }
    json::object operator()(const ChangeJob& m) const
    {
        // The spec travels as JSON (an object, or a string such as "bsp") when it is JSON.
        json::object o { { "type", to_string(m.setting) }, { "id", m.id }, { "job", m.job } };
        boost::system::error_code ec;
        json::value spec = json::parse(m.spec_json, ec);
        o[spec_field(m.setting)] = ec ? json::value(m.spec_json) : std::move(spec);
        return o;
    }
    json::object operator()(const WorkerCommand& m) const
    {
        json::object o { { "type", to_string(m.action) }, { "id", m.id }, { "job", m.job }, { "worker", m.worker } };
        if (m.action == WorkerAction::Pin)
            o["batch_size"] = m.batch_size;
        if (m.action == WorkerAction::Exclude && m.for_s)
            o["for_s"] = *m.for_s;
        if (m.action == WorkerAction::InjectStraggler)
            o["slowdown"] = m.slowdown;
        return o;
    }
    json::object operator()(const ListRuns& m) const { return { { "type", "list-runs" }, { "id", m.id } }; }
    json::object operator()(const JoinJob& m) const
    {
        json::object o { { "type", "join-job" }, { "id", m.id }, { "job", m.job }, { "host", m.host } };
        if (m.worker)
            o["worker"] = *m.worker;
        return o;
    }
    json::object operator()(const OpenReplay& m) const
    {
        json::object o { { "type", "open-replay" }, { "id", m.id }, { "database", m.database }, { "run", m.run },
            { "speed", m.speed }, { "paused", m.paused } };
        if (m.from_iteration)
            o["from_iteration"] = *m.from_iteration;
        return o;
    }
    json::object operator()(const ReplayCommand& m) const
    {
        json::object o { { "type", to_string(m.action) }, { "id", m.id }, { "replay", m.replay } };
        if (m.action == ReplayAction::Seek) {
            if (m.iteration)
                o["iteration"] = *m.iteration;
            if (m.time_s)
                o["time_s"] = *m.time_s;
            if (m.job)
                o["job"] = *m.job;
        }
        if (m.action == ReplayAction::SetSpeed)
            o["speed"] = m.speed;
        return o;
    }
};

double replay_speed(const Fields& f)
{
    const double speed = f.number("speed");
    if (!(speed >= 0 && speed <= kMaxReplaySpeed))
        f.illegal("speed", "must be from 0 (as fast as the client reads) to " + std::to_string(static_cast<int>(kMaxReplaySpeed))
            + " (run seconds per wall second)");
    return speed;
}

ClientMessage client_from(std::string_view type, const Fields& f)
{
    if (type == "hello")
        return Hello { static_cast<int>(f.integer("version", 0, 1'000'000)), f.string_or("client", "") };
    if (type == "subscribe") {
        Subscribe s;
        s.id = f.string("id");
        if (f.has("streams")) {
            const json::array& streams = f.array("streams");
            for (std::size_t i = 0; i < streams.size(); ++i)
                s.streams.push_back(named_value(streams[i], "streams[" + std::to_string(i) + "]", kStreams));
        }
        if (f.has("job"))
            s.job = f.int32("job", 0);
        if (f.has("workers")) {
            const json::array& workers = f.array("workers");
            for (std::size_t i = 0; i < workers.size(); ++i) {
                const std::string at = "workers[" + std::to_string(i) + "]";
                if (!workers[i].is_int64() || workers[i].get_int64() < 0 || workers[i].get_int64() > std::numeric_limits<WorkerId>::max())
                    throw FieldError { "wrong-type", at, "'" + at + "' must be a worker id (a whole number >= 0)" };
                s.workers.push_back(static_cast<WorkerId>(workers[i].get_int64()));
            }
        }
        return s;
    }
    if (type == "unsubscribe")
        return Unsubscribe { f.string("id") };
    if (type == "list-jobs")
        return ListJobs { f.string("id") };
    if (type == "submit-job") {
        SubmitJob m;
        m.id = f.string("id");
        const json::value& scenario = f.required("scenario", "a scenario object or its JSON text");
        if (scenario.is_string())
            m.scenario_json = std::string(scenario.get_string());
        else if (scenario.is_object())
            m.scenario_json = json::serialize(scenario);
        else
            f.wrong("scenario", "a scenario object or its JSON text", scenario);
        return m;
    }
    if (const auto action = value_named(kJobActions, type))
        return JobCommand { f.string("id"), *action, f.int32("job", 0) };
    if (const auto setting = value_named(kJobSettings, type)) {
        ChangeJob m;
        m.id = f.string("id");
        m.setting = *setting;
        m.job = f.int32("job", 0);
        const std::string field(spec_field(m.setting));
        const char* expected = m.setting == JobSetting::Policy ? "a policy object (the scenario's \"policy\" section)"
                                                                : "a sync model: a name or the scenario's \"sync\" object";
        const json::value& spec = f.required(field, expected);
        if (spec.is_object() || (m.setting == JobSetting::SyncModel && spec.is_string()))
            m.spec_json = json::serialize(spec);
        else
            f.wrong(field, expected, spec);
        return m;
    }
    if (const auto action = value_named(kWorkerActions, type)) {
        WorkerCommand m;
        m.id = f.string("id");
        m.action = *action;
        m.job = f.int32("job", 0);
        m.worker = f.int32("worker", 0);
        if (m.action == WorkerAction::Pin)
            m.batch_size = f.int32("batch_size");
        if (m.action == WorkerAction::Exclude && f.has("for_s")) {
            m.for_s = f.number("for_s");
            if (!(*m.for_s > 0))
                f.illegal("for_s", "must be a positive number of seconds");
        }
        if (m.action == WorkerAction::InjectStraggler) {
            m.slowdown = f.number("slowdown");
            if (!(m.slowdown >= 1 && m.slowdown <= 1000))
                f.illegal("slowdown", "must be a factor from 1 to 1000 (batches take this many times longer)");
        }
        return m;
    }
    if (type == "list-runs")
        return ListRuns { f.string("id") };
    if (type == "join-job") {
        JoinJob m;
        m.id = f.string("id");
        m.job = f.int32("job", 0);
        if (f.has("worker"))
            m.worker = f.int32("worker", 0);
        m.host = f.string_or("host", "");
        return m;
    }
    if (type == "open-replay") {
        OpenReplay m;
        m.id = f.string("id");
        m.database = f.string("database");
        m.run = f.integer("run", 1);
        if (f.has("speed"))
            m.speed = replay_speed(f);
        if (f.has("from_iteration"))
            m.from_iteration = f.integer("from_iteration", 0);
        if (f.has("paused"))
            m.paused = f.boolean("paused");
        return m;
    }
    if (const auto action = value_named(kReplayActions, type)) {
        ReplayCommand m;
        m.id = f.string("id");
        m.action = *action;
        m.replay = f.integer("replay", 1);
        if (m.action == ReplayAction::Seek) {
            if (f.has("iteration") == f.has("time_s"))
                f.illegal("iteration", "or 'time_s': a seek needs exactly one of the two");
            if (f.has("iteration"))
                m.iteration = f.integer("iteration", 0);
            if (f.has("time_s"))
                m.time_s = f.number("time_s");
            if (f.has("job"))
                m.job = f.int32("job");
        }
        if (m.action == ReplayAction::SetSpeed)
            m.speed = replay_speed(f);
        return m;
    }
    throw FieldError { "unknown-type", "type", "unknown message type '" + std::string(type) + "'" };
}

// --- server messages -------------------------------------------------------------------

struct ServerEncoder {
    json::object operator()(const Welcome& m) const
    {
        return { { "type", "welcome" }, { "version", m.version }, { "server", m.server }, { "role", to_string(m.role) } };
    }
    json::object operator()(const Reply& m) const
    {
        json::object o { { "type", "reply" }, { "id", m.id }, { "ok", !m.error } };
        if (m.error)
            o["error"] = to_json(*m.error);
        if (m.job)
            o["job"] = *m.job;
        if (!m.jobs.empty()) {
            json::array jobs;
            for (const JobStatus& s : m.jobs)
                jobs.push_back(to_json(s));
            o["jobs"] = std::move(jobs);
        }
        if (!m.runs.empty()) {
            json::array runs;
            for (const RunListing& r : m.runs)
                runs.push_back(to_json(r));
            o["runs"] = std::move(runs);
        }
        if (m.replay)
            o["replay"] = *m.replay;
        if (m.assignment) {
            const WorkerAssignment& a = *m.assignment;
            boost::system::error_code ec;
            json::value scenario = json::parse(a.scenario_json, ec);
            o["assignment"] = json::object { { "job", a.job }, { "worker", a.worker },
                { "scenario", ec ? json::value(a.scenario_json) : std::move(scenario) }, { "parameters", a.parameters } };
        }
        return o;
    }
    json::object operator()(const ProtocolError& m) const { return { { "type", "error" }, { "error", to_json(m.error) } }; }
    json::object operator()(const IterationRows& m) const
    {
        json::array rows;
        rows.reserve(m.rows.size());
        for (const IterationRecord& r : m.rows)
            rows.push_back(to_json(r));
        return tagged({ { "type", "iterations" }, { "job", m.job }, { "iteration", m.iteration }, { "rows", std::move(rows) } }, m.replay);
    }
    json::object operator()(const Evaluation& m) const
    {
        return tagged({ { "type", "evaluation" }, { "evaluation", to_json(m.evaluation) } }, m.replay);
    }
    json::object operator()(const Event& m) const { return tagged({ { "type", "event" }, { "event", to_json(m.event) } }, m.replay); }
    json::object operator()(const JobUpdate& m) const
    {
        return tagged({ { "type", "job-status" }, { "status", to_json(m.status) } }, m.replay);
    }
    json::object operator()(const WorkerUpdate& m) const
    {
        json::array workers;
        for (const WorkerState& w : m.workers)
            workers.push_back(to_json(w));
        return tagged({ { "type", "worker-states" }, { "job", m.job }, { "workers", std::move(workers) } }, m.replay);
    }
    json::object operator()(const ClusterUpdate& m) const { return { { "type", "cluster-state" }, { "cluster", to_json(m.cluster) } }; }
    json::object operator()(const SnapshotEnd& m) const { return { { "type", "snapshot-end" }, { "id", m.id } }; }
    json::object operator()(const Missed& m) const
    {
        return { { "type", "missed" }, { "dropped", m.dropped }, { "coalesced", m.coalesced } };
    }
    json::object operator()(const ReplayState& m) const
    {
        return { { "type", "replay-state" }, { "replay", m.replay }, { "database", m.database }, { "run", m.run },
            { "state", to_string(m.state) }, { "speed", m.speed }, { "position", m.position }, { "length", m.length },
            { "job", m.job }, { "iteration", m.iteration }, { "time_s", m.time_s }, { "end_time_s", m.end_time_s },
            { "seeked", m.seeked } };
    }
};

template <class Element, class Read>
std::vector<Element> read_array(const Fields& f, std::string_view name, Read read)
{
    std::vector<Element> out;
    const json::array& a = f.array(name);
    out.reserve(a.size());
    for (std::size_t i = 0; i < a.size(); ++i)
        out.push_back(read(f.element(name, i, a[i])));
    return out;
}

ServerMessage server_from(std::string_view type, const Fields& f)
{
    if (type == "welcome")
        return Welcome { static_cast<int>(f.integer("version", 0, 1'000'000)), f.string_or("server", ""), f.named("role", kRoles) };
    if (type == "reply") {
        Reply r;
        r.id = f.string("id");
        if (f.has("error"))
            r.error = error_from(Fields(f.object("error"), "error"));
        if (f.has("job"))
            r.job = f.int32("job");
        if (f.has("jobs"))
            r.jobs = read_array<JobStatus>(f, "jobs", job_status_from);
        if (f.has("runs"))
            r.runs = read_array<RunListing>(f, "runs", run_listing_from);
        if (f.has("replay"))
            r.replay = f.integer("replay", 1);
        if (f.has("assignment")) {
            const Fields a(f.object("assignment"), "assignment");
            WorkerAssignment w;
            w.job = a.int32("job", 0);
            w.worker = a.int32("worker", 0);
            const json::value& scenario = a.required("scenario", "the job's scenario");
            w.scenario_json = scenario.is_string() ? std::string(scenario.get_string()) : json::serialize(scenario);
            w.parameters = a.integer("parameters", 0);
            r.assignment = std::move(w);
        }
        return r;
    }
    if (type == "error")
        return ProtocolError { error_from(Fields(f.object("error"), "error")) };
    if (type == "iterations")
        return IterationRows { f.int32("job"), f.integer("iteration"), read_array<IterationRecord>(f, "rows", iteration_from), replay_of(f) };
    if (type == "evaluation")
        return Evaluation { evaluation_from(Fields(f.object("evaluation"), "evaluation")), replay_of(f) };
    if (type == "event")
        return Event { event_from(Fields(f.object("event"), "event")), replay_of(f) };
    if (type == "job-status")
        return JobUpdate { job_status_from(Fields(f.object("status"), "status")), replay_of(f) };
    if (type == "worker-states")
        return WorkerUpdate { f.int32("job"), read_array<WorkerState>(f, "workers", worker_state_from), replay_of(f) };
    if (type == "snapshot-end")
        return SnapshotEnd { f.string("id") };
    if (type == "cluster-state") {
        const Fields c(f.object("cluster"), "cluster");
        ClusterState m;
        m.placement = c.string_or("placement", "");
        m.servers = c.int32("servers", 0);
        m.gpus_per_server = c.int32("gpus_per_server", 0);
        m.gpu_memory_gb = c.number("gpu_memory_gb");
        m.gpus = read_array<GpuUsage>(c, "gpus", gpu_usage_from);
        m.queue = c.integers<JobId>("queue", 0);
        return ClusterUpdate { std::move(m) };
    }
    if (type == "missed")
        return Missed { f.integer("dropped", 0), f.integer("coalesced", 0) };
    if (type == "replay-state") {
        ReplayState m;
        m.replay = f.integer("replay", 1);
        m.database = f.string_or("database", "");
        m.run = f.integer("run");
        m.state = f.named("state", kReplayPhases);
        m.speed = f.number("speed");
        m.position = f.integer("position", 0);
        m.length = f.integer("length", 0);
        m.job = f.int32("job");
        m.iteration = f.integer("iteration", -1);
        m.time_s = f.number("time_s");
        m.end_time_s = f.number("end_time_s");
        m.seeked = f.has("seeked") && f.boolean("seeked");
        return m;
    }
    throw FieldError { "unknown-type", "type", "unknown message type '" + std::string(type) + "'" };
}

// JSON has no infinity: a number beyond a double's range (-5e607) would otherwise reach a
// free-form section (a scenario, a policy) as infinity and come out of encode as something
// that no longer decodes. The path of the first such number, or empty.
std::string out_of_range_number(const json::value& value, const std::string& path)
{
    if (value.is_double())
        return std::isfinite(value.get_double()) ? std::string() : (path.empty() ? std::string("(the frame)") : path);
    if (value.is_object()) {
        for (const auto& [key, member] : value.get_object())
            if (std::string at = out_of_range_number(member, path.empty() ? std::string(key) : path + "." + std::string(key)); !at.empty())
                return at;
    } else if (value.is_array()) {
        const json::array& items = value.get_array();
        for (std::size_t i = 0; i < items.size(); ++i)
            if (std::string at = out_of_range_number(items[i], path + "[" + std::to_string(i) + "]"); !at.empty())
                return at;
    }
    return {};
}

template <class Message, class Read>
Decoded<Message> decode(std::string_view frame, Read read)
{
    Decoded<Message> out;
    if (frame.size() > kMaxFrameBytes) {
        out.error = { "frame-too-large", "frame of " + std::to_string(frame.size()) + " bytes; the limit is "
            + std::to_string(kMaxFrameBytes), "" };
        return out;
    }
    boost::system::error_code ec;
    json::monotonic_resource memory;
    const json::value value = detail::parse_precise(frame, ec, &memory, 64);
    if (ec) {
        out.error = { "malformed-json", "the frame is not JSON: " + ec.message(), "" };
        return out;
    }
    if (!value.is_object()) {
        out.error = { "wrong-type", "a message must be a JSON object, got " + std::string(kind_of(value)), "" };
        return out;
    }
    const json::object& object = value.get_object();
    if (const json::value* id = object.if_contains("id"); id && id->is_string())
        out.request_id = std::string(id->get_string());
    if (const std::string at = out_of_range_number(value, ""); !at.empty()) {
        out.error = { "illegal-value", "'" + at + "' is a number beyond the range of a double (about ±1.8e308)", at };
        return out;
    }
    try {
        const Fields fields(object);
        const std::string type = fields.string("type");
        out.message = read(type, fields);
    } catch (const FieldError& e) {
        out.error = { e.code, e.message, e.field };
    }
    return out;
}

} // namespace

Decoded<ClientMessage> decode_client(std::string_view frame) { return decode<ClientMessage>(frame, client_from); }
Decoded<ServerMessage> decode_server(std::string_view frame) { return decode<ServerMessage>(frame, server_from); }

std::string encode(const ClientMessage& message) { return json::serialize(std::visit(ClientEncoder {}, message)); }
std::string encode(const ServerMessage& message) { return json::serialize(std::visit(ServerEncoder {}, message)); }

std::string_view type_name(const ClientMessage& message)
{
    struct Name {
        std::string_view operator()(const Hello&) const { return "hello"; }
        std::string_view operator()(const Subscribe&) const { return "subscribe"; }
        std::string_view operator()(const Unsubscribe&) const { return "unsubscribe"; }
        std::string_view operator()(const ListJobs&) const { return "list-jobs"; }
        std::string_view operator()(const SubmitJob&) const { return "submit-job"; }
        std::string_view operator()(const JobCommand& m) const { return to_string(m.action); }
        std::string_view operator()(const ChangeJob& m) const { return to_string(m.setting); }
        std::string_view operator()(const WorkerCommand& m) const { return to_string(m.action); }
        std::string_view operator()(const ListRuns&) const { return "list-runs"; }
        std::string_view operator()(const OpenReplay&) const { return "open-replay"; }
        std::string_view operator()(const ReplayCommand& m) const { return to_string(m.action); }
        std::string_view operator()(const JoinJob&) const { return "join-job"; }
    };
    return std::visit(Name {}, message);
}

std::string_view type_name(const ServerMessage& message)
{
    static_assert(std::variant_size_v<ServerMessage> == 12, "a name for every server message");
    static constexpr std::string_view kNames[] = { "welcome", "reply", "error", "iterations", "evaluation", "event", "job-status",
        "worker-states", "snapshot-end", "missed", "replay-state", "cluster-state" };
    return kNames[message.index()];
}

std::string_view to_string(Role role) { return name_of(kRoles, role); }
std::string_view to_string(Stream stream) { return name_of(kStreams, stream); }
std::string_view to_string(JobState state) { return name_of(kJobStates, state); }
std::string_view to_string(JobAction action) { return name_of(kJobActions, action); }
std::string_view to_string(JobSetting setting) { return name_of(kJobSettings, setting); }
std::string_view to_string(WorkerAction action) { return name_of(kWorkerActions, action); }
std::string_view to_string(ReplayAction action) { return name_of(kReplayActions, action); }
std::string_view to_string(ReplayPhase phase) { return name_of(kReplayPhases, phase); }

} // namespace fulcrum::protocol
