// Weighted (eq. 7) against naive (eq. 5) gradient aggregation when LB-BSP gives workers
// unequal batches: test accuracy after a fixed number of epochs, over seeds.
#include "experiment/cluster_builder.h"
#include "experiment/results_table.h"

#include <cmath>

namespace fulcrum::experiment {

void run_aggregation(const ExperimentOptions& options)
{
    const int seeds = options.quick ? 1 : 3;
    const double epochs = options.quick ? 0.5 : 3.0;
    ResultsTable table({ "aggregation", "seed", "final_accuracy", "mean_batch_spread" });
    double mean[2] = { 0, 0 };
    for (int k = 0; k < 2; ++k) {
        const bool weighted = k == 0;
        for (int seed = 0; seed < seeds; ++seed) {
            scenario::Scenario s = base_scenario("aggregation", { "mlp", { 256, 128 } }, 256, 0.05f, 0.9f,
                options.seed + static_cast<std::uint64_t>(seed));
            // Eight workers of Cluster-B's types, the slowest a quarter of the fastest.
            const double speeds[] = { 2000, 1400, 1400, 1000, 1000, 1000, 1000, 500 };
            for (int i = 0; i < 8; ++i) {
                scenario::WorkerSpec w;
                w.name = "worker-" + std::to_string(i);
                w.cpu.speed = speeds[i];
                w.cpu.noise.sigma = 0.03;
                s.workers.push_back(w);
            }
            s.policy.type = "lbbsp-cpu";
            s.policy.predictor.type = "ema";
            s.aggregation = weighted ? ps::Aggregation::Weighted : ps::Aggregation::Naive;
            s.epochs = epochs;
            s.eval_interval = 1000000;
            const std::string name
                = std::string("aggregation-") + (weighted ? "weighted" : "naive") + "-" + std::to_string(seed);
            const CapturedRun run = run_captured(s, options, name);
            double spread = 0;
            std::int64_t iterations = 0;
            std::int32_t lo = 1 << 30, hi = 0;
            std::int64_t current = -1;
            for (const auto& r : run.rows) {
                if (r.iteration != current) {
                    if (current >= 0) {
                        spread += static_cast<double>(hi) / lo;
                        ++iterations;
                    }
                    current = r.iteration;
                    lo = 1 << 30;
                    hi = 0;
                }
                lo = std::min(lo, r.batch_size);
                hi = std::max(hi, r.batch_size);
            }
            mean[k] += run.summary.final_accuracy / seeds;
            table.add({ weighted ? "weighted" : "naive",
                std::to_string(options.seed + static_cast<std::uint64_t>(seed)), fmt(run.summary.final_accuracy, 4),
                fmt(iterations ? spread / static_cast<double>(iterations) : 0, 2) + "x" });
        }
    }
    table.write_csv(options.out / "results.csv");
    const std::string body = "Eight CPU workers (2000 to 500 samples/s), MLP 784-256-128-10, total batch 256, LB-BSP "
                             "(Algorithm 1, EMA), "
        + fmt(epochs, 1) + " epochs, " + std::to_string(seeds) + " seed(s). Mean accuracy: weighted **"
        + fmt(mean[0], 4) + "**, naive **" + fmt(mean[1], 4)
        + "**. mean_batch_spread is the largest over the smallest batch of an "
          "iteration, averaged.\n\n"
        + table.markdown();
    write_markdown(options.out / "results.md", "Weighted vs naive aggregation under LB-BSP",
        "fulcrum-experiment aggregation --out " + options.out.string() + " --seed " + std::to_string(options.seed),
        body);
}

} // namespace fulcrum::experiment
