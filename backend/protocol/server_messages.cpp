// The messages fulcrumd sends: replies, errors and the streams. One Wire entry each.

#include "protocol/codec_support.h"

namespace fulcrum::protocol {

namespace detail {

namespace {

template <class Element, class Read> std::vector<Element> read_array(const Fields& f, std::string_view name, Read read)
{
    std::vector<Element> out;
    const json::array& a = f.array(name);
    out.reserve(a.size());
    for (std::size_t i = 0; i < a.size(); ++i)
        out.push_back(read(f.element(name, i, a[i])));
    return out;
}

json::array capability_json(const std::vector<Capability>& list)
{
    json::array out;
    for (const Capability& c : list) {
        json::object o { { "name", c.name }, { "description", c.description } };
        if (!c.family.empty())
            o["family"] = c.family;
        if (!c.required.empty()) {
            json::array required;
            for (const std::string& field : c.required)
                required.emplace_back(field);
            o["required"] = std::move(required);
        }
        if (!c.fields.empty()) {
            json::array fields;
            for (const std::string& field : c.fields)
                fields.emplace_back(field);
            o["fields"] = std::move(fields);
        }
        out.push_back(std::move(o));
    }
    return out;
}

std::vector<Capability> capabilities_from(const Fields& f, std::string_view name)
{
    std::vector<Capability> out;
    if (!f.has(name))
        return out;
    const json::array& a = f.array(name);
    for (std::size_t i = 0; i < a.size(); ++i) {
        const Fields c = f.element(name, i, a[i]);
        Capability capability { c.string("name"), c.string_or("description", ""), c.string_or("family", ""), {} };
        if (c.has("required"))
            capability.required = c.strings("required", "field names");
        if (c.has("fields"))
            capability.fields = c.strings("fields", "field names");
        out.push_back(std::move(capability));
    }
    return out;
}

template <class Record> json::array json_array(const std::vector<Record>& records)
{
    json::array out;
    out.reserve(records.size());
    for (const Record& r : records)
        out.push_back(to_json(r));
    return out;
}

// join-job's reply and worker-assigned: the scenario travels as the JSON object it is.
json::object assignment_json(const WorkerAssignment& a)
{
    boost::system::error_code ec;
    json::value scenario = json::parse(a.scenario_json, ec);
    return json::object { { "job", a.job }, { "worker", a.worker },
        { "scenario", ec ? json::value(a.scenario_json) : std::move(scenario) }, { "parameters", a.parameters } };
}

WorkerAssignment assignment_from(const Fields& a)
{
    WorkerAssignment w;
    w.job = a.int32("job", 0);
    w.worker = a.int32("worker", 0);
    const json::value& scenario = a.required("scenario", "the job's scenario");
    w.scenario_json = scenario.is_string() ? std::string(scenario.get_string()) : json::serialize(scenario);
    w.parameters = a.integer("parameters", 0);
    return w;
}

} // namespace

template <> struct Wire<Welcome> : NamedAs<"welcome"> {
    static void encode(const Welcome& m, json::object& o)
    {
        o["version"] = m.version;
        o["server"] = m.server;
        o["role"] = to_string(m.role);
        o["tenant"] = m.tenant;
        if (m.all_tenants)
            o["all_tenants"] = true;
    }
    static Welcome decode(std::string_view, const Fields& f)
    {
        Welcome m;
        m.version = static_cast<int>(f.integer("version", 0, 1'000'000));
        m.server = f.string_or("server", "");
        m.role = f.named("role", kRoles);
        m.tenant = f.string_or("tenant", std::string(kDefaultTenant));
        m.all_tenants = f.has("all_tenants") && f.boolean("all_tenants");
        return m;
    }
};

template <> struct Wire<Reply> : NamedAs<"reply"> {
    static void encode(const Reply& m, json::object& o)
    {
        o["id"] = m.id;
        o["ok"] = !m.error;
        if (m.error)
            o["error"] = to_json(*m.error);
        if (m.job)
            o["job"] = *m.job;
        if (!m.jobs.empty())
            o["jobs"] = json_array(m.jobs);
        if (!m.runs.empty())
            o["runs"] = json_array(m.runs);
        if (m.replay)
            o["replay"] = *m.replay;
        if (m.assignment)
            o["assignment"] = assignment_json(*m.assignment);
        if (m.capabilities)
            o["capabilities"] = json::object { { "policies", capability_json(m.capabilities->policies) },
                { "sync_models", capability_json(m.capabilities->sync_models) },
                { "predictors", capability_json(m.capabilities->predictors) },
                { "placements", capability_json(m.capabilities->placements) },
                { "comm_policies", capability_json(m.capabilities->comm_policies) },
                { "elastic_policies", capability_json(m.capabilities->elastic_policies) },
                { "window_algorithms", capability_json(m.capabilities->window_algorithms) },
                { "models", capability_json(m.capabilities->models) } };
        if (m.plan) {
            json::array slowdowns;
            for (const double f : m.plan->slowdowns)
                slowdowns.emplace_back(f);
            json::object plan { { "state", m.plan->state }, { "iteration", m.plan->iteration },
                { "batch_sizes", integers_json(m.plan->batch_sizes) }, { "slowdowns", std::move(slowdowns) },
                { "message", m.plan->message } };
            if (!m.plan->ahead.empty()) {
                json::array ahead;
                for (const auto& sizes : m.plan->ahead)
                    ahead.emplace_back(integers_json(sizes));
                plan["ahead"] = std::move(ahead);
            }
            o["plan"] = std::move(plan);
        }
    }
    static Reply decode(std::string_view, const Fields& f)
    {
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
        if (f.has("assignment"))
            r.assignment = assignment_from(Fields(f.object("assignment"), "assignment"));
        if (f.has("capabilities")) {
            const Fields c(f.object("capabilities"), "capabilities");
            r.capabilities = Capabilities { capabilities_from(c, "policies"), capabilities_from(c, "sync_models"),
                capabilities_from(c, "predictors"), capabilities_from(c, "placements"),
                capabilities_from(c, "comm_policies"), capabilities_from(c, "elastic_policies"),
                capabilities_from(c, "window_algorithms"), capabilities_from(c, "models") };
        }
        if (f.has("plan")) {
            const Fields p(f.object("plan"), "plan");
            RankPlan plan;
            plan.state = p.string("state");
            plan.iteration = p.integer("iteration");
            plan.batch_sizes = p.integers<std::int32_t>("batch_sizes", 0);
            const json::array& slowdowns = p.array("slowdowns");
            for (std::size_t i = 0; i < slowdowns.size(); ++i)
                plan.slowdowns.push_back(p.number_value(slowdowns[i], p.element_path("slowdowns", i), 1, 1000));
            plan.message = p.string_or("message", "");
            if (p.has("ahead")) {
                const json::array& ahead = p.array("ahead");
                for (std::size_t i = 0; i < ahead.size(); ++i) {
                    const std::string path = p.element_path("ahead", i);
                    if (!ahead[i].is_array())
                        p.wrong_type(path, "an array of batch sizes", ahead[i]);
                    std::vector<std::int32_t>& sizes = plan.ahead.emplace_back();
                    const json::array& listed = ahead[i].get_array();
                    for (std::size_t j = 0; j < listed.size(); ++j)
                        sizes.push_back(static_cast<std::int32_t>(p.integer_value(listed[j],
                            path + "[" + std::to_string(j) + "]", 0, std::numeric_limits<std::int32_t>::max())));
                }
            }
            r.plan = std::move(plan);
        }
        return r;
    }
};

template <> struct Wire<ProtocolError> : NamedAs<"error"> {
    static void encode(const ProtocolError& m, json::object& o) { o["error"] = to_json(m.error); }
    static ProtocolError decode(std::string_view, const Fields& f)
    {
        return ProtocolError { error_from(Fields(f.object("error"), "error")) };
    }
};

template <> struct Wire<IterationRows> : NamedAs<"iterations"> {
    static void encode(const IterationRows& m, json::object& o)
    {
        o["job"] = m.job;
        o["iteration"] = m.iteration;
        o["rows"] = json_array(m.rows);
        tag_replay(o, m.replay);
    }
    static IterationRows decode(std::string_view, const Fields& f)
    {
        return IterationRows { f.int32("job"), f.integer("iteration"),
            read_array<IterationRecord>(f, "rows", iteration_from), replay_of(f) };
    }
};

template <> struct Wire<Evaluation> : NamedAs<"evaluation"> {
    static void encode(const Evaluation& m, json::object& o)
    {
        o["evaluation"] = to_json(m.evaluation);
        tag_replay(o, m.replay);
    }
    static Evaluation decode(std::string_view, const Fields& f)
    {
        return Evaluation { evaluation_from(Fields(f.object("evaluation"), "evaluation")), replay_of(f) };
    }
};

template <> struct Wire<Event> : NamedAs<"event"> {
    static void encode(const Event& m, json::object& o)
    {
        o["event"] = to_json(m.event);
        tag_replay(o, m.replay);
    }
    static Event decode(std::string_view, const Fields& f)
    {
        return Event { event_from(Fields(f.object("event"), "event")), replay_of(f) };
    }
};

template <> struct Wire<JobUpdate> : NamedAs<"job-status"> {
    static void encode(const JobUpdate& m, json::object& o)
    {
        o["status"] = to_json(m.status);
        tag_replay(o, m.replay);
    }
    static JobUpdate decode(std::string_view, const Fields& f)
    {
        return JobUpdate { job_status_from(Fields(f.object("status"), "status")), replay_of(f) };
    }
};

template <> struct Wire<WorkerUpdate> : NamedAs<"worker-states"> {
    static void encode(const WorkerUpdate& m, json::object& o)
    {
        o["job"] = m.job;
        o["workers"] = json_array(m.workers);
        tag_replay(o, m.replay);
    }
    static WorkerUpdate decode(std::string_view, const Fields& f)
    {
        return WorkerUpdate { f.int32("job"), read_array<WorkerState>(f, "workers", worker_state_from), replay_of(f) };
    }
};

template <> struct Wire<ClusterUpdate> : NamedAs<"cluster-state"> {
    static void encode(const ClusterUpdate& m, json::object& o)
    {
        o["cluster"] = to_json(m.cluster);
        tag_replay(o, m.replay);
        if (m.time_s)
            o["time_s"] = *m.time_s;
    }
    static ClusterUpdate decode(std::string_view, const Fields& f)
    {
        const Fields c(f.object("cluster"), "cluster");
        ClusterState m;
        m.placement = c.string_or("placement", "");
        m.elastic = c.string_or("elastic", "static");
        m.comm = c.string_or("comm", "none");
        m.servers = c.int32("servers", 0);
        m.gpus_per_server = c.int32("gpus_per_server", 0);
        m.gpu_memory_gb = c.number("gpu_memory_gb");
        m.gpus = read_array<GpuUsage>(c, "gpus", gpu_usage_from);
        m.queue = c.integers<JobId>("queue", 0);
        if (c.has("pool"))
            m.pool = read_array<PooledWorker>(c, "pool", [](const Fields& p) {
                return PooledWorker { p.string_or("host", ""), p.int32("job", -1), p.int32("worker", -1),
                    p.string_or("tenant", std::string(kDefaultTenant)) };
            });
        if (c.has("tenants")) {
            m.tenants = read_array<TenantUsage>(c, "tenants", tenant_usage_from);
            m.rigid_borrowers = c.string_or("rigid_borrowers", "wait");
        }
        return ClusterUpdate { std::move(m), replay_of(f), f.optional_number("time_s") };
    }
};

template <> struct Wire<SnapshotEnd> : NamedAs<"snapshot-end"> {
    static void encode(const SnapshotEnd& m, json::object& o) { o["id"] = m.id; }
    static SnapshotEnd decode(std::string_view, const Fields& f) { return SnapshotEnd { f.string("id") }; }
};

template <> struct Wire<WorkerAssigned> : NamedAs<"worker-assigned"> {
    static void encode(const WorkerAssigned& m, json::object& o)
    {
        o["assignment"] = assignment_json(m.assignment);
        o["reason"] = m.reason;
    }
    static WorkerAssigned decode(std::string_view, const Fields& f)
    {
        return WorkerAssigned { assignment_from(Fields(f.object("assignment"), "assignment")),
            f.string_or("reason", "") };
    }
};

template <> struct Wire<WorkerReleased> : NamedAs<"worker-released"> {
    static void encode(const WorkerReleased& m, json::object& o)
    {
        o["job"] = m.job;
        o["worker"] = m.worker;
        o["reason"] = m.reason;
    }
    static WorkerReleased decode(std::string_view, const Fields& f)
    {
        return WorkerReleased { f.int32("job", 0), f.int32("worker", 0), f.string_or("reason", "") };
    }
};

template <> struct Wire<Missed> : NamedAs<"missed"> {
    static void encode(const Missed& m, json::object& o)
    {
        o["dropped"] = m.dropped;
        o["coalesced"] = m.coalesced;
    }
    static Missed decode(std::string_view, const Fields& f)
    {
        return Missed { f.integer("dropped", 0), f.integer("coalesced", 0) };
    }
};

template <> struct Wire<ReplayState> : NamedAs<"replay-state"> {
    static void encode(const ReplayState& m, json::object& o)
    {
        o["replay"] = m.replay;
        o["database"] = m.database;
        o["run"] = m.run;
        o["state"] = to_string(m.state);
        o["speed"] = m.speed;
        o["position"] = m.position;
        o["length"] = m.length;
        o["job"] = m.job;
        o["iteration"] = m.iteration;
        o["time_s"] = m.time_s;
        o["end_time_s"] = m.end_time_s;
        o["seeked"] = m.seeked;
    }
    static ReplayState decode(std::string_view, const Fields& f)
    {
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
};

} // namespace detail

Decoded<ServerMessage> decode_server(std::string_view frame)
{
    return detail::decode_frame<ServerMessage>(frame, detail::read_message<ServerMessage>);
}

std::string encode(const ServerMessage& message)
{
    return detail::json::serialize(detail::write_message(message));
}
std::string_view type_name(const ServerMessage& message)
{
    return detail::name_message(message);
}

} // namespace fulcrum::protocol
