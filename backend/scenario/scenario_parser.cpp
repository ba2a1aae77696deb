#include "scenario/scenario.h"

#include "common/error.h"

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
    f.require("speed");
    w.name = f.string("name", "");
    w.cpu.speed = f.number("speed", 0, 1e-3, 1e9);
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
    s.sync = top.string("sync", "bsp", { "bsp" });
    s.threads = static_cast<int>(top.integer("threads", 0, 0, 256));

    if (const json::value* data = top.find("data")) {
        Fields d(*data, "data", source);
        s.data.source = d.string("source", s.data.source, { "fashion-mnist", "synthetic" });
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
                s.model.hidden.push_back(m.integer_value((*hidden)[i], "model.hidden[" + std::to_string(i) + "]", 1, 65536));
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
        s.aggregation = t.string("aggregation", "weighted", { "weighted", "naive" }) == "naive" ? ps::Aggregation::Naive
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
    if (s.total_batch < static_cast<std::int64_t>(s.workers.size()))
        top.fail("training.total_batch", "is " + std::to_string(s.total_batch) + ", smaller than the "
            + std::to_string(s.workers.size()) + " workers (each needs at least one sample)");

    if (const json::value* policy = top.find("policy")) {
        Fields p(*policy, "policy", source);
        s.policy.type = p.string("type", "uniform", balance::policy_names());
        if (const json::array* sizes = p.array("batch_sizes")) {
            for (std::size_t i = 0; i < sizes->size(); ++i)
                s.policy.batch_sizes.push_back(static_cast<std::int32_t>(
                    p.integer_value((*sizes)[i], "policy.batch_sizes[" + std::to_string(i) + "]", 1, 10'000'000)));
        }
        p.finish();
        if (s.policy.type == "fixed") {
            if (s.policy.batch_sizes.size() != s.workers.size())
                top.fail("policy.batch_sizes", "has " + std::to_string(s.policy.batch_sizes.size())
                    + " entries, expected one per worker (" + std::to_string(s.workers.size()) + ")");
            std::int64_t sum = 0;
            for (auto b : s.policy.batch_sizes)
                sum += b;
            if (sum != s.total_batch)
                top.fail("policy.batch_sizes", "sum to " + std::to_string(sum) + ", expected training.total_batch = "
                    + std::to_string(s.total_batch));
        } else if (!s.policy.batch_sizes.empty()) {
            top.fail("policy.batch_sizes", "only the fixed policy takes batch sizes");
        }
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

std::int64_t planned_iterations(const Scenario& scenario, std::int64_t train_size)
{
    if (scenario.iterations)
        return *scenario.iterations;
    const double samples = *scenario.epochs * static_cast<double>(train_size);
    return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(samples / scenario.total_batch)));
}

} // namespace fulcrum::scenario
