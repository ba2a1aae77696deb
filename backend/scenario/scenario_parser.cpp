#include "common/error.h"
#include "perf/cluster_profiles.h"
#include "scenario/scenario.h"

#include <boost/json.hpp>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace fulcrum::scenario {

namespace json = boost::json;

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

// Reads one JSON object field by field, remembering which keys were taken so that any
// key left over (a typo, a field of a newer version) is reported instead of ignored.
class Fields {
public:
    Fields(const json::value& value, std::string path, const std::string& source)
        : source_(source)
        , path_(std::move(path))
    {
        if (!value.is_object())
            fail(path_, "expected an object");
        object_ = &value.as_object();
    }

    ~Fields() = default;

    [[noreturn]] void fail(const std::string& field, const std::string& reason) const
    {
        throw InputError(source_, field.empty() ? "(top level)" : field, reason);
    }

    std::string at(const char* key) const { return path_.empty() ? key : path_ + "." + key; }

    const json::value* find(const char* key)
    {
        taken_.insert(key);
        const auto it = object_->find(key);
        return it == object_->end() ? nullptr : &it->value();
    }

    double number(const char* key, double fallback, double min, double max)
    {
        const json::value* v = find(key);
        if (!v)
            return fallback;
        return number_value(*v, at(key), min, max);
    }

    double number_value(const json::value& v, const std::string& field, double min, double max) const
    {
        if (!v.is_number())
            fail(field, "expected a number");
        const double x = v.to_number<double>();
        if (!std::isfinite(x) || x < min || x > max) {
            std::ostringstream reason;
            reason << "is " << x << ", expected a number in [" << min << ", " << max << "]";
            fail(field, reason.str());
        }
        return x;
    }

    std::int64_t integer(const char* key, std::int64_t fallback, std::int64_t min, std::int64_t max)
    {
        const json::value* v = find(key);
        if (!v)
            return fallback;
        return integer_value(*v, at(key), min, max);
    }

    std::int64_t integer_value(const json::value& v, const std::string& field, std::int64_t min, std::int64_t max) const
    {
        std::int64_t x = 0;
        if (v.is_int64())
            x = v.as_int64();
        else if (v.is_uint64() && v.as_uint64() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            x = static_cast<std::int64_t>(v.as_uint64());
        else if (v.is_double() && std::floor(v.as_double()) == v.as_double() && std::abs(v.as_double()) < 9e15)
            x = static_cast<std::int64_t>(v.as_double());
        else
            fail(field, "expected a whole number");
        if (x < min || x > max)
            fail(field, "is " + std::to_string(x) + ", expected " + std::to_string(min) + " to " + std::to_string(max));
        return x;
    }

    std::string string(const char* key, std::string fallback, const std::vector<std::string>& allowed = {})
    {
        const json::value* v = find(key);
        if (!v)
            return fallback;
        if (!v->is_string())
            fail(at(key), "expected a string");
        std::string text(v->as_string());
        if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), text) == allowed.end()) {
            std::string list;
            for (const auto& a : allowed)
                list += (list.empty() ? "" : ", ") + a;
            fail(at(key), "is '" + text + "', expected one of: " + list);
        }
        return text;
    }

    const json::array* array(const char* key)
    {
        const json::value* v = find(key);
        if (!v)
            return nullptr;
        if (!v->is_array())
            fail(at(key), "expected an array");
        return &v->as_array();
    }

    void require(const char* key)
    {
        if (object_->find(key) == object_->end())
            fail(at(key), "is required");
    }

    // Every key must have been read by now.
    void finish() const
    {
        for (const auto& item : *object_)
            if (!taken_.contains(std::string(item.key())))
                fail(at(std::string(item.key()).c_str()), "unknown field");
    }

    const std::string& source() const { return source_; }

private:
    const std::string& source_;
    std::string path_;
    const json::object* object_ = nullptr;
    std::set<std::string> taken_;
};

json::value parse_json(const std::string& text, const std::string& source)
{
    json::parse_options options;
    options.allow_comments = true;
    options.allow_trailing_commas = true;
    json::stream_parser parser({}, options);
    boost::system::error_code ec;
    const std::size_t consumed = parser.write_some(text.data(), text.size(), ec);
    if (!ec)
        parser.finish(ec);
    if (ec) {
        const std::size_t offset = std::min(consumed, text.size());
        std::size_t line = 1, column = 1;
        for (std::size_t i = 0; i < offset; ++i, ++column)
            if (text[i] == '\n') {
                ++line;
                column = 0;
            }
        throw InputError(source, "line " + std::to_string(line) + ", column " + std::to_string(column),
            "malformed JSON: " + ec.message());
    }
    return parser.release();
}

perf::ResourceShare share(Fields& f, perf::ResourceShare fallback)
{
    return { f.number("cpu", fallback.cpu, 0.01, 1.0), f.number("memory", fallback.memory, 0.01, 1.0) };
}

WorkerSpec parse_worker(Fields& f)
{
    WorkerSpec w;
    w.name = f.string("name", "");
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
        Fields g(fields ? *gpu : no_fields, f.at("gpu"), f.source());
        if (fields)
            device = g.string("class", "v100", perf::gpu_classes());
        try {
            w.gpu = perf::gpu_profile(device);
        } catch (const std::invalid_argument&) {
            f.fail(f.at("gpu"), "is '" + device + "', expected one of: v100, m60, k80, k520");
        }
        w.gpu->peak_speed = g.number("peak_speed", w.gpu->peak_speed, 1e-3, 1e9);
        w.gpu->launch_overhead_s = g.number("launch_overhead_s", w.gpu->launch_overhead_s, 0, 3600);
        w.gpu->saturation_batch
            = static_cast<std::int32_t>(g.integer("saturation_batch", w.gpu->saturation_batch, 0, 1'000'000));
        w.gpu->memory_gb = g.number("memory_gb", w.gpu->memory_gb, 0.01, 1e5);
        w.gpu->base_memory_gb = g.number("base_memory_gb", w.gpu->base_memory_gb, 0, w.gpu->memory_gb);
        w.gpu->memory_per_sample_gb = g.number("memory_per_sample_gb", w.gpu->memory_per_sample_gb, 0, 1e3);
        w.gpu->noise.sigma = g.number("noise_sigma", w.gpu->noise.sigma, 0, 2);
        g.finish();
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
    w.cpu.speed = f.number("speed", 1000, 1e-3, 1e9) * factor;
    w.cpu.memory_need = f.number("memory_need", w.cpu.memory_need, 0.01, 1.0);
    w.cpu.overhead_s = f.number("overhead_s", 0.0, 0.0, 3600.0);
    w.network.bandwidth_gbps = f.number("bandwidth_gbps", w.network.bandwidth_gbps, 1e-4, 1e4);
    w.network.latency_s = f.number("latency_s", w.network.latency_s, 0.0, 10.0);
    if (const json::value* noise = f.find("noise")) {
        Fields n(*noise, f.at("noise"), f.source());
        w.cpu.noise.sigma = n.number("sigma", 0.0, 0.0, 2.0);
        w.cpu.noise.spike_probability = n.number("spike_probability", 0.0, 0.0, 1.0);
        w.cpu.noise.spike_factor = n.number("spike_factor", 3.0, 1.0, 100.0);
        n.finish();
    }
    if (const json::array* points = f.array("resources")) {
        double last = -1;
        for (std::size_t i = 0; i < points->size(); ++i) {
            const std::string path = f.at("resources") + "[" + std::to_string(i) + "]";
            Fields p((*points)[i], path, f.source());
            p.require("at_s");
            perf::ResourcePoint point;
            point.at_s = p.number("at_s", 0, 0, 1e9);
            if (point.at_s <= last)
                p.fail(p.at("at_s"), "must be later than the previous point's at_s");
            last = point.at_s;
            point.share = share(p, {});
            p.finish();
            w.resources.push_back(point);
        }
    }
    if (const json::value* competing = f.find("competing")) {
        Fields c(*competing, f.at("competing"), f.source());
        perf::CompetingProcess p;
        p.run_probability = c.number("run_probability", 0.5, 0, 1);
        p.cpu = c.number("cpu", p.cpu, 0, 0.98);
        p.memory = c.number("memory", p.memory, 0, 0.98);
        p.period_s = c.number("period_s", p.period_s, 1e-3, 1e6);
        c.finish();
        w.competing = p;
    }
    if (const json::array* changes = f.array("bandwidth_changes")) {
        std::int64_t last = -1;
        for (std::size_t i = 0; i < changes->size(); ++i) {
            const std::string path = f.at("bandwidth_changes") + "[" + std::to_string(i) + "]";
            Fields c((*changes)[i], path, f.source());
            c.require("at_iteration");
            c.require("bandwidth_gbps");
            perf::BandwidthChange change;
            change.at_iteration = c.integer("at_iteration", 0, 0, 1'000'000'000);
            if (change.at_iteration <= last)
                c.fail(c.at("at_iteration"), "must be later than the previous change's at_iteration");
            last = change.at_iteration;
            change.bandwidth_gbps = c.number("bandwidth_gbps", 10, 1e-4, 1e4);
            c.finish();
            w.network.changes.push_back(change);
        }
    }
    if (const json::value* colocated = f.find("colocated")) {
        Fields c(*colocated, f.at("colocated"), f.source());
        perf::ColocatedLoad load;
        load.arrivals_per_hour = c.number("arrivals_per_hour", 0, 0, 1e6);
        load.mean_duration_s = c.number("mean_duration_s", load.mean_duration_s, 1e-3, 1e9);
        load.cpu_min = c.number("cpu_min", load.cpu_min, 0, 1);
        load.cpu_max = c.number("cpu_max", load.cpu_max, load.cpu_min, 1);
        load.memory_min = c.number("memory_min", load.memory_min, 0, 1);
        load.memory_max = c.number("memory_max", load.memory_max, load.memory_min, 1);
        c.finish();
        w.colocated = load;
    }
    return w;
}

// The "sync" section: "asp", or {"type": "ssp", "staleness": 3}. `owner` holds it (its
// "sync" key), so a plain string is read and reported as that field.
sync::SyncSpec parse_sync(Fields& owner, const json::value& value)
{
    sync::SyncSpec spec;
    if (value.is_string()) {
        spec.type = *sync::parse_sync_type(owner.string("sync", "bsp", sync::sync_types()));
        return spec;
    }
    Fields y(value, "sync", owner.source());
    spec.type = *sync::parse_sync_type(y.string("type", "bsp", sync::sync_types()));
    spec.staleness = static_cast<int>(y.integer("staleness", spec.staleness, 0, 1'000'000));
    spec.backups = static_cast<int>(y.integer("backups", spec.backups, 1, 100'000));
    spec.range = static_cast<int>(y.integer("range", spec.range, 1, 100'000));
    spec.algorithm = y.string("algorithm", spec.algorithm, sync::window_algorithms());
    spec.history = static_cast<int>(y.integer("history", spec.history, 1, 100'000));
    y.finish();
    return spec;
}

// The "policy" section, checked against the job's workers and total batch.
balance::PolicySpec parse_policy(Fields& owner, const json::value& value, const Scenario& s)
{
    balance::PolicySpec policy;
    Fields p(value, "policy", owner.source());
    policy.type = p.string("type", "uniform", balance::policy_names());
    if (const json::array* sizes = p.array("batch_sizes")) {
        for (std::size_t i = 0; i < sizes->size(); ++i)
            policy.batch_sizes.push_back(static_cast<std::int32_t>(
                p.integer_value((*sizes)[i], "policy.batch_sizes[" + std::to_string(i) + "]", 1, 10'000'000)));
    }
    if (const json::value* predictor = p.find("predictor")) {
        if (policy.type != "lbbsp-cpu")
            p.fail("policy.predictor", "only the lbbsp-cpu policy predicts speeds");
        Fields q(*predictor, "policy.predictor", owner.source());
        auto& spec = policy.predictor;
        spec.type = q.string("type", spec.type, predict::predictor_names());
        spec.ema_alpha = q.number("ema_alpha", spec.ema_alpha, 1e-6, 1.0);
        auto& narx = spec.narx;
        narx.shape.speed_lags = static_cast<int>(q.integer("speed_lags", narx.shape.speed_lags, 1, 64));
        narx.shape.resource_lags = static_cast<int>(q.integer("resource_lags", narx.shape.resource_lags, 0, 64));
        narx.shape.hidden = static_cast<int>(q.integer("hidden", narx.shape.hidden, 1, 1024));
        narx.min_samples = static_cast<int>(q.integer("min_samples", narx.min_samples, 8, 10'000'000));
        narx.retrain_every = static_cast<int>(q.integer("retrain_every", narx.retrain_every, 1, 10'000'000));
        narx.history = static_cast<int>(q.integer("history", narx.history, 16, 10'000'000));
        narx.training.max_epochs = static_cast<int>(q.integer("max_epochs", narx.training.max_epochs, 1, 1'000'000));
        narx.training.patience = static_cast<int>(q.integer("patience", narx.training.patience, 1, 1'000'000));
        spec.warm_start = q.string("warm_start", spec.warm_start, { "none", "peer", "pooled", "file" });
        spec.warm_start_file = q.string("warm_start_file", "");
        if ((spec.warm_start == "file") != !spec.warm_start_file.empty())
            q.fail("policy.predictor.warm_start_file", "is required with warm_start \"file\" and only then");
        q.finish();
    }
    if (const json::value* gpu = p.find("gpu")) {
        if (policy.type != "lbbsp-gpu")
            p.fail("policy.gpu", "only the lbbsp-gpu policy has phases");
        Fields g(*gpu, "policy.gpu", owner.source());
        auto& o = policy.gpu;
        o.fast_approach.delta = static_cast<std::int32_t>(g.integer("fast_delta", o.fast_approach.delta, 1, 1'000'000));
        o.fast_approach.window = static_cast<int>(g.integer("fast_window", o.fast_approach.window, 1, 1'000'000));
        o.fine_tune.delta = static_cast<std::int32_t>(g.integer("fine_delta", o.fine_tune.delta, 1, 1'000'000));
        o.fine_tune.window = static_cast<int>(g.integer("fine_window", o.fine_tune.window, 1, 1'000'000));
        o.memory_ceiling = g.number("memory_ceiling", o.memory_ceiling, 0.01, 1.0);
        g.finish();
    }
    policy.manager.damping = p.number("damping", 0.0, 0.0, 0.99);
    if (const json::value* blocking = p.find("blocking")) {
        if (!blocking->is_bool())
            p.fail("policy.blocking", "expected true or false");
        policy.manager.blocking = blocking->as_bool();
    }
    p.finish();
    if (policy.type == "fixed") {
        if (policy.batch_sizes.size() != s.workers.size())
            owner.fail("policy.batch_sizes",
                "has " + std::to_string(policy.batch_sizes.size()) + " entries, expected one per worker ("
                    + std::to_string(s.workers.size()) + ")");
        std::int64_t sum = 0;
        for (auto b : policy.batch_sizes)
            sum += b;
        if (sum != s.total_batch)
            owner.fail("policy.batch_sizes",
                "sum to " + std::to_string(sum) + ", expected training.total_batch = " + std::to_string(s.total_batch));
    } else if (!policy.batch_sizes.empty()) {
        owner.fail("policy.batch_sizes", "only the fixed policy takes batch sizes");
    }
    return policy;
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
auto parse_section(const std::string& json_text, const char* key, const std::string& source, Parse parse)
{
    json::object wrapper;
    wrapper[key] = parse_json(json_text, source);
    const json::value holder(std::move(wrapper));
    Fields owner(holder, "", source);
    return parse(owner, *owner.find(key));
}

} // namespace

Scenario parse_scenario(const std::string& json_text, const std::string& source)
{
    const json::value root = parse_json(json_text, source);
    Fields top(root, "", source);
    Scenario s;
    s.source = source;
    s.json = json_text;
    s.name = top.string("name", "unnamed");
    s.description = top.string("description", "");
    s.seed = static_cast<std::uint64_t>(top.integer("seed", 1, 0, std::numeric_limits<std::int64_t>::max()));
    s.mode = *parse_mode(top.string("mode", "virtual", { "virtual", "paced", "real" }));
    s.pace = top.number("pace", s.pace, 1e-3, 1e6);
    if (const json::value* sync = top.find("sync"))
        s.sync = parse_sync(top, *sync);
    s.threads = static_cast<int>(top.integer("threads", 0, 0, 256));

    if (const json::value* data = top.find("data")) {
        Fields d(*data, "data", source);
        s.data.source = d.string("source", s.data.source, { "fashion-mnist", "synthetic" });
        s.data.path_given = d.find("path") != nullptr;
        s.data.path = d.string("path", s.data.path);
        s.data.train_size = d.integer("train_size", s.data.train_size, 10, 10'000'000);
        s.data.test_size = d.integer("test_size", s.data.test_size, 10, 10'000'000);
        s.data.dim = d.integer("dim", s.data.dim, 1, 100'000);
        s.data.classes = static_cast<int>(d.integer("classes", s.data.classes, 2, 1000));
        d.finish();
    }

    top.require("model");
    {
        Fields m(*top.find("model"), "model", source);
        s.model.type = m.string("type", "mlp", model::model_types());
        if (const json::array* hidden = m.array("hidden")) {
            if (s.model.type != "mlp")
                m.fail("model.hidden", "only an mlp has hidden layers");
            s.model.hidden.clear();
            for (std::size_t i = 0; i < hidden->size(); ++i)
                s.model.hidden.push_back(
                    m.integer_value((*hidden)[i], "model.hidden[" + std::to_string(i) + "]", 1, 65536));
        } else if (s.model.type != "mlp") {
            s.model.hidden.clear();
        }
        m.finish();
    }

    top.require("training");
    {
        Fields t(*top.find("training"), "training", source);
        t.require("total_batch");
        s.total_batch = static_cast<std::int32_t>(t.integer("total_batch", 0, 1, 10'000'000));
        s.optimizer.learning_rate = static_cast<float>(t.number("learning_rate", 0.05, 1e-9, 100));
        s.optimizer.momentum = static_cast<float>(t.number("momentum", 0.0, 0.0, 0.999));
        s.optimizer.weight_decay = static_cast<float>(t.number("weight_decay", 0.0, 0.0, 1.0));
        s.aggregation = t.string("aggregation", "weighted", { "weighted", "naive" }) == "naive"
            ? ps::Aggregation::Naive
            : ps::Aggregation::Weighted;
        if (t.find("epochs"))
            s.epochs = t.number("epochs", 1, 1e-6, 1e6);
        if (t.find("iterations"))
            s.iterations = t.integer("iterations", 1, 1, 1'000'000'000);
        if (s.epochs && s.iterations)
            t.fail("training", "give either epochs or iterations, not both");
        if (!s.epochs && !s.iterations)
            t.fail("training.epochs", "is required (or training.iterations)");
        s.eval_interval = t.integer("eval_interval", s.eval_interval, 1, 1'000'000'000);
        if (t.find("comm_model_mb"))
            s.comm_model_mb = t.number("comm_model_mb", 1, 1e-6, 1e6);
        if (t.find("target_accuracy"))
            s.target_accuracy = t.number("target_accuracy", 0.5, 0.0, 1.0);
        t.finish();
    }

    if (const json::value* servers = top.find("servers")) {
        Fields sv(*servers, "servers", source);
        s.server_shards = static_cast<int>(sv.integer("shards", 1, 1, 1024));
        sv.finish();
    }

    top.require("workers");
    const json::array* workers = top.array("workers");
    for (std::size_t i = 0; i < workers->size(); ++i) {
        const std::string path = "workers[" + std::to_string(i) + "]";
        Fields f((*workers)[i], path, source);
        const auto count = f.integer("count", 1, 1, 100'000);
        WorkerSpec w = parse_worker(f);
        if (const json::value* remote = f.find("remote")) {
            if (!remote->is_bool())
                f.fail(f.at("remote"), "expected true or false");
            w.remote = remote->as_bool();
            if (w.remote && s.mode != Mode::Real)
                f.fail(
                    f.at("remote"), "remote workers compute on their own clocks: the scenario's mode must be \"real\"");
            if (w.remote && w.gpu)
                f.fail(f.at("remote"), "a remote worker computes on its host's CPU; drop its \"gpu\" section");
        }
        f.finish();
        for (std::int64_t k = 0; k < count; ++k) {
            WorkerSpec copy = w;
            const auto id = s.workers.size();
            if (copy.name.empty())
                copy.name = "worker-" + std::to_string(id);
            else if (count > 1)
                copy.name += "-" + std::to_string(k);
            s.workers.push_back(std::move(copy));
        }
    }
    if (s.workers.empty())
        top.fail("workers", "expected at least one worker");
    if (top.find("heterogeneity")) {
        const auto level
            = perf::parse_heterogeneity(top.string("heterogeneity", "homo", { "homo", "hetero-l2", "hetero-l3" }));
        const int n = static_cast<int>(s.workers.size());
        for (int i = 0; i < n; ++i)
            if (auto p = perf::competing_process(*level, i, n))
                s.workers[static_cast<std::size_t>(i)].competing = p;
    }
    check_sync(top, s.sync, static_cast<int>(s.workers.size()));
    if (s.total_batch < static_cast<std::int64_t>(s.workers.size()))
        top.fail("training.total_batch",
            "is " + std::to_string(s.total_batch) + ", smaller than the " + std::to_string(s.workers.size())
                + " workers (each needs at least one sample)");

    if (const json::value* policy = top.find("policy"))
        s.policy = parse_policy(top, *policy, s);
    if (const json::value* placement = top.find("placement")) {
        Fields pl(*placement, "placement", source);
        if (pl.find("memory_gb"))
            s.placement_memory_gb = pl.number("memory_gb", 1, 0.01, 1e6);
        pl.finish();
    }
    if (const json::value* elastic = top.find("elastic")) {
        Fields e(*elastic, "elastic", source);
        ElasticScenarioSpec& spec = s.elastic;
        spec.present = true;
        const auto slots = static_cast<std::int64_t>(s.workers.size());
        spec.initial_workers = static_cast<int>(e.integer("initial_workers", slots, 1, slots));
        if (spec.initial_workers == slots)
            spec.initial_workers = 0;
        if (const json::value* partition = e.find("partition_data")) {
            if (!partition->is_bool())
                e.fail("elastic.partition_data", "expected true or false");
            spec.partition_data = partition->as_bool();
        }
        if (const json::array* resizes = e.array("resizes")) {
            for (std::size_t i = 0; i < resizes->size(); ++i) {
                const std::string path = "elastic.resizes[" + std::to_string(i) + "]";
                Fields r((*resizes)[i], path, source);
                ResizeSpec resize;
                r.require("before_iteration");
                r.require("action");
                resize.before_iteration = r.integer("before_iteration", 0, 0, 1'000'000'000);
                resize.action
                    = r.string("action", "", { "add-server", "remove-server", "add-worker", "remove-worker" });
                const bool on_worker = resize.action.ends_with("-worker");
                if (resize.action != "add-server" && r.find("target"))
                    resize.target = static_cast<int>(r.integer("target", 0, 0, on_worker ? slots - 1 : 1023));
                r.finish();
                spec.resizes.push_back(std::move(resize));
            }
        }
        e.finish();
        if (!sync::closes_every_iteration(s.sync.type))
            top.fail("elastic",
                "needs barriers: sync is '" + std::string(sync::to_string(s.sync.type)) + "', expected bsp or backup");
    }
    if (const json::value* checkpoint = top.find("checkpoint")) {
        Fields c(*checkpoint, "checkpoint", source);
        s.checkpoint.every_iterations = c.integer("every_iterations", s.checkpoint.every_iterations, 0, 1'000'000'000);
        s.checkpoint.every_seconds = c.number("every_seconds", s.checkpoint.every_seconds, 0, 1e7);
        c.finish();
    }
    top.finish();
    return s;
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

balance::PolicySpec parse_policy_section(const std::string& json_text, const Scenario& job, const std::string& source)
{
    return parse_section(
        json_text, "policy", source, [&](Fields& owner, const json::value& v) { return parse_policy(owner, v, job); });
}

sync::SyncSpec parse_sync_section(const std::string& json_text, const Scenario& job, const std::string& source)
{
    return parse_section(json_text, "sync", source, [&](Fields& owner, const json::value& v) {
        sync::SyncSpec spec = parse_sync(owner, v);
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
