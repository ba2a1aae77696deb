#include "common/error.h"
#include "common/json_fields.h"
#include "common/resize_action.h"
#include "perf/cluster_profiles.h"
#include "scenario/path_fields.h"
#include "scenario/scenario.h"

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace fulcrum::scenario {

const char* to_string(Mode mode)
{
    switch (mode) {
    case Mode::Virtual:
        return "virtual";
    case Mode::Paced:
        return "paced";
    case Mode::Real:
        return "real";
    }
    return "virtual";
}

std::optional<Mode> parse_mode(const std::string& text)
{
    if (text == "virtual")
        return Mode::Virtual;
    if (text == "paced")
        return Mode::Paced;
    if (text == "real")
        return Mode::Real;
    return std::nullopt;
}

namespace {

using Fields = JsonFields;

// The path policy of one parse, checking that every path field read is one path_fields()
// lists: a new path field missing from the list fails the first test that parses it, before
// the confinement test, which tries hostile names on every listed field, could miss it.
class ListedPaths final : public PathPolicy {
public:
    explicit ListedPaths(const PathPolicy& inner)
        : inner_(inner)
    {
    }
    std::optional<std::string> resolve(
        FolderKind kind, const std::string& name, const std::string& field, std::string& why) const override
    {
        const std::string pattern = path_field_pattern(field);
        const auto& listed = path_fields();
        if (std::none_of(
                listed.begin(), listed.end(), [&](const PathField& f) { return f.field == pattern && f.kind == kind; }))
            throw std::logic_error("the path field '" + pattern + "' is not in scenario::path_fields()");
        return inner_.resolve(kind, name, field, why);
    }

private:
    const PathPolicy& inner_;
};

// Runs `read` over a file's text, naming `source` in the error of any field it refuses.
template <typename Read> auto reading(const std::string& source, Read read)
{
    try {
        return read();
    } catch (const PathFieldError& e) {
        throw OutsidePath(source, e.path(), e.reason());
    } catch (const JsonFieldError& e) {
        throw InputError(source, e.path().empty() ? "(top level)" : e.path(), e.reason());
    }
}

perf::ResourceShare share(Fields& f, perf::ResourceShare fallback)
{
    return { f.number_or("cpu", fallback.cpu, 0.01, 1.0), f.number_or("memory", fallback.memory, 0.01, 1.0) };
}

WorkerSpec parse_worker(Fields& f)
{
    WorkerSpec w;
    w.name = f.string_or("name", "");
    if (f.find("device")) {
        const std::string device = f.string_or("device", "cpu");
        const auto parsed = perf::parse_compute_device(device);
        if (!parsed)
            f.fail(f.at("device"), "is '" + device + "', expected \"cpu\" or \"cuda:N\" (N a CUDA device ordinal)");
        w.device = *parsed;
    }
    if (f.find("sms")) {
        if (!w.device.is_cuda())
            f.fail(f.at("sms"), "is a share of a GPU's SMs: give the worker a \"device\": \"cuda:N\" too");
        w.device.sms = static_cast<int>(f.integer_or("sms", 0, 1, 1024));
    }
    if (f.find("sms_strict")) {
        w.device.strict_sms = f.boolean_or("sms_strict", false);
        if (w.device.strict_sms && !w.device.sms)
            f.fail(f.at("sms_strict"), "makes a worker's SM share strict: give the worker \"sms\" too");
    }
    if (const json::value* gpu = f.find("gpu")) {
        // A GPU class by name, or an object: {"class": "k80", "peak_speed": ..., ...}.
        std::string device;
        const json::object* fields = nullptr;
        if (gpu->is_string())
            device = std::string(gpu->as_string());
        else if (gpu->is_object())
            fields = &gpu->as_object();
        else
            f.fail(f.at("gpu"), "expected a GPU class name (v100, m60, k80, k520) or an object");
        const json::value no_fields = json::object {};
        Fields g(fields ? *gpu : no_fields, f.at("gpu"), f);
        if (fields)
            device = g.string_or("class", "v100", perf::gpu_classes());
        try {
            w.gpu = perf::gpu_profile(device);
        } catch (const std::invalid_argument&) {
            f.fail(f.at("gpu"), "is '" + device + "', expected one of: v100, m60, k80, k520");
        }
        w.gpu->peak_speed = g.number_or("peak_speed", w.gpu->peak_speed, 1e-3, 1e9);
        w.gpu->launch_overhead_s = g.number_or("launch_overhead_s", w.gpu->launch_overhead_s, 0, 3600);
        w.gpu->saturation_batch
            = static_cast<std::int32_t>(g.integer_or("saturation_batch", w.gpu->saturation_batch, 0, 1'000'000));
        w.gpu->memory_gb = g.number_or("memory_gb", w.gpu->memory_gb, 0.01, 1e5);
        w.gpu->base_memory_gb = g.number_or("base_memory_gb", w.gpu->base_memory_gb, 0, w.gpu->memory_gb);
        w.gpu->memory_per_sample_gb = g.number_or("memory_per_sample_gb", w.gpu->memory_per_sample_gb, 0, 1e3);
        w.gpu->noise.sigma = g.number_or("noise_sigma", w.gpu->noise.sigma, 0, 2);
        g.reject_unknown();
        if (w.gpu->batch_limit() < 1)
            f.fail(f.at("gpu"),
                "leaves no memory for even one sample (base_memory_gb + memory_per_sample_gb > memory_gb)");
    }
    double factor = 1.0;
    if (const json::value* instance = f.find("instance")) {
        const std::string name = instance->is_string() ? std::string(instance->as_string()) : std::string();
        const auto known = perf::instance_speed_factor(name);
        if (!known)
            f.fail(f.at("instance"),
                "expected one of the Cluster-B instance types: m4.2xlarge, c5.2xlarge, r4.2xlarge, "
                "m4.4xlarge, m4.xlarge");
        factor = *known;
        if (w.name.empty())
            w.name = name;
    }
    if (!w.gpu && !f.find("instance"))
        f.require("speed");
    w.cpu.speed = f.number_or("speed", 1000, 1e-3, 1e9) * factor;
    w.cpu.memory_need = f.number_or("memory_need", w.cpu.memory_need, 0.01, 1.0);
    w.cpu.overhead_s = f.number_or("overhead_s", 0.0, 0.0, 3600.0);
    w.network.bandwidth_gbps = f.number_or("bandwidth_gbps", w.network.bandwidth_gbps, 1e-4, 1e4);
    w.network.latency_s = f.number_or("latency_s", w.network.latency_s, 0.0, 10.0);
    if (const json::value* noise = f.find("noise")) {
        Fields n(*noise, f.at("noise"), f);
        w.cpu.noise.sigma = n.number_or("sigma", 0.0, 0.0, 2.0);
        w.cpu.noise.spike_probability = n.number_or("spike_probability", 0.0, 0.0, 1.0);
        w.cpu.noise.spike_factor = n.number_or("spike_factor", 3.0, 1.0, 100.0);
        n.reject_unknown();
    }
    if (const json::array* points = f.optional_array("resources")) {
        double last = -1;
        for (std::size_t i = 0; i < points->size(); ++i) {
            const std::string path = f.at("resources") + "[" + std::to_string(i) + "]";
            Fields p((*points)[i], path, f);
            p.require("at_s");
            perf::ResourcePoint point;
            point.at_s = p.number_or("at_s", 0, 0, 1e9);
            if (point.at_s <= last)
                p.fail(p.at("at_s"), "must be later than the previous point's at_s");
            last = point.at_s;
            point.share = share(p, {});
            p.reject_unknown();
            w.resources.push_back(point);
        }
    }
    if (const json::value* competing = f.find("competing")) {
        Fields c(*competing, f.at("competing"), f);
        perf::CompetingProcess p;
        p.run_probability = c.number_or("run_probability", 0.5, 0, 1);
        p.cpu = c.number_or("cpu", p.cpu, 0, 0.98);
        p.memory = c.number_or("memory", p.memory, 0, 0.98);
        p.period_s = c.number_or("period_s", p.period_s, 1e-3, 1e6);
        c.reject_unknown();
        w.competing = p;
    }
    if (const json::array* changes = f.optional_array("bandwidth_changes")) {
        std::int64_t last = -1;
        for (std::size_t i = 0; i < changes->size(); ++i) {
            const std::string path = f.at("bandwidth_changes") + "[" + std::to_string(i) + "]";
            Fields c((*changes)[i], path, f);
            c.require("at_iteration");
            c.require("bandwidth_gbps");
            perf::BandwidthChange change;
            change.at_iteration = c.integer_or("at_iteration", 0, 0, 1'000'000'000);
            if (change.at_iteration <= last)
                c.fail(c.at("at_iteration"), "must be later than the previous change's at_iteration");
            last = change.at_iteration;
            change.bandwidth_gbps = c.number_or("bandwidth_gbps", 10, 1e-4, 1e4);
            c.reject_unknown();
            w.network.changes.push_back(change);
        }
    }
    if (const json::value* colocated = f.find("colocated")) {
        Fields c(*colocated, f.at("colocated"), f);
        perf::ColocatedLoad load;
        load.arrivals_per_hour = c.number_or("arrivals_per_hour", 0, 0, 1e6);
        load.mean_duration_s = c.number_or("mean_duration_s", load.mean_duration_s, 1e-3, 1e9);
        load.cpu_min = c.number_or("cpu_min", load.cpu_min, 0, 1);
        load.cpu_max = c.number_or("cpu_max", load.cpu_max, load.cpu_min, 1);
        load.memory_min = c.number_or("memory_min", load.memory_min, 0, 1);
        load.memory_max = c.number_or("memory_max", load.memory_max, load.memory_min, 1);
        c.reject_unknown();
        w.colocated = load;
    }
    return w;
}

// The "policy" section, read through the policy registry and checked against the job.
balance::PolicySpec parse_policy(const Fields& owner, const json::value& value, const Scenario& s)
{
    return balance::parse_policy_spec(Fields(value, owner.at("policy"), owner),
        { static_cast<int>(s.workers.size()), static_cast<std::int64_t>(s.total_batch) });
}

// One entry of "changes": before which iteration, and a new policy, a new sync model or both.
ScheduledChange parse_change(const Fields& c, const Scenario& s)
{
    ScheduledChange change;
    change.before_iteration = c.integer("before_iteration", 1, std::numeric_limits<std::int32_t>::max());
    if (!s.changes.empty() && change.before_iteration <= s.changes.back().before_iteration)
        c.fail(c.at("before_iteration"), "must be later than the previous change's");
    if (const json::value* policy = c.find("policy")) {
        change.policy = balance::parse_policy_spec(Fields(*policy, c.at("policy"), c),
            { static_cast<int>(s.workers.size()), static_cast<std::int64_t>(s.total_batch) });
        change.policy_json = json::serialize(*policy);
    }
    if (c.has("sync")) {
        change.sync = sync::parse_sync_spec(c, "sync");
        try {
            sync::validate(*change.sync, static_cast<int>(s.workers.size()));
        } catch (const std::invalid_argument& e) {
            c.fail(c.at("sync"), e.what());
        }
    }
    if (!change.policy && !change.sync)
        c.fail(c.path(), "changes nothing: give a \"policy\", a \"sync\" or both", "missing-field");
    c.reject_unknown();
    return change;
}

void check_sync(const Fields& owner, const sync::SyncSpec& spec, int workers)
{
    try {
        sync::validate(spec, workers);
    } catch (const std::invalid_argument& e) {
        const std::string text = e.what();
        const auto colon = text.find(": ");
        owner.fail(colon == std::string::npos ? "sync" : text.substr(0, colon),
            colon == std::string::npos ? text : text.substr(colon + 2));
    }
}

// One section given on its own, read as if it sat under `key` in a scenario, so fields and
// errors are named the same way.
template <typename Parse>
auto parse_section(
    const std::string& json_text, const char* key, const std::string& source, const PathPolicy& paths, Parse parse)
{
    return reading(source, [&] {
        json::object wrapper;
        wrapper[key] = parse_json_text(json_text);
        const json::value holder(std::move(wrapper));
        const ListedPaths listed(paths);
        Fields owner(holder, "");
        owner.use_paths(listed);
        return parse(owner, *owner.find(key));
    });
}

Scenario read_scenario(const std::string& json_text, const std::string& source, const PathPolicy& paths)
{
    const json::value root = parse_json_text(json_text);
    const ListedPaths listed(paths);
    Fields top(root, "");
    top.use_paths(listed);
    Scenario s;
    s.source = source;
    s.json = json_text;
    s.name = top.string_or("name", "unnamed");
    if (const json::value* external = top.find("external")) {
        Fields e(*external, "external", top);
        ExternalSpec spec;
        spec.framework = e.string_or("framework", spec.framework, { "pytorch", "other" });
        spec.rank_timeout_s = e.number_or("rank_timeout_s", spec.rank_timeout_s, 1, 86'400);
        spec.evaluation_timeout_s = e.number_or("evaluation_timeout_s", spec.evaluation_timeout_s, 1, 86'400);
        spec.plan_ahead = static_cast<int>(e.integer_or("plan_ahead", spec.plan_ahead, 0, 16));
        if (e.find("samples_per_epoch"))
            spec.samples_per_epoch = e.integer_or("samples_per_epoch", 1, 1, 1'000'000'000'000);
        spec.max_restarts = static_cast<int>(e.integer_or("max_restarts", spec.max_restarts, 0, 100));
        e.reject_unknown();
        s.external = spec;
        // The framework owns what a built-in job's sections describe.
        for (const char* owned : { "data", "model", "servers", "elastic", "checkpoint", "changes", "heterogeneity" })
            if (top.find(owned))
                top.fail(owned,
                    "an external job's model, data and parameters live in its framework's ranks; drop \""
                        + std::string(owned) + "\"");
    }
    s.description = top.string_or("description", "");
    s.seed = static_cast<std::uint64_t>(top.integer_or("seed", 1, 0, std::numeric_limits<std::int64_t>::max()));
    s.mode = *parse_mode(top.string_or("mode", s.external ? "real" : "virtual", { "virtual", "paced", "real" }));
    if (s.external && s.mode != Mode::Real)
        top.fail("mode", "an external job's ranks run on their own clocks: expected \"real\"");
    s.pace = top.number_or("pace", s.pace, 1e-3, 1e6);
    s.sync = sync::parse_sync_spec(top, "sync");
    s.threads = static_cast<int>(top.integer_or("threads", 0, 0, 256));
    if (top.has("worker_timeout_s"))
        s.worker_timeout_s = top.number("worker_timeout_s", kMinWorkerTimeoutS, 86'400);
    if (const json::value* on_stall = top.find("on_stall")) {
        Fields f(*on_stall, "on_stall", top);
        s.stall.factor = f.number_or("factor", s.stall.factor, 1.5, 1e6);
        s.stall.min_s = f.number_or("min_s", s.stall.min_s, 0.01, 86'400);
        s.stall.action = *value_named(kStallActions, f.string_or("action", "report", { "report", "exclude" }));
        s.stall.after_s = f.number_or("after_s", s.stall.after_s, 0, 86'400);
        s.stall.for_s = f.number_or("for_s", s.stall.for_s, 0.01, 86'400);
        f.reject_unknown();
    }

    if (const json::value* data = top.find("data")) {
        Fields d(*data, "data", top);
        s.data.source = d.string_or("source", s.data.source, { "fashion-mnist", "synthetic" });
        if (d.has("path")) {
            s.data.path = d.server_path("path", FolderKind::Datasets);
            s.data.path_given = true;
        }
        s.data.train_size = d.integer_or("train_size", s.data.train_size, 10, 10'000'000);
        s.data.test_size = d.integer_or("test_size", s.data.test_size, 10, 10'000'000);
        s.data.dim = d.integer_or("dim", s.data.dim, 1, 100'000);
        s.data.classes = static_cast<int>(d.integer_or("classes", s.data.classes, 2, 1000));
        d.reject_unknown();
    }

    if (!s.external)
        top.require("model");
    if (!s.external) {
        Fields m(*top.find("model"), "model", top);
        s.model.type = m.string_or("type", "mlp", model::model_types());
        if (const json::array* hidden = m.optional_array("hidden")) {
            if (!model::has_hidden_layers(s.model.type))
                m.fail("model.hidden", "only an mlp has hidden layers");
            s.model.hidden.clear();
            for (std::size_t i = 0; i < hidden->size(); ++i)
                s.model.hidden.push_back(
                    m.integer_value((*hidden)[i], "model.hidden[" + std::to_string(i) + "]", 1, 65536));
        } else if (!model::has_hidden_layers(s.model.type)) {
            s.model.hidden.clear();
        }
        m.reject_unknown();
    }

    top.require("training");
    {
        Fields t(*top.find("training"), "training", top);
        t.require("total_batch");
        s.total_batch = static_cast<std::int32_t>(t.integer_or("total_batch", 0, 1, 10'000'000));
        s.min_batch = static_cast<std::int32_t>(t.integer_or("min_batch", 1, 1, 10'000'000));
        s.optimizer.learning_rate = static_cast<float>(t.number_or("learning_rate", 0.05, 1e-9, 100));
        s.optimizer.momentum = static_cast<float>(t.number_or("momentum", 0.0, 0.0, 0.999));
        s.optimizer.weight_decay = static_cast<float>(t.number_or("weight_decay", 0.0, 0.0, 1.0));
        s.aggregation = t.string_or("aggregation", "weighted", { "weighted", "naive" }) == "naive"
            ? ps::Aggregation::Naive
            : ps::Aggregation::Weighted;
        if (s.external)
            for (const char* owned : { "epochs", "learning_rate", "momentum", "weight_decay", "aggregation",
                     "comm_model_mb", "target_accuracy" })
                if (t.find(owned))
                    t.fail("training." + std::string(owned),
                        "is the framework's in an external job; give training.total_batch, iterations and "
                        "eval_interval only");
        if (t.find("epochs"))
            s.epochs = t.number_or("epochs", 1, 1e-6, 1e6);
        if (t.find("iterations"))
            s.iterations = t.integer_or("iterations", 1, 1, 1'000'000'000);
        if (s.epochs && s.iterations)
            t.fail("training", "give either epochs or iterations, not both");
        if (!s.epochs && !s.iterations)
            t.fail("training.epochs", "is required (or training.iterations)");
        s.eval_interval = t.integer_or("eval_interval", s.eval_interval, 1, 1'000'000'000);
        if (t.find("comm_model_mb"))
            s.comm_model_mb = t.number_or("comm_model_mb", 1, 1e-6, 1e6);
        if (t.find("target_accuracy"))
            s.target_accuracy = t.number_or("target_accuracy", 0.5, 0.0, 1.0);
        t.reject_unknown();
    }

    if (const json::value* servers = top.find("servers")) {
        Fields sv(*servers, "servers", top);
        s.server_shards = static_cast<int>(sv.integer_or("shards", 1, 1, 1024));
        s.server_links.bandwidth_gbps = sv.number_or("bandwidth_gbps", 0, 0, 1e6);
        s.server_links.aggregate_s = sv.number_or("aggregate_s", 0, 0, 10);
        sv.reject_unknown();
    }

    top.require("workers");
    const json::array* workers = top.optional_array("workers");
    for (std::size_t i = 0; i < workers->size(); ++i) {
        const std::string path = "workers[" + std::to_string(i) + "]";
        Fields f((*workers)[i], path, top);
        const auto count = f.integer_or("count", 1, 1, kMaxWorkers);
        if (s.workers.size() + static_cast<std::size_t>(count) > static_cast<std::size_t>(kMaxWorkers))
            f.fail(f.at("count"),
                "gives the job more than " + std::to_string(kMaxWorkers) + " worker slots, the most a job has");
        WorkerSpec w;
        if (s.external) // a rank: its speed is measured, never modelled
            w.name = f.string_or("name", "");
        else
            w = parse_worker(f);
        if (const json::value* remote = f.find("remote")) {
            if (!remote->is_bool())
                f.fail(f.at("remote"), "expected true or false");
            w.remote = remote->as_bool();
            if (w.remote && s.mode != Mode::Real)
                f.fail(
                    f.at("remote"), "remote workers compute on their own clocks: the scenario's mode must be \"real\"");
            if (w.remote && s.external)
                f.fail(f.at("remote"), "an external job's ranks join by themselves; drop \"remote\"");
            if (w.remote && w.gpu)
                f.fail(f.at("remote"), "a remote worker computes on its host's CPU; drop its \"gpu\" section");
            if (w.remote && w.device.is_cuda())
                f.fail(f.at("device"), "a remote worker's device is its host's: give fulcrum-worker --device instead");
        }
        f.reject_unknown();
        for (std::int64_t k = 0; k < count; ++k) {
            WorkerSpec copy = w;
            const auto id = s.workers.size();
            if (copy.name.empty())
                copy.name = (s.external ? "rank-" : "worker-") + std::to_string(id);
            else if (count > 1)
                copy.name += "-" + std::to_string(k);
            s.workers.push_back(std::move(copy));
        }
    }
    if (s.workers.empty())
        top.fail("workers", "expected at least one worker");
    if (top.find("heterogeneity")) {
        const auto level
            = perf::parse_heterogeneity(top.string_or("heterogeneity", "homo", { "homo", "hetero-l2", "hetero-l3" }));
        const int n = static_cast<int>(s.workers.size());
        for (int i = 0; i < n; ++i)
            if (auto p = perf::competing_process(*level, i, n))
                s.workers[static_cast<std::size_t>(i)].competing = p;
    }
    check_sync(top, s.sync, static_cast<int>(s.workers.size()));
    if (s.external && s.sync.type != sync::SyncType::Bsp)
        top.fail("sync", "an external job synchronises by its framework's all-reduce every iteration: expected bsp");
    if (s.total_batch < static_cast<std::int64_t>(s.workers.size()))
        top.fail("training.total_batch",
            "is " + std::to_string(s.total_batch) + ", smaller than the " + std::to_string(s.workers.size())
                + " workers (each needs at least one sample)");
    // An elastic job whose X follows its members (elastic.batch_per_worker) is checked there.
    const json::value* elastic_section = top.find("elastic");
    const bool x_follows_members
        = elastic_section && elastic_section->is_object() && elastic_section->as_object().contains("batch_per_worker");
    if (!x_follows_members
        && static_cast<std::int64_t>(s.min_batch) * static_cast<std::int64_t>(s.workers.size()) > s.total_batch)
        top.fail("training.min_batch",
            "is " + std::to_string(s.min_batch) + ": " + std::to_string(s.workers.size()) + " workers at "
                + std::to_string(s.min_batch) + " samples each need more than training.total_batch ("
                + std::to_string(s.total_batch) + ")");

    if (const json::value* policy = top.find("policy"))
        s.policy = parse_policy(top, *policy, s);
    for (std::size_t i = 0; i < s.policy.batch_sizes.size(); ++i)
        if (s.policy.batch_sizes[i] < s.min_batch)
            top.fail("policy.batch_sizes[" + std::to_string(i) + "]",
                "is " + std::to_string(s.policy.batch_sizes[i]) + ", below training.min_batch ("
                    + std::to_string(s.min_batch) + ")");
    if (const json::array* changes = top.optional_array("changes"))
        for (std::size_t i = 0; i < changes->size(); ++i)
            s.changes.push_back(parse_change(top.element("changes", i, (*changes)[i]), s));
    if (const json::value* placement = top.find("placement")) {
        Fields pl(*placement, "placement", top);
        if (pl.find("memory_gb"))
            s.placement_memory_gb = pl.number_or("memory_gb", 1, 0.01, 1e6);
        s.placement_server_gpus = static_cast<int>(pl.integer_or("server_gpus", 0, 0, 1024));
        pl.reject_unknown();
    }
    if (const json::value* elastic = top.find("elastic")) {
        Fields e(*elastic, "elastic", top);
        ElasticScenarioSpec& spec = s.elastic;
        spec.present = true;
        const auto slots = static_cast<std::int64_t>(s.workers.size());
        spec.initial_workers = static_cast<int>(e.integer_or("initial_workers", slots, 1, slots));
        spec.min_workers = static_cast<int>(e.integer_or("min_workers", 1, 1, slots));
        spec.max_workers = static_cast<int>(e.integer_or("max_workers", slots, spec.min_workers, slots));
        if (spec.initial_workers < spec.min_workers || spec.initial_workers > spec.max_workers)
            e.fail("elastic.initial_workers",
                "is " + std::to_string(spec.initial_workers) + ", outside min_workers..max_workers ("
                    + std::to_string(spec.min_workers) + ".." + std::to_string(spec.max_workers) + ")");
        if (spec.initial_workers == slots)
            spec.initial_workers = 0;
        if (const json::value* partition = e.find("partition_data")) {
            if (!partition->is_bool())
                e.fail("elastic.partition_data", "expected true or false");
            spec.partition_data = partition->as_bool();
        }
        if (const json::array* resizes = e.optional_array("resizes")) {
            for (std::size_t i = 0; i < resizes->size(); ++i) {
                const std::string path = "elastic.resizes[" + std::to_string(i) + "]";
                Fields r((*resizes)[i], path, e);
                ResizeSpec resize;
                r.require("before_iteration");
                r.require("action");
                resize.before_iteration = r.integer_or("before_iteration", 0, 0, 1'000'000'000);
                resize.action = std::string(action_name(r.named("action", kResizeActions)));
                const bool on_worker = resize.action.ends_with("-worker");
                if (resize.action != "add-server" && r.find("target"))
                    resize.target = static_cast<int>(r.integer_or("target", 0, 0, on_worker ? slots - 1 : 1023));
                r.reject_unknown();
                spec.resizes.push_back(std::move(resize));
            }
        }
        if (e.find("pause_s")) {
            Fields pause(e.object("pause_s"), "elastic.pause_s");
            ResizePauses& p = spec.pause_s;
            for (auto [key, seconds] : { std::pair { "add-worker", &p.add_worker_s },
                     { "remove-worker", &p.remove_worker_s }, { "add-server", &p.add_server_s },
                     { "remove-server", &p.remove_server_s }, { "restart", &p.restart_s } })
                *seconds = pause.number_or(key, 0, 0, 1e6);
            pause.reject_unknown();
        }
        if (e.find("batch_per_worker")) {
            spec.batch_per_worker = static_cast<int>(e.integer_or("batch_per_worker", 1, 1, 10'000'000));
            const std::int64_t members = spec.initial_workers > 0 ? spec.initial_workers : slots;
            if (s.total_batch != spec.batch_per_worker * members)
                e.fail("elastic.batch_per_worker",
                    "is " + std::to_string(spec.batch_per_worker) + " per worker, so training.total_batch must be "
                        + std::to_string(spec.batch_per_worker * members) + " (x " + std::to_string(members)
                        + " workers at the start), not " + std::to_string(s.total_batch));
            if (spec.batch_per_worker < s.min_batch)
                e.fail("elastic.batch_per_worker",
                    "is " + std::to_string(spec.batch_per_worker) + ", below training.min_batch ("
                        + std::to_string(s.min_batch) + "): every member computes batch_per_worker samples");
        }
        e.reject_unknown();
        if (!sync::closes_every_iteration(s.sync.type))
            top.fail("elastic",
                "needs barriers: sync is '" + std::string(sync::to_string(s.sync.type)) + "', expected bsp or backup");
    }
    if (const json::value* checkpoint = top.find("checkpoint")) {
        Fields c(*checkpoint, "checkpoint", top);
        s.checkpoint.every_iterations
            = c.integer_or("every_iterations", s.checkpoint.every_iterations, 0, 1'000'000'000);
        s.checkpoint.every_seconds = c.number_or("every_seconds", s.checkpoint.every_seconds, 0, 1e7);
        c.reject_unknown();
    }
    top.reject_unknown();
    return s;
}

} // namespace

Scenario parse_scenario(const std::string& json_text, const std::string& source, const PathPolicy& paths)
{
    return reading(source, [&] { return read_scenario(json_text, source, paths); });
}

Scenario load_scenario(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InputError(path, "", "cannot open scenario file");
    std::ostringstream text;
    text << in.rdbuf();
    return parse_scenario(text.str(), path);
}

balance::PolicySpec parse_policy_section(
    const std::string& json_text, const Scenario& job, const std::string& source, const PathPolicy& paths)
{
    return parse_section(json_text, "policy", source, paths,
        [&](Fields& owner, const json::value& v) { return parse_policy(owner, v, job); });
}

sync::SyncSpec parse_sync_section(const std::string& json_text, const Scenario& job, const std::string& source)
{
    return parse_section(json_text, "sync", source, paths_as_given(), [&](Fields& owner, const json::value&) {
        sync::SyncSpec spec = sync::parse_sync_spec(owner, "sync");
        check_sync(owner, spec, static_cast<int>(job.workers.size()));
        return spec;
    });
}

std::int64_t planned_iterations(const Scenario& scenario, std::int64_t train_size)
{
    if (scenario.iterations)
        return *scenario.iterations;
    const double samples = *scenario.epochs * static_cast<double>(train_size);
    return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(samples / scenario.total_batch)));
}

} // namespace fulcrum::scenario
