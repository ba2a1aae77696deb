// The records that travel inside messages (rows, evaluations, events, statuses), to JSON
// and back.

#include "protocol/codec_support.h"

namespace fulcrum::protocol::detail {

json::object to_json(const IterationRecord& r)
{
    json::object o {
        { "job", r.job },
        { "worker", r.worker },
        { "iteration", r.iteration },
        { "start_s", r.start_s },
        { "end_s", r.end_s },
        { "batch_size", r.batch_size },
        { "compute_s", r.compute_s },
        { "comm_s", r.comm_s },
        { "wait_s", r.wait_s },
        { "cpu_share", r.cpu_share },
        { "memory_share", r.memory_share },
        { "speed", r.speed },
        { "loss", r.loss },
        { "decision", r.decision },
    };
    for (const auto& [name, value] :
        { std::pair { "predicted_speed", r.predicted_speed }, std::pair { "gpu_memory_gb", r.gpu.memory_gb },
            std::pair { "gpu_memory_share", r.gpu.memory_share }, std::pair { "gpu_utilization", r.gpu.utilization } })
        if (value)
            o[name] = *value;
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
    r.gpu.memory_gb = f.optional_number("gpu_memory_gb");
    r.gpu.memory_share = f.optional_number("gpu_memory_share");
    r.gpu.utilization = f.optional_number("gpu_utilization");
    return r;
}

json::object to_json(const EvaluationRecord& e)
{
    return { { "job", e.job }, { "iteration", e.iteration }, { "time_s", e.time_s }, { "wall_s", e.wall_s },
        { "epoch", e.epoch }, { "train_loss", e.train_loss }, { "test_loss", e.test_loss },
        { "test_accuracy", e.test_accuracy } };
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
    json::object o { { "job", s.job }, { "name", s.name }, { "tenant", s.tenant }, { "state", to_string(s.state) },
        { "model", s.model }, { "sync_model", s.sync_model }, { "policy", s.policy }, { "mode", s.mode },
        { "workers", s.workers }, { "iteration", s.iteration }, { "iterations", s.iterations }, { "time_s", s.time_s },
        { "elapsed_s", s.elapsed_s }, { "database", s.database }, { "run", s.run }, { "message", s.message } };
    if (s.accuracy)
        o["accuracy"] = *s.accuracy;
    if (!s.placement.empty())
        o["placement"] = integers_json(s.placement);
    if (s.elastic) {
        json::object e { { "min_workers", s.elastic->min_workers }, { "max_workers", s.elastic->max_workers } };
        if (s.elastic->frozen)
            e["frozen"] = true;
        o["elastic"] = std::move(e);
    }
    if (s.link)
        o["link"] = json::object { { "transfers", s.link->transfers }, { "held", s.link->held },
            { "wait_s", s.link->wait_s } };
    if (s.daemon_clock) {
        json::object c { { "arrival_s", s.daemon_clock->arrival_s } };
        if (s.daemon_clock->start_s)
            c["start_s"] = *s.daemon_clock->start_s;
        if (s.daemon_clock->finish_s)
            c["finish_s"] = *s.daemon_clock->finish_s;
        o["daemon_clock"] = std::move(c);
    }
    return o;
}

JobStatus job_status_from(const Fields& f)
{
    JobStatus s;
    s.job = f.int32("job");
    s.name = f.string_or("name", "");
    s.tenant = f.string_or("tenant", std::string(kDefaultTenant));
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
    if (f.has("elastic")) {
        const Fields e(f.object("elastic"), f.at("elastic"));
        s.elastic = JobStatus::ElasticBounds { e.int32("min_workers", 1), e.int32("max_workers", 1),
            e.has("frozen") && e.boolean("frozen") };
    }
    if (f.has("link")) {
        const Fields l(f.object("link"), f.at("link"));
        s.link = JobStatus::LinkUse { l.integer("transfers"), l.integer("held"), l.number("wait_s") };
    }
    if (f.has("daemon_clock")) {
        const Fields c(f.object("daemon_clock"), f.at("daemon_clock"));
        s.daemon_clock = JobStatus::DaemonClock { c.number("arrival_s"), c.optional_number("start_s"),
            c.optional_number("finish_s") };
    }
    return s;
}

json::object to_json(const GpuUsage& g)
{
    json::object o { { "gpu", g.gpu }, { "server", g.server }, { "free_memory_gb", g.free_memory_gb },
        { "workload_s", g.workload_s }, { "jobs", integers_json(g.jobs) } };
    if (!g.tenants.empty())
        o["tenants"] = json::array(g.tenants.begin(), g.tenants.end());
    return o;
}

GpuUsage gpu_usage_from(const Fields& f)
{
    GpuUsage g { f.int32("gpu", 0), f.int32("server", 0), f.number("free_memory_gb"), f.number("workload_s"),
        f.integers<JobId>("jobs", 0) };
    if (f.has("tenants"))
        g.tenants = f.strings("tenants");
    return g;
}

TenantUsage tenant_usage_from(const Fields& f)
{
    return { f.string("tenant"), f.int32("quota_gpus", 0), f.boolean("borrow"), f.number("weight", 0),
        f.boolean("named"), f.int32("held_gpus", 0), f.int32("borrowed_gpus", 0), f.int32("running", 0),
        f.int32("queued", 0) };
}

json::object to_json(const ClusterState& c)
{
    json::array gpus;
    for (const GpuUsage& g : c.gpus)
        gpus.push_back(to_json(g));
    json::array pool;
    for (const PooledWorker& p : c.pool)
        pool.push_back(
            json::object { { "host", p.host }, { "job", p.job }, { "worker", p.worker }, { "tenant", p.tenant } });
    json::object o { { "placement", c.placement }, { "elastic", c.elastic }, { "comm", c.comm },
        { "servers", c.servers }, { "gpus_per_server", c.gpus_per_server }, { "gpu_memory_gb", c.gpu_memory_gb },
        { "gpus", std::move(gpus) }, { "queue", integers_json(c.queue) }, { "pool", std::move(pool) } };
    if (!c.tenants.empty()) {
        json::array tenants;
        for (const TenantUsage& t : c.tenants)
            tenants.push_back(json::object { { "tenant", t.tenant }, { "quota_gpus", t.quota_gpus },
                { "borrow", t.borrow }, { "weight", t.weight }, { "named", t.named }, { "held_gpus", t.held_gpus },
                { "borrowed_gpus", t.borrowed_gpus }, { "running", t.running }, { "queued", t.queued } });
        o["tenants"] = std::move(tenants);
        o["rigid_borrowers"] = c.rigid_borrowers;
    }
    return o;
}

json::object to_json(const WorkerState& w)
{
    json::object o { { "worker", w.worker }, { "name", w.name }, { "batch_size", w.batch_size },
        { "excluded", w.excluded }, { "member", w.member }, { "slowdown", w.slowdown }, { "device", w.device } };
    if (w.pinned)
        o["pinned"] = *w.pinned;
    if (w.excluded_until)
        o["excluded_until"] = *w.excluded_until;
    if (w.sms)
        o["sms"] = *w.sms;
    if (w.stalled_since) {
        o["stalled_since"] = *w.stalled_since;
        o["predicted_s"] = w.predicted_s;
    }
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
    w.device = f.string_or("device", "cpu");
    if (f.has("sms"))
        w.sms = f.int32("sms");
    w.stalled_since = f.optional_number("stalled_since");
    if (w.stalled_since)
        w.predicted_s = f.number("predicted_s");
    return w;
}

json::object to_json(const RunListing& r)
{
    return { { "database", r.database }, { "run", r.run }, { "name", r.name }, { "mode", r.mode },
        { "status", r.status }, { "started_at", r.started_at }, { "finished_at", r.finished_at }, { "jobs", r.jobs },
        { "iterations", r.iterations }, { "rows", r.rows }, { "tenant", r.tenant } };
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
    r.tenant = f.string_or("tenant", std::string(kDefaultTenant));
    return r;
}

void tag_replay(json::object& o, std::int64_t replay)
{
    if (replay != 0)
        o["replay"] = replay;
}
std::int64_t replay_of(const Fields& f)
{
    return f.has("replay") ? f.integer("replay", 1) : 0;
}

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

} // namespace fulcrum::protocol::detail
