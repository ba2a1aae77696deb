#include "perf/cluster_profiles.h"
#include "perf/gpu_performance_model.h"
#include "perf/gpu_profile_fit.h"
#include "perf/worker_profile.h"

#include <gtest/gtest.h>

using namespace fulcrum;

TEST(GpuPerformanceModel, TakesConstantTimeBelowSaturationAndLinearAbove)
{
    perf::GpuProfile p = perf::gpu_profile("k80");
    p.noise.sigma = 0;
    perf::GpuPerformanceModel m(p, 1);
    EXPECT_DOUBLE_EQ(m.compute(0, 1).duration_s, m.compute(0, p.saturation_batch).duration_s);
    EXPECT_GT(m.compute(0, 1).duration_s, 0); // launch overhead
    const double t64 = m.compute(0, 64).duration_s, t128 = m.compute(0, 128).duration_s;
    EXPECT_NEAR(t128 - t64, 64 / p.peak_speed, 1e-12);
}

// The fit recovers the model's own parameters from its noiseless times, and from times
// with ±3 % noise it stays close; too few points are refused.
TEST(GpuTimingFit, RecoversTheModelsOverheadSaturationAndPeak)
{
    perf::GpuProfile truth = perf::gpu_profile("v100"); // Γ 10 ms, x_s 16, 1000/s
    truth.noise.sigma = 0;
    perf::GpuPerformanceModel model(truth, 1);
    std::vector<perf::TimingPoint> points;
    for (std::int32_t x = 1; x <= 4096; x *= 2)
        points.push_back({ x, model.compute(0, x).duration_s });
    const perf::TimingFit exact = perf::fit_gpu_timing(points);
    EXPECT_EQ(exact.saturation_batch, 16);
    EXPECT_NEAR(exact.launch_overhead_s, 0.010, 1e-9);
    EXPECT_NEAR(exact.peak_speed, 1000, 1e-6);
    EXPECT_LT(exact.rms_relative_error, 1e-9);

    const double wobble[] = { 1.03, 0.97, 1.01, 0.99, 1.02, 0.98, 1.0, 1.03, 0.97, 1.01, 0.99, 1.02, 0.98 };
    for (std::size_t i = 0; i < points.size(); ++i)
        points[i].seconds *= wobble[i];
    const perf::TimingFit noisy = perf::fit_gpu_timing(points);
    EXPECT_NEAR(noisy.launch_overhead_s, 0.010, 0.002);
    EXPECT_NEAR(noisy.peak_speed, 1000, 50);
    EXPECT_GT(noisy.rms_relative_error, 0.005);
    EXPECT_LT(noisy.rms_relative_error, 0.04);

    const std::vector<perf::TimingPoint> one_size { { 8, 0.01 }, { 8, 0.011 } };
    EXPECT_THROW(perf::fit_gpu_timing(one_size), std::invalid_argument);
    const std::vector<perf::TimingPoint> bad { { 8, 0.01 }, { 16, -1 } };
    EXPECT_THROW(perf::fit_gpu_timing(bad), std::invalid_argument);
}

TEST(GpuPerformanceModel, MemoryGrowsWithTheBatchUpToTheLimit)
{
    const perf::GpuProfile p = perf::gpu_profile("k520");
    EXPECT_EQ(p.batch_limit(), 75); // (4 - 1) GB / 0.04 GB per sample
    EXPECT_LE(p.memory_use(p.batch_limit()), 1.0);
    EXPECT_GT(p.memory_use(p.batch_limit() + 1), 1.0);
    EXPECT_THROW(perf::gpu_profile("tpu"), std::invalid_argument);
}

TEST(ClusterProfiles, ClusterBHasThePapersThirtyTwoWorkers)
{
    int total = 0;
    for (const auto& t : perf::cluster_b_instances())
        total += t.count_in_cluster_b;
    EXPECT_EQ(total, 32);
    EXPECT_EQ(perf::instance_speed_factor("m4.4xlarge"), 2.0);
    EXPECT_FALSE(perf::instance_speed_factor("p3.2xlarge"));
}

TEST(ClusterProfiles, HeteroL3MakesTheSlowestWorkerAThirdOfTheFastest)
{
    const int n = 8;
    std::vector<double> mean_speed;
    for (int i = 0; i < n; ++i) {
        perf::WorkerProfile w;
        w.cpu.speed = 100;
        w.competing = perf::competing_process(perf::Heterogeneity::HeteroL3, i, n, 1.0);
        auto model = perf::make_performance_model(w, 17 + i, 3);
        double cpu = 0;
        for (int t = 0; t < 2000; ++t)
            cpu += model->share_at(t + 0.5).cpu;
        mean_speed.push_back(cpu / 2000);
    }
    EXPECT_NEAR(mean_speed.front(), 1.0, 1e-9);
    EXPECT_NEAR(mean_speed.back(), 1.0 / 3.0, 1e-9);
    EXPECT_GT(mean_speed[3], mean_speed.back());
    EXPECT_LT(mean_speed[3], mean_speed.front());
    EXPECT_FALSE(perf::competing_process(perf::Heterogeneity::Homo, 3, n));
}
