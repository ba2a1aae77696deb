// The messages clients send (the console, fulcrum-worker, tools): one Wire entry each.

#include "protocol/codec_support.h"

namespace fulcrum::protocol {

namespace detail {

namespace {

// A scenario given as an object (the frame stays readable) or as its JSON text.
std::string scenario_of(const Fields& f)
{
    const json::value& scenario = f.required("scenario", "a scenario object or its JSON text");
    if (scenario.is_string())
        return std::string(scenario.get_string());
    if (!scenario.is_object())
        f.wrong_type(f.at("scenario"), "a scenario object or its JSON text", scenario);
    return json::serialize(scenario);
}

double replay_speed(const Fields& f)
{
    const double speed = f.number("speed");
    if (!(speed >= 0 && speed <= kMaxReplaySpeed))
        f.fail(f.at("speed"),
            "must be from 0 (as fast as the client reads) to " + std::to_string(static_cast<int>(kMaxReplaySpeed))
                + " (run seconds per wall second)");
    return speed;
}

// A section that travels as JSON when it is JSON (a scenario, a policy), else as its text.
json::value as_json(const std::string& text)
{
    boost::system::error_code ec;
    json::value value = json::parse(text, ec);
    return ec ? json::value(text) : std::move(value);
}

} // namespace

template <> struct Wire<Hello> : NamedAs<"hello"> {
    static void encode(const Hello& m, json::object& o)
    {
        o["version"] = m.version;
        o["client"] = m.client;
    }
    static Hello decode(std::string_view, const Fields& f)
    {
        return Hello { static_cast<int>(f.integer("version", 0, 1'000'000)), f.string_or("client", "") };
    }
};

template <> struct Wire<Subscribe> : NamedAs<"subscribe"> {
    static void encode(const Subscribe& m, json::object& o)
    {
        o["id"] = m.id;
        json::array streams;
        for (Stream s : m.streams)
            streams.emplace_back(to_string(s));
        o["streams"] = std::move(streams);
        if (m.job)
            o["job"] = *m.job;
        if (!m.workers.empty())
            o["workers"] = integers_json(m.workers);
    }
    static Subscribe decode(std::string_view, const Fields& f)
    {
        Subscribe s;
        s.id = f.string("id");
        if (f.has("streams")) {
            const json::array& streams = f.array("streams");
            for (std::size_t i = 0; i < streams.size(); ++i)
                s.streams.push_back(f.named_value(streams[i], f.element_path("streams", i), kStreams));
        }
        if (f.has("job"))
            s.job = f.int32("job", 0);
        if (f.has("workers")) {
            const json::array& workers = f.array("workers");
            for (std::size_t i = 0; i < workers.size(); ++i) {
                const std::string at = "workers[" + std::to_string(i) + "]";
                if (!workers[i].is_int64() || workers[i].get_int64() < 0
                    || workers[i].get_int64() > std::numeric_limits<WorkerId>::max())
                    f.fail(at, "expected a worker id (a whole number >= 0)", "wrong-type");
                s.workers.push_back(static_cast<WorkerId>(workers[i].get_int64()));
            }
        }
        return s;
    }
};

template <> struct Wire<Unsubscribe> : NamedAs<"unsubscribe"> {
    static void encode(const Unsubscribe& m, json::object& o) { o["id"] = m.id; }
    static Unsubscribe decode(std::string_view, const Fields& f) { return Unsubscribe { f.string("id") }; }
};

template <> struct Wire<ListJobs> : NamedAs<"list-jobs"> {
    static void encode(const ListJobs& m, json::object& o) { o["id"] = m.id; }
    static ListJobs decode(std::string_view, const Fields& f) { return ListJobs { f.string("id") }; }
};

template <> struct Wire<SubmitJob> : NamedAs<"submit-job"> {
    // The scenario travels as a JSON object when it is one, so the frame stays readable.
    static void encode(const SubmitJob& m, json::object& o)
    {
        o["id"] = m.id;
        o["scenario"] = as_json(m.scenario_json);
    }
    static SubmitJob decode(std::string_view, const Fields& f) { return SubmitJob { f.string("id"), scenario_of(f) }; }
};

template <> struct Wire<SubmitWorkload> : NamedAs<"submit-workload"> {
    static void encode(const SubmitWorkload& m, json::object& o)
    {
        o["id"] = m.id;
        json::array jobs;
        for (const SubmitWorkload::Arrival& a : m.jobs)
            jobs.emplace_back(json::object { { "scenario", as_json(a.scenario_json) }, { "arrival_s", a.arrival_s } });
        o["jobs"] = std::move(jobs);
    }
    static SubmitWorkload decode(std::string_view, const Fields& f)
    {
        SubmitWorkload m;
        m.id = f.string("id");
        const json::array& jobs = f.array("jobs");
        if (jobs.empty())
            f.fail(f.at("jobs"), "a workload needs at least one job");
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            const Fields job = f.element("jobs", i, jobs[i]);
            m.jobs.push_back({ scenario_of(job), job.number("arrival_s", 0, 1e12) });
        }
        return m;
    }
};

template <> struct Wire<JobCommand> : NamedBy<kJobActions, &JobCommand::action> {
    static void encode(const JobCommand& m, json::object& o)
    {
        o["id"] = m.id;
        o["job"] = m.job;
    }
    static JobCommand decode(std::string_view type, const Fields& f)
    {
        return JobCommand { f.string("id"), *value_named(kJobActions, type), f.int32("job", 0) };
    }
};

template <> struct Wire<ChangeJob> : NamedBy<kJobSettings, &ChangeJob::setting> {
    // The spec travels as JSON (an object, or a string such as "bsp") when it is JSON.
    static void encode(const ChangeJob& m, json::object& o)
    {
        o["id"] = m.id;
        o["job"] = m.job;
        o[spec_field(m.setting)] = as_json(m.spec_json);
    }
    static ChangeJob decode(std::string_view type, const Fields& f)
    {
        ChangeJob m;
        m.id = f.string("id");
        m.setting = *value_named(kJobSettings, type);
        m.job = f.int32("job", 0);
        const std::string field(spec_field(m.setting));
        const char* expected = m.setting == JobSetting::Policy
            ? "a policy object (the scenario's \"policy\" section)"
            : "a sync model: a name or the scenario's \"sync\" object";
        const json::value& spec = f.required(field, expected);
        if (spec.is_object() || (m.setting == JobSetting::SyncModel && spec.is_string()))
            m.spec_json = json::serialize(spec);
        else
            f.wrong_type(f.at(field), expected, spec);
        return m;
    }
};

template <> struct Wire<WorkerCommand> : NamedBy<kWorkerActions, &WorkerCommand::action> {
    static void encode(const WorkerCommand& m, json::object& o)
    {
        o["id"] = m.id;
        o["job"] = m.job;
        o["worker"] = m.worker;
        if (m.action == WorkerAction::Pin)
            o["batch_size"] = m.batch_size;
        if (m.action == WorkerAction::Exclude && m.for_s)
            o["for_s"] = *m.for_s;
        if (m.action == WorkerAction::InjectStraggler)
            o["slowdown"] = m.slowdown;
    }
    static WorkerCommand decode(std::string_view type, const Fields& f)
    {
        WorkerCommand m;
        m.id = f.string("id");
        m.action = *value_named(kWorkerActions, type);
        m.job = f.int32("job", 0);
        m.worker = f.int32("worker", 0);
        if (m.action == WorkerAction::Pin)
            m.batch_size = f.int32("batch_size");
        if (m.action == WorkerAction::Exclude && f.has("for_s")) {
            m.for_s = f.number("for_s");
            if (!(*m.for_s > 0))
                f.fail(f.at("for_s"), "must be a positive number of seconds");
        }
        if (m.action == WorkerAction::InjectStraggler) {
            m.slowdown = f.number("slowdown");
            if (!(m.slowdown >= 1 && m.slowdown <= 1000))
                f.fail(f.at("slowdown"), "must be a factor from 1 to 1000 (batches take this many times longer)");
        }
        return m;
    }
};

template <> struct Wire<ListRuns> : NamedAs<"list-runs"> {
    static void encode(const ListRuns& m, json::object& o) { o["id"] = m.id; }
    static ListRuns decode(std::string_view, const Fields& f) { return ListRuns { f.string("id") }; }
};

template <> struct Wire<JoinJob> : NamedAs<"join-job"> {
    static void encode(const JoinJob& m, json::object& o)
    {
        o["id"] = m.id;
        o["job"] = m.job;
        o["host"] = m.host;
        if (m.worker)
            o["worker"] = *m.worker;
    }
    static JoinJob decode(std::string_view, const Fields& f)
    {
        JoinJob m;
        m.id = f.string("id");
        m.job = f.int32("job", 0);
        if (f.has("worker"))
            m.worker = f.int32("worker", 0);
        m.host = f.string_or("host", "");
        return m;
    }
};

template <> struct Wire<JoinPool> : NamedAs<"join-pool"> {
    static void encode(const JoinPool& m, json::object& o)
    {
        o["id"] = m.id;
        o["host"] = m.host;
    }
    static JoinPool decode(std::string_view, const Fields& f)
    {
        return JoinPool { f.string("id"), f.string_or("host", "") };
    }
};

template <> struct Wire<OpenReplay> : NamedAs<"open-replay"> {
    static void encode(const OpenReplay& m, json::object& o)
    {
        o["id"] = m.id;
        o["database"] = m.database;
        o["run"] = m.run;
        o["speed"] = m.speed;
        o["paused"] = m.paused;
        if (m.from_iteration)
            o["from_iteration"] = *m.from_iteration;
    }
    static OpenReplay decode(std::string_view, const Fields& f)
    {
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
};

template <> struct Wire<ReplayCommand> : NamedBy<kReplayActions, &ReplayCommand::action> {
    static void encode(const ReplayCommand& m, json::object& o)
    {
        o["id"] = m.id;
        o["replay"] = m.replay;
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
    }
    static ReplayCommand decode(std::string_view type, const Fields& f)
    {
        ReplayCommand m;
        m.id = f.string("id");
        m.action = *value_named(kReplayActions, type);
        m.replay = f.integer("replay", 1);
        if (m.action == ReplayAction::Seek) {
            if (f.has("iteration") == f.has("time_s"))
                f.fail(f.at("iteration"), "or 'time_s': a seek needs exactly one of the two");
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
};

template <> struct Wire<ResizeJob> : NamedAs<"resize-job"> {
    static void encode(const ResizeJob& m, json::object& o)
    {
        o["id"] = m.id;
        o["job"] = m.job;
        o["action"] = std::string(action_name(m.action));
        if (m.worker)
            o["worker"] = *m.worker;
    }
    static ResizeJob decode(std::string_view, const Fields& f)
    {
        ResizeJob m;
        m.id = f.string("id");
        m.job = f.int32("job", 0);
        m.action = f.named("action", kResizeActions);
        if (f.has("worker"))
            m.worker = f.int32("worker", 0);
        return m;
    }
};

template <> struct Wire<SetClusterPolicy> : NamedAs<"set-cluster-policy"> {
    static void encode(const SetClusterPolicy& m, json::object& o)
    {
        o["id"] = m.id;
        if (m.placement)
            o["placement"] = *m.placement;
        if (m.elastic)
            o["elastic"] = *m.elastic;
        if (m.comm)
            o["comm"] = *m.comm;
    }
    static SetClusterPolicy decode(std::string_view, const Fields& f)
    {
        SetClusterPolicy m;
        m.id = f.string("id");
        if (f.has("placement"))
            m.placement = f.string("placement");
        if (f.has("elastic"))
            m.elastic = f.string("elastic");
        if (f.has("comm"))
            m.comm = f.string("comm");
        return m;
    }
};

template <> struct Wire<Heartbeat> : NamedAs<"heartbeat"> {
    static void encode(const Heartbeat& m, json::object& o)
    {
        if (m.evaluating)
            o["evaluating"] = true;
        if (m.collective)
            o["collective"] = true;
    }
    static Heartbeat decode(std::string_view, const Fields& f)
    {
        return { f.boolean_or("evaluating", false), f.boolean_or("collective", false) };
    }
};

template <> struct Wire<ListCapabilities> : NamedAs<"list-capabilities"> {
    static void encode(const ListCapabilities& m, json::object& o) { o["id"] = m.id; }
    static ListCapabilities decode(std::string_view, const Fields& f) { return ListCapabilities { f.string("id") }; }
};

template <> struct Wire<ReportIteration> : NamedAs<"report-iteration"> {
    static void encode(const ReportIteration& m, json::object& o)
    {
        o["id"] = m.id;
        o["job"] = m.job;
        o["rank"] = m.rank;
        o["iteration"] = m.iteration;
        if (m.iteration < 0) {
            if (m.resume_from)
                o["resume_from"] = *m.resume_from;
            return;
        }
        o["batch_size"] = m.batch_size;
        o["compute_s"] = m.compute_s;
        o["sync_s"] = m.sync_s;
        o["cpu_share"] = m.cpu_share;
        o["memory_share"] = m.memory_share;
        o["loss"] = m.loss;
        if (m.gpu_memory_gb)
            o["gpu_memory_gb"] = *m.gpu_memory_gb;
        if (m.test_accuracy)
            o["test_accuracy"] = *m.test_accuracy;
        if (m.test_loss)
            o["test_loss"] = *m.test_loss;
    }
    static ReportIteration decode(std::string_view, const Fields& f)
    {
        ReportIteration m;
        m.id = f.string("id");
        m.job = f.int32("job", 0);
        m.rank = f.int32("rank", 0);
        m.iteration = f.integer("iteration", -1);
        if (m.iteration < 0) {
            if (f.has("resume_from"))
                m.resume_from = f.integer("resume_from", 0);
            return m;
        }
        m.batch_size = f.int32("batch_size", 0);
        m.compute_s = f.number("compute_s", 0, 1e7);
        m.sync_s = f.number_or("sync_s", 0, 0, 1e7);
        m.cpu_share = f.number_or("cpu_share", 1, 0, 1);
        m.memory_share = f.number_or("memory_share", 1, 0, 1);
        m.loss = f.number_or("loss", 0, std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max());
        if (f.has("gpu_memory_gb"))
            m.gpu_memory_gb = f.number("gpu_memory_gb", 0, 1e6);
        if (f.has("test_accuracy"))
            m.test_accuracy = f.number("test_accuracy", 0, 1);
        if (f.has("test_loss"))
            m.test_loss = f.number("test_loss", 0);
        return m;
    }
};

} // namespace detail

Decoded<ClientMessage> decode_client(std::string_view frame)
{
    return detail::decode_frame<ClientMessage>(frame, detail::read_message<ClientMessage>);
}

std::string encode(const ClientMessage& message)
{
    return detail::json::serialize(detail::write_message(message));
}
std::string_view type_name(const ClientMessage& message)
{
    return detail::name_message(message);
}

} // namespace fulcrum::protocol
