// LB-BSP Fig. 8: four GPU classes start at batch 32 each; Algorithm 2 moves samples from the
// straggler to the leader, fast-approach then fine-tune, to an equilibrium; at iteration 150
// the V100's link is cut from 10 to 2.5 Gbps and a new equilibrium forms.
#include "experiment/cluster_builder.h"
#include "experiment/results_table.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace fulcrum::experiment {

namespace {

constexpr std::int64_t kCutAt = 150;

scenario::Scenario gpu_cluster(const std::string& policy, std::int64_t iterations, std::uint64_t seed)
{
    scenario::Scenario s = base_scenario("equilibrium-" + policy, { "mlp", { 256, 128 } }, 128, 0.05f, 0.9f, seed);
    s.iterations = iterations;
    s.eval_interval = 50;
    s.comm_model_mb = 25; // a mid-size CNN's gradient: makes the bandwidth cut matter
    s.policy.type = policy;
    for (const std::string device : { "v100", "m60", "k80", "k520" }) {
        scenario::WorkerSpec w;
        w.name = device;
        w.gpu = perf::gpu_profile(device);
        w.network.bandwidth_gbps = 10;
        s.workers.push_back(w);
    }
    s.workers[0].network.changes.push_back({ kCutAt, 2.5 });
    return s;
}

// Median batch size of each worker over [from, to).
std::vector<double> median_sizes(
    const std::vector<IterationRecord>& rows, std::int64_t from, std::int64_t to, int workers)
{
    std::vector<std::vector<double>> sizes(static_cast<std::size_t>(workers));
    for (const auto& r : rows)
        if (r.iteration >= from && r.iteration < to)
            sizes[static_cast<std::size_t>(r.worker)].push_back(r.batch_size);
    std::vector<double> medians;
    for (auto& s : sizes) {
        if (s.empty()) {
            medians.push_back(0);
            continue;
        }
        std::nth_element(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(s.size() / 2), s.end());
        medians.push_back(s[s.size() / 2]);
    }
    return medians;
}

double mean_time(const std::vector<double>& times, std::int64_t from, std::int64_t to)
{
    to = std::min<std::int64_t>(to, static_cast<std::int64_t>(times.size()));
    if (to <= from)
        return 0;
    return std::accumulate(times.begin() + from, times.begin() + to, 0.0) / static_cast<double>(to - from);
}

} // namespace

void run_equilibrium(const ExperimentOptions& options)
{
    const std::int64_t iterations = options.quick ? 200 : 800;
    const CapturedRun lbbsp
        = run_captured(gpu_cluster("lbbsp-gpu", iterations, options.seed), options, "equilibrium-lbbsp");
    const CapturedRun bsp = run_captured(gpu_cluster("uniform", iterations, options.seed), options, "equilibrium-bsp");
    const std::vector<std::string> devices { "v100", "m60", "k80", "k520" };

    ResultsTable table({ "scheme", "iteration", "worker", "device", "batch_size", "batch_time_s", "decision" });
    for (const auto* run : { &lbbsp, &bsp })
        for (const auto& r : run->rows)
            table.add({ run == &lbbsp ? "lb-bsp" : "bsp", std::to_string(r.iteration), std::to_string(r.worker),
                devices[static_cast<std::size_t>(r.worker)], std::to_string(r.batch_size),
                fmt(r.compute_s + r.comm_s, 5), r.decision });
    table.write_csv(options.out / "results.csv");

    std::int64_t fine_tune_at = -1;
    std::string warnings;
    for (const auto& e : lbbsp.events) {
        if (e.kind == EventKind::PhaseChange && fine_tune_at < 0)
            fine_tune_at = e.iteration;
        if (e.kind == EventKind::Warning)
            warnings += "- iteration " + std::to_string(e.iteration) + ": " + e.message + "\n";
    }
    const auto before = median_sizes(lbbsp.rows, kCutAt - 30, kCutAt, 4);
    const auto after = median_sizes(lbbsp.rows, iterations - 30, iterations, 4);
    const auto lb_times = iteration_times(lbbsp.rows);
    const auto bsp_times = iteration_times(bsp.rows);

    ResultsTable summary({ "worker", "device", "start", "equilibrium before the cut", "equilibrium after the cut" });
    for (int i = 0; i < 4; ++i)
        summary.add({ std::to_string(i), devices[static_cast<std::size_t>(i)], "32",
            fmt(before[static_cast<std::size_t>(i)], 0), fmt(after[static_cast<std::size_t>(i)], 0) });
    ResultsTable times({ "window", "lb-bsp mean iteration s", "bsp mean iteration s", "speed-up" });
    const auto add_window = [&](const std::string& label, std::int64_t from, std::int64_t to) {
        const double lb = mean_time(lb_times, from, to), plain = mean_time(bsp_times, from, to);
        times.add({ label, fmt(lb, 4), fmt(plain, 4), fmt(plain / lb, 2) + "x" });
    };
    add_window("iterations " + std::to_string(kCutAt - 30) + "-" + std::to_string(kCutAt - 1), kCutAt - 30, kCutAt);
    add_window("iterations " + std::to_string(iterations - 30) + "-" + std::to_string(iterations - 1), iterations - 30,
        iterations);

    std::string body = "Four GPU workers (V100, M60, K80, K520 profiles), total batch 128, 32 each at the start, "
                       "Algorithm 2 used non-blocking; the V100's link drops from 10 to 2.5 Gbps at iteration "
        + std::to_string(kCutAt) + " (communication charged for a 25 MB model).\n\n"
        + "Fast-approach switched to fine-tune at iteration **"
        + (fine_tune_at >= 0 ? std::to_string(fine_tune_at) : std::string("never")) + "**.\n\n" + summary.markdown()
        + "\n" + times.markdown() + "\n"
        + (warnings.empty() ? std::string("No straggler warnings.\n") : "Warnings:\n" + warnings)
        + "\nPer-iteration rows of both runs are in results.csv; the runs are recorded in equilibrium-lbbsp.db and "
          "equilibrium-bsp.db.\n";
    write_markdown(options.out / "results.md", "Equilibrium (LB-BSP Fig. 8)",
        "fulcrum-experiment equilibrium --out " + options.out.string() + " --seed " + std::to_string(options.seed),
        body);
}

} // namespace fulcrum::experiment
