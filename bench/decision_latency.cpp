// How long the BatchSizeManager takes to decide at a barrier for 1,000 workers (NARX
// training excluded: it runs off the critical path), and one NARX inference. Prints
// medians and the ratio to a uniform-policy decision measured in the same run.
//
//   build/release/bench/decision_latency [--workers N] [--repeats N]

#include "balance/lbbsp_cpu_policy.h"
#include "balance/policy_registry.h"
#include "common/random.h"
#include "predict/narx_predictor.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

using namespace fulcrum;
using Clock = std::chrono::steady_clock;

namespace {

std::vector<balance::WorkerObservation> observations(int n, Rng& rng, const std::vector<std::int32_t>& sizes)
{
    std::vector<balance::WorkerObservation> obs(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        auto& o = obs[static_cast<std::size_t>(i)];
        o.worker = i;
        o.batch_size = sizes[static_cast<std::size_t>(i)];
        o.cpu_share = o.next_cpu_share = 0.3 + 0.7 * uniform01(rng);
        o.memory_share = o.next_memory_share = 0.5 + 0.5 * uniform01(rng);
        o.compute_s = o.batch_size / (100.0 * o.cpu_share);
        o.comm_s = 0.001;
    }
    return obs;
}

double median_decision_us(balance::BatchSizeManager& manager, int n, int repeats, Rng& rng)
{
    auto allocation = manager.initial();
    std::vector<double> us;
    for (int k = 0; k < repeats; ++k) {
        const auto obs = observations(n, rng, allocation.batch_sizes);
        const auto start = Clock::now();
        allocation = manager.next(obs, k, k);
        us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    }
    std::nth_element(us.begin(), us.begin() + static_cast<std::ptrdiff_t>(us.size() / 2), us.end());
    return us[us.size() / 2];
}

} // namespace

int main(int argc, char** argv)
{
    int workers = 1000, repeats = 2000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--workers"))
            workers = std::stoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--repeats"))
            repeats = std::stoi(argv[i + 1]);
    }
    Rng rng(1);
    const std::int32_t total = 32 * workers;

    balance::PolicySpec uniform;
    auto uniform_manager = balance::make_manager(uniform, workers, total);
    const double uniform_us = median_decision_us(*uniform_manager, workers, repeats, rng);

    balance::PolicySpec ema;
    ema.type = "lbbsp-cpu";
    ema.predictor.type = "ema";
    auto ema_manager = balance::make_manager(ema, workers, total);
    const double ema_us = median_decision_us(*ema_manager, workers, repeats, rng);

    // NARX with a model in place for every worker (warm-started), so each decision runs
    // 1,000 network inferences.
    balance::PolicySpec narx = ema;
    narx.predictor.type = "narx";
    narx.predictor.narx.retrain_every = 1 << 30; // training excluded: it runs off the critical path
    auto narx_manager = balance::make_manager(narx, workers, total);
    {
        auto a = narx_manager->initial();
        narx_manager->next(observations(workers, rng, a.batch_sizes), 0, 0); // creates the predictors
        auto& policy = dynamic_cast<balance::LbBspCpuPolicy&>(narx_manager->policy());
        const predict::NarxNetwork network({}, 3);
        for (int i = 0; i < workers; ++i)
            dynamic_cast<predict::NarxPredictor*>(policy.predictor(i))->warm_start(network);
    }
    const double narx_us = median_decision_us(*narx_manager, workers, repeats, rng);

    // One inference.
    predict::NarxPredictor single;
    for (int k = 0; k < 4; ++k)
        single.observe({ 100.0 + k, 0.5, 0.5 });
    single.warm_start(predict::NarxNetwork({}, 3));
    const int inferences = 200000;
    double sink = 0;
    const auto start = Clock::now();
    for (int k = 0; k < inferences; ++k)
        sink += single.predict({ 0.5 + 1e-7 * k, 0.7 });
    const double inference_us = std::chrono::duration<double, std::micro>(Clock::now() - start).count() / inferences;

    std::printf("workers                     %d\n", workers);
    std::printf("uniform decision            %8.2f us (baseline)\n", uniform_us);
    std::printf("lbbsp-cpu/ema decision      %8.2f us (%.2fx baseline)\n", ema_us, ema_us / uniform_us);
    std::printf("lbbsp-cpu/narx decision     %8.2f us (%.2fx baseline)\n", narx_us, narx_us / uniform_us);
    std::printf("narx inference              %8.3f us per worker\n", inference_us);
    std::printf("targets: decision < 100 us: %s; inference < 5 us: %s   (checksum %.3g)\n",
        narx_us < 100 ? "met" : "MISSED", inference_us < 5 ? "met" : "MISSED", sink);
    return 0;
}
