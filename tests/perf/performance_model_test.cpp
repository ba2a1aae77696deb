#include "perf/cpu_performance_model.h"
#include "perf/network_model.h"

#include <gtest/gtest.h>

using namespace fulcrum;

namespace {
perf::CpuPerformanceModel model(double speed, std::vector<perf::ResourcePoint> trace = {},
    std::optional<perf::ColocatedLoad> load = std::nullopt, perf::TransientNoise noise = {})
{
    perf::CpuProfile profile;
    profile.speed = speed;
    profile.noise = noise;
    return perf::CpuPerformanceModel(profile, perf::ResourceTimeline(std::move(trace), load, 5), 6);
}
} // namespace

TEST(CpuPerformanceModel, BatchTimeIsBatchOverSpeedOnAFullMachine)
{
    auto m = model(1000);
    EXPECT_DOUBLE_EQ(m.compute(0, 250).duration_s, 0.25);
}

TEST(CpuPerformanceModel, SpeedFollowsCpuShare)
{
    auto m = model(1000, { { 0, { 0.5, 1.0 } } });
    EXPECT_DOUBLE_EQ(m.compute(0, 250).duration_s, 0.5);
    EXPECT_DOUBLE_EQ(m.compute(0, 250).mean_share.cpu, 0.5);
}

TEST(CpuPerformanceModel, MemoryBelowNeedSlowsTheWorker)
{
    auto m = model(1000, { { 0, { 1.0, 0.125 } } }); // need is 0.25 by default: half speed
    EXPECT_DOUBLE_EQ(m.compute(0, 100).duration_s, 0.2);
}

TEST(CpuPerformanceModel, WorkIsIntegratedAcrossAShareChange)
{
    // 1000 samples/s until t = 0.1, then 250 samples/s: 100 samples by 0.1, 150 more take 0.6.
    auto m = model(1000, { { 0, { 1.0, 1.0 } }, { 0.1, { 0.25, 1.0 } } });
    const auto timing = m.compute(0, 250);
    EXPECT_NEAR(timing.duration_s, 0.7, 1e-12);
    EXPECT_NEAR(timing.mean_share.cpu, (0.1 * 1.0 + 0.6 * 0.25) / 0.7, 1e-12);
}

TEST(CpuPerformanceModel, NoiseIsReproducibleAndAveragesToNominal)
{
    auto a = model(1000, {}, {}, { .sigma = 0.2, .spike_probability = 0, .spike_factor = 3 });
    auto b = model(1000, {}, {}, { .sigma = 0.2, .spike_probability = 0, .spike_factor = 3 });
    double sum = 0;
    for (int k = 0; k < 4000; ++k) {
        const double t = a.compute(0, 100).duration_s;
        EXPECT_EQ(t, b.compute(0, 100).duration_s);
        sum += t;
    }
    EXPECT_NEAR(sum / 4000, 0.1, 0.003);
}

TEST(ResourceTimeline, ColocatedTasksTakeCpuAndAreDeterministic)
{
    const perf::ColocatedLoad load { .arrivals_per_hour = 360,
        .mean_duration_s = 30,
        .cpu_min = 0.3,
        .cpu_max = 0.3,
        .memory_min = 0,
        .memory_max = 0 };
    perf::ResourceTimeline a({}, load, 1), b({}, load, 1);
    int reduced = 0;
    for (int t = 0; t < 3600; t += 10) {
        const auto share = a.at(t);
        EXPECT_EQ(share, b.at(t));
        reduced += share.cpu < 1.0;
        EXPECT_GE(share.cpu, perf::ResourceTimeline::kMinimumShare);
    }
    // 360 arrivals/h of 30 s: busy roughly 1 - e^-3 of the time.
    EXPECT_GT(reduced, 200);
    EXPECT_LT(reduced, 360);
}

TEST(ResourceTimeline, NextChangeFindsScriptedSteps)
{
    perf::ResourceTimeline timeline({ { 0, {} }, { 5, { 0.5, 1 } } }, std::nullopt, 1);
    EXPECT_EQ(timeline.next_change_after(1), 5);
    EXPECT_TRUE(std::isinf(timeline.next_change_after(6)));
}

TEST(NetworkModel, PullPlusPushOfTheModel)
{
    // 1 MB at 8 Gbps = 1 ms each way, plus 0.5 ms latency each way.
    EXPECT_NEAR(
        perf::communication_time({ .bandwidth_gbps = 8, .latency_s = 0.0005, .changes = {} }, 1'000'000), 0.003, 1e-12);
}
