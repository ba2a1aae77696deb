#include "balance/lbbsp_cpu_policy.h"
#include "balance/lbbsp_gpu_policy.h"
#include "balance/narx_model_files.h"
#include "balance/policy_registry.h"
#include "perf/gpu_performance_model.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <numeric>
#include <unistd.h>

using namespace fulcrum;

namespace {

std::vector<balance::WorkerObservation> observe(
    const std::vector<std::int32_t>& sizes, const std::vector<double>& speeds, const std::vector<double>& comm = {})
{
    std::vector<balance::WorkerObservation> obs;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        balance::WorkerObservation o;
        o.worker = static_cast<WorkerId>(i);
        o.batch_size = sizes[i];
        o.compute_s = sizes[i] / speeds[i];
        o.comm_s = comm.empty() ? 0 : comm[i];
        o.cpu_share = o.memory_share = o.next_cpu_share = o.next_memory_share = 1;
        obs.push_back(o);
    }
    return obs;
}

// NARX trained inline (deterministic in tests) once a worker has `min_samples`.
predict::PredictorSpec narx_spec(predict::WarmStart warm_start, int min_samples)
{
    predict::PredictorSpec spec;
    spec.type = "narx";
    spec.warm_start = warm_start;
    spec.narx.min_samples = min_samples;
    spec.narx.background = false;
    return spec;
}

} // namespace

TEST(LbBspCpuPolicy, Algorithm1GivesBatchesProportionalToSpeedKeepingTheTotal)
{
    predict::PredictorSpec spec;
    spec.type = "memoryless";
    balance::LbBspCpuPolicy policy(spec);
    const std::vector<double> speeds { 100, 200, 300, 400 };
    auto a = policy.initial(4, 100);
    EXPECT_EQ(a.batch_sizes, (std::vector<std::int32_t> { 25, 25, 25, 25 }));
    a = policy.next(observe(a.batch_sizes, speeds), 100);
    EXPECT_EQ(a.batch_sizes, (std::vector<std::int32_t> { 10, 20, 30, 40 }));
    ASSERT_EQ(a.predicted_speeds.size(), 4u);
    EXPECT_DOUBLE_EQ(*a.predicted_speeds[3], 400);
}

TEST(LbBspCpuPolicy, RoundingKeepsEveryWorkerAtLeastOneSample)
{
    predict::PredictorSpec spec;
    spec.type = "memoryless";
    balance::LbBspCpuPolicy policy(spec);
    const auto a = policy.next(observe({ 5, 5, 5 }, { 1, 1000, 1000 }), 15);
    EXPECT_EQ(std::accumulate(a.batch_sizes.begin(), a.batch_sizes.end(), 0), 15);
    EXPECT_GE(*std::min_element(a.batch_sizes.begin(), a.batch_sizes.end()), 1);
}

TEST(LbBspCpuPolicy, SlowLinksGetSmallerBatchesSoAllFinishTogether)
{
    const auto sizes = balance::balanced_sizes({ 100, 100 }, { 0.0, 0.2 }, 100);
    // 60 / 100 = 0.6 s against 40 / 100 + 0.2 = 0.6 s.
    EXPECT_EQ(sizes, (std::vector<std::int32_t> { 60, 40 }));
}

namespace {

// Runs Algorithm 2 against four GPU models; returns the allocations per iteration.
struct GpuRun {
    std::vector<std::vector<std::int32_t>> sizes;
    std::vector<EventRecord> events;
    std::vector<double> spreads; // (max - min) / mean batch time
};

GpuRun run_gpu(const std::vector<perf::GpuProfile>& devices, int iterations, std::int32_t total)
{
    std::vector<perf::GpuPerformanceModel> models;
    std::vector<std::int32_t> limits;
    for (std::size_t i = 0; i < devices.size(); ++i) {
        models.emplace_back(devices[i], 7 + i);
        limits.push_back(devices[i].batch_limit());
    }
    balance::PolicySpec spec;
    spec.type = "lbbsp-gpu";
    auto manager = balance::make_manager(spec, static_cast<int>(devices.size()), total, limits);
    GpuRun run;
    auto a = manager->initial();
    for (int k = 0; k < iterations; ++k) {
        run.sizes.push_back(a.batch_sizes);
        std::vector<balance::WorkerObservation> obs;
        double lo = 1e9, hi = 0, sum = 0;
        for (std::size_t i = 0; i < models.size(); ++i) {
            const auto t = models[i].compute(0, a.batch_sizes[i]);
            balance::WorkerObservation o;
            o.worker = static_cast<WorkerId>(i);
            o.batch_size = a.batch_sizes[i];
            o.compute_s = t.duration_s;
            o.comm_s = 0.01;
            o.device_memory = t.device_memory;
            o.batch_limit = limits[i];
            obs.push_back(o);
            lo = std::min(lo, o.batch_time_s());
            hi = std::max(hi, o.batch_time_s());
            sum += o.batch_time_s();
        }
        run.spreads.push_back((hi - lo) / (sum / static_cast<double>(models.size())));
        a = manager->next(obs, k, k);
        for (auto& e : records(manager->take_events()))
            run.events.push_back(e);
    }
    return run;
}

} // namespace

TEST(LbBspGpuPolicy, Algorithm2ReachesAnEquilibriumThroughBothPhases)
{
    std::vector<perf::GpuProfile> devices;
    for (const auto& name : perf::gpu_classes()) {
        devices.push_back(perf::gpu_profile(name));
        devices.back().noise.sigma = 0;
    }
    const GpuRun run = run_gpu(devices, 400, 128);
    for (const auto& sizes : run.sizes) {
        EXPECT_EQ(std::accumulate(sizes.begin(), sizes.end(), 0), 128);
        for (std::size_t i = 0; i < sizes.size(); ++i)
            EXPECT_LE(sizes[i], devices[i].batch_limit());
    }
    const bool phase_change
        = std::any_of(run.events.begin(), run.events.end(), [](const auto& e) { return e.kind == "phase-change"; });
    EXPECT_TRUE(phase_change);
    // From uniform (the K520 takes several times the V100's time) to nearly balanced.
    EXPECT_GT(run.spreads.front(), 1.0);
    EXPECT_LT(run.spreads.back(), 0.25);
    EXPECT_GT(run.sizes.back()[0], run.sizes.back()[3]); // the V100 holds more than the K520
}

TEST(LbBspGpuPolicy, AStragglerThatCannotShrinkRaisesARemoveWarning)
{
    std::vector<perf::GpuProfile> devices(2, perf::gpu_profile("v100"));
    devices[1].peak_speed = 5; // hopeless
    for (auto& d : devices)
        d.noise.sigma = 0;
    const GpuRun run = run_gpu(devices, 200, 64);
    const auto warning
        = std::find_if(run.events.begin(), run.events.end(), [](const auto& e) { return e.kind == "warning"; });
    ASSERT_NE(warning, run.events.end());
    EXPECT_EQ(warning->worker, 1);
    EXPECT_NE(warning->message.find("remove this straggler"), std::string::npos);
    EXPECT_GT(run.sizes.back()[1], 0);
    EXPECT_GE(run.sizes.back()[1], 1);
}

TEST(LbBspGpuPolicy, IsUsedNonBlockingSoAnswersArriveOneIterationLate)
{
    balance::PolicySpec spec;
    spec.type = "lbbsp-gpu";
    spec.gpu.fast_approach = { 5, 1 };
    auto manager = balance::make_manager(spec, 2, 64);
    EXPECT_FALSE(manager->blocking());
    auto a = manager->initial();
    std::vector<balance::WorkerObservation> obs = observe(a.batch_sizes, { 100, 10 });
    a = manager->next(obs, 0, 1);
    EXPECT_EQ(a.batch_sizes, (std::vector<std::int32_t> { 32, 32 })); // the policy's first move is not in yet
    obs = observe(a.batch_sizes, { 100, 10 });
    a = manager->next(obs, 1, 2);
    EXPECT_EQ(a.batch_sizes, (std::vector<std::int32_t> { 37, 27 }));
}

TEST(LbBspCpuPolicy, NarxWarmStartsFromAPeerOrFromAnEarlierRunsModelFile)
{
    predict::PredictorSpec spec = narx_spec(predict::WarmStart::Peer, 60);
    balance::LbBspCpuPolicy peer(spec);
    for (int k = 0; k < 80; ++k) // only worker 0 runs long enough to train its own network
        peer.next(observe({ 10 }, { 100.0 + (k % 7) }), 10);
    peer.next(observe({ 5, 5 }, { 100, 50 }), 10);
    auto* late = dynamic_cast<predict::NarxPredictor*>(peer.predictor(1));
    ASSERT_NE(late, nullptr);
    EXPECT_TRUE(late->has_model());

    const auto file = std::filesystem::temp_directory_path() / ("narx-model-" + std::to_string(::getpid()) + ".txt");
    {
        std::ofstream out(file);
        out << dynamic_cast<predict::NarxPredictor*>(peer.predictor(0))->model()->serialize();
    }
    spec.warm_start = predict::WarmStart::File;
    spec.warm_start_file = file.string();
    balance::LbBspCpuPolicy from_file(spec);
    from_file.next(observe({ 5, 5 }, { 100, 50 }), 10);
    EXPECT_TRUE(dynamic_cast<predict::NarxPredictor*>(from_file.predictor(1))->has_model());

    spec.warm_start_file = file.string() + ".missing";
    EXPECT_THROW(balance::LbBspCpuPolicy { spec }, std::invalid_argument);
    std::filesystem::remove(file);
}

TEST(LbBspCpuPolicy, NarxPredictionsFromTheBankEqualEachWorkersOwnNetwork)
{
    // The policy evaluates all workers' networks together (NarxBank); each answer must be the
    // one that worker's predictor gives on its own.
    predict::PredictorSpec spec = narx_spec(predict::WarmStart::None, 40);
    spec.narx.retrain_every = 25;
    balance::LbBspCpuPolicy policy(spec);
    const int workers = 11; // one full group of eight lanes and a partial one
    std::vector<std::int32_t> sizes(workers, 10);
    balance::Allocation a;
    for (int k = 0; k < 90; ++k) {
        std::vector<double> speeds;
        for (int i = 0; i < workers; ++i)
            speeds.push_back(50.0 + 10 * i + 5 * ((k + i) % 4));
        auto obs = observe(sizes, speeds);
        for (int i = 0; i < workers; ++i) {
            auto& o = obs[static_cast<std::size_t>(i)];
            o.next_cpu_share = 0.5 + 0.05 * ((k + i) % 5);
            o.next_memory_share = 0.9 - 0.03 * (k % 3);
        }
        a = policy.next(obs, 10 * workers);
        if (k < 45)
            continue;
        for (int i = 0; i < workers; ++i) {
            auto* narx = dynamic_cast<predict::NarxPredictor*>(policy.predictor(i));
            ASSERT_TRUE(narx && narx->has_model());
            const auto& o = obs[static_cast<std::size_t>(i)];
            const double own = narx->predict({ o.next_cpu_share, o.next_memory_share });
            ASSERT_TRUE(a.predicted_speeds[static_cast<std::size_t>(i)].has_value());
            EXPECT_NEAR(*a.predicted_speeds[static_cast<std::size_t>(i)], own, 1e-4 * own)
                << "worker " << i << " iteration " << k;
        }
    }
}

TEST(LbBspCpuPolicy, NarxPooledWarmStartTrainsOneNetworkOnAllWorkersSamples)
{
    predict::PredictorSpec spec = narx_spec(predict::WarmStart::Pooled, 40);
    balance::LbBspCpuPolicy policy(spec);
    const int workers = 8;
    int decisions = 0;
    auto* first = static_cast<predict::NarxPredictor*>(nullptr);
    for (; decisions < 50; ++decisions) {
        std::vector<double> speeds;
        for (int i = 0; i < workers; ++i)
            speeds.push_back(100.0 + 20 * i + 7 * ((decisions + i) % 3));
        policy.next(observe(std::vector<std::int32_t>(workers, 8), speeds), 8 * workers);
        first = dynamic_cast<predict::NarxPredictor*>(policy.predictor(0));
        if (first && first->has_model())
            break;
    }
    // Each worker needs lags + 1 = 3 samples for its first pair; then 8 pairs per decision
    // reach 40 at the 7th decision, far before one worker's own 40.
    EXPECT_EQ(decisions + 1, 7);
    for (int i = 0; i < workers; ++i) {
        auto* narx = dynamic_cast<predict::NarxPredictor*>(policy.predictor(i));
        ASSERT_TRUE(narx && narx->has_model()) << "worker " << i;
        EXPECT_EQ(narx->trainings(), 0) << "the network is the pooled one, not the worker's own";
    }
    EXPECT_THROW(
        [] {
            predict::PredictorSpec bad;
            bad.type = "narx-2";
            balance::LbBspCpuPolicy p(bad);
        }(),
        std::invalid_argument);
}

TEST(LbBspCpuPolicy, SavedNarxModelsWarmStartALaterRun)
{
    balance::PolicySpec spec;
    spec.type = "lbbsp-cpu";
    spec.predictor.type = "narx";
    spec.predictor.narx.min_samples = 40;
    spec.predictor.narx.background = false;
    auto manager = balance::make_manager(spec, 3, 30);
    auto a = manager->initial();
    for (int k = 0; k < 45; ++k)
        a = manager->next(observe(a.batch_sizes, { 100.0 + k % 3, 50, 30 }), k, k);

    const auto dir = std::filesystem::temp_directory_path() / ("narx-models-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto written = balance::save_narx_models(*manager, dir);
    ASSERT_EQ(written.size(), 3u);
    EXPECT_EQ(std::filesystem::path(written[2]).filename(), "worker-2.narx");
    const predict::NarxNetwork loaded = predict::load_narx_model(written[0]);
    const auto* own = dynamic_cast<balance::LbBspCpuPolicy&>(manager->policy()).predictor(0);
    EXPECT_EQ(loaded.serialize(), dynamic_cast<const predict::NarxPredictor*>(own)->model()->serialize());

    // The later run predicts with it from its first barrier.
    spec.predictor.warm_start = predict::WarmStart::File;
    spec.predictor.warm_start_file = written[0];
    auto later = balance::make_manager(spec, 3, 30);
    auto b = later->initial();
    b = later->next(observe(b.batch_sizes, { 100, 50, 30 }), 0, 0);
    EXPECT_TRUE(dynamic_cast<const predict::NarxPredictor*>(
        dynamic_cast<balance::LbBspCpuPolicy&>(later->policy()).predictor(1))
                    ->has_model());

    // A policy without NARX networks writes nothing.
    balance::PolicySpec uniform;
    EXPECT_TRUE(balance::save_narx_models(*balance::make_manager(uniform, 3, 30), dir).empty());
    std::filesystem::remove_all(dir);
}
