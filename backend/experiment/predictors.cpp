// LB-BSP Table 3: how well each speed predictor foresees a worker's next speed on a cluster
// whose speeds follow their CPU and memory shares, and the iteration time LB-BSP reaches
// with it.
#include "experiment/cluster_builder.h"
#include "experiment/results_table.h"

#include <cmath>
#include <map>
#include <numeric>

namespace fulcrum::experiment {

namespace {

scenario::Scenario dynamic_cluster(const std::string& policy, const std::string& predictor, std::int64_t iterations,
    int min_samples, std::uint64_t seed)
{
    scenario::Scenario s = base_scenario("predictors-" + predictor, { "softmax", {} }, 256, 0.05f, 0.9f, seed);
    s.iterations = iterations;
    s.eval_interval = 500;
    s.policy.type = policy;
    s.policy.predictor.type = predictor;
    s.policy.predictor.narx.min_samples = min_samples;
    for (int i = 0; i < 16; ++i) {
        scenario::WorkerSpec w;
        w.name = "worker-" + std::to_string(i);
        w.cpu.speed = 600.0 * (i % 4 == 0 ? 1.4 : 1.0);
        w.cpu.memory_need = 0.5;
        w.cpu.noise.sigma = 0.03;
        w.cpu.noise.spike_probability = 0.01;
        w.cpu.noise.spike_factor = 2.0;
        // Resource-driven dynamics: a competing process flipping every 0.5 s and co-located
        // tasks that take CPU and memory; the predictor sees the shares, not the tasks.
        w.competing = perf::CompetingProcess { 0.2 + 0.04 * i, 0.5, 0.0, 0.5 };
        w.colocated = perf::ColocatedLoad { 360, 10, 0.1, 0.4, 0.2, 0.6 };
        s.workers.push_back(w);
    }
    return s;
}

} // namespace

void run_predictors(const ExperimentOptions& options)
{
    const std::int64_t iterations = options.quick ? 400 : 2000;
    const int min_samples = options.quick ? 100 : 500;
    const std::int64_t scored_from = min_samples + 50; // after NARX's first model is in use, for every predictor alike

    ResultsTable table({ "predictor", "rmse_samples_per_s", "relative_rmse", "mean_iteration_s", "vs_uniform" });
    const CapturedRun uniform = run_captured(
        dynamic_cluster("uniform", "ema", iterations, min_samples, options.seed), options, "predictors-uniform");
    const auto uniform_times = iteration_times(uniform.rows);
    const double uniform_mean = std::accumulate(uniform_times.begin() + scored_from, uniform_times.end(), 0.0)
        / static_cast<double>(uniform_times.size() - static_cast<std::size_t>(scored_from));

    std::map<std::string, double> rmse;
    for (const std::string predictor : { "memoryless", "ema", "arima", "narx" }) {
        const CapturedRun run
            = run_captured(dynamic_cluster("lbbsp-cpu", predictor, iterations, min_samples, options.seed), options,
                "predictors-" + predictor);
        double squared = 0, speed_sum = 0;
        std::int64_t count = 0;
        for (const auto& r : run.rows)
            if (r.iteration >= scored_from && r.predicted_speed) {
                squared += (*r.predicted_speed - r.speed) * (*r.predicted_speed - r.speed);
                speed_sum += r.speed;
                ++count;
            }
        const double error = count ? std::sqrt(squared / static_cast<double>(count)) : 0;
        rmse[predictor] = error;
        const auto times = iteration_times(run.rows);
        const double mean = std::accumulate(times.begin() + scored_from, times.end(), 0.0)
            / static_cast<double>(times.size() - static_cast<std::size_t>(scored_from));
        table.add({ predictor, fmt(error, 2), fmt(count ? error / (speed_sum / static_cast<double>(count)) : 0, 4),
            fmt(mean, 5), fmt(uniform_mean / mean, 3) + "x" });
    }
    table.add({ "(uniform BSP, no prediction)", "", "", fmt(uniform_mean, 5), "1.000x" });
    table.write_csv(options.out / "results.csv");

    const std::string body
        = "16 CPU workers whose speed follows their CPU share (a competing process flipping every "
          "0.5 s with a per-worker probability) and memory share (co-located tasks taking 20-60 % of "
          "memory against a 50 % need), plus transient jitter and spikes that no predictor can know. "
          "Softmax regression, total batch 256, "
        + std::to_string(iterations)
        + " iterations, LB-BSP Algorithm 1 with each predictor; NARX uses EMA for its first "
        + std::to_string(min_samples) + " iterations. Errors are scored from iteration " + std::to_string(scored_from)
        + " on, for every predictor alike.\n\n" + "NARX's RMSE is **" + fmt(100 * (1 - rmse["narx"] / rmse["ema"]), 1)
        + " % lower** than EMA's.\n\n" + table.markdown();
    write_markdown(options.out / "results.md", "Speed predictors (LB-BSP Table 3)",
        "fulcrum-experiment predictors --out " + options.out.string() + " --seed " + std::to_string(options.seed),
        body);
}

} // namespace fulcrum::experiment
