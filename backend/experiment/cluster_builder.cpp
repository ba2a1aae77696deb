#include "experiment/cluster_builder.h"

#include "data/fashion_mnist.h"

#include <boost/json.hpp>
#include <map>
#include <mutex>

namespace fulcrum::experiment {

scenario::Scenario base_scenario(const std::string& name, const model::ModelSpec& model, std::int32_t total_batch,
    float learning_rate, float momentum, std::uint64_t seed)
{
    scenario::Scenario s;
    s.name = name;
    s.source = "fulcrum-experiment " + name;
    s.seed = seed;
    s.mode = scenario::Mode::Virtual;
    s.model = model;
    s.total_batch = total_batch;
    s.optimizer.learning_rate = learning_rate;
    s.optimizer.momentum = momentum;
    s.threads = 0;
    return s;
}

std::vector<scenario::WorkerSpec> homogeneous_cpu(int n, double speed)
{
    std::vector<scenario::WorkerSpec> workers(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        auto& w = workers[static_cast<std::size_t>(i)];
        w.name = "m4.2xlarge-" + std::to_string(i);
        w.cpu.speed = speed;
        w.cpu.noise.sigma = 0.03;
    }
    return workers;
}

void apply_heterogeneity(std::vector<scenario::WorkerSpec>& workers, perf::Heterogeneity level, double period_s)
{
    const int n = static_cast<int>(workers.size());
    for (int i = 0; i < n; ++i)
        workers[static_cast<std::size_t>(i)].competing = perf::competing_process(level, i, n, period_s);
}

const data::TrainTest& fashion_mnist()
{
    static std::once_flag once;
    static data::TrainTest data;
    std::call_once(once, [] { data = data::load_fashion_mnist(data::kFashionMnistDir); });
    return data;
}

CapturedRun run_captured(
    scenario::Scenario s, const ExperimentOptions& options, const std::string& db_name, bool keep_rows)
{
    CapturedRun captured;
    boost::json::object note;
    note["generated_by"] = "fulcrum-experiment";
    note["run"] = db_name;
    note["seed"] = s.seed;
    s.json = boost::json::serialize(note);
    run::RunOptions ro;
    const std::filesystem::path db = options.out / (db_name + ".db");
    std::error_code ec;
    for (const char* suffix : { "", "-wal", "-shm" })
        std::filesystem::remove(db.string() + suffix, ec);
    ro.database = db;
    ro.data = fashion_mnist();
    if (keep_rows)
        ro.on_rows = [&](std::span<const IterationRecord> rows) {
            captured.rows.insert(captured.rows.end(), rows.begin(), rows.end());
        };
    ro.on_evaluation = [&](const EvaluationRecord& e) { captured.evaluations.push_back(e); };
    ro.on_event = [&](const JobEvent& e) { captured.events.push_back(e); };
    if (options.status)
        options.status("running " + db_name);
    captured.summary = run::run_scenario(s, ro);
    return captured;
}

std::vector<double> iteration_times(const std::vector<IterationRecord>& rows)
{
    std::map<std::int64_t, std::pair<double, double>> span; // iteration -> (start, barrier)
    for (const auto& r : rows) {
        auto [it, fresh] = span.try_emplace(r.iteration, r.start_s, r.end_s + r.wait_s);
        if (!fresh) {
            it->second.first = std::min(it->second.first, r.start_s);
            it->second.second = std::max(it->second.second, r.end_s + r.wait_s);
        }
    }
    std::vector<double> times;
    times.reserve(span.size());
    for (const auto& [k, s] : span)
        times.push_back(s.second - s.first);
    return times;
}

} // namespace fulcrum::experiment
