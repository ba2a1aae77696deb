#include "perf/gpu_performance_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fulcrum::perf {

std::int32_t GpuProfile::batch_limit() const
{
    if (memory_per_sample_gb <= 0)
        return 0;
    return std::max<std::int32_t>(
        0, static_cast<std::int32_t>(std::floor((memory_gb - base_memory_gb) / memory_per_sample_gb)));
}

double GpuProfile::memory_use(std::int32_t batch_size) const
{
    return (base_memory_gb + memory_per_sample_gb * batch_size) / memory_gb;
}

const std::vector<std::string>& gpu_classes()
{
    static const std::vector<std::string> classes { "v100", "m60", "k80", "k520" };
    return classes;
}

GpuProfile gpu_profile(const std::string& device)
{
    // Throughput relative to a V100 on a ResNet-class CNN and memory per device (one GPU of
    // a K80 or M60 board). The spread, not the absolute numbers, drives the experiments.
    GpuProfile p;
    p.device = device;
    if (device == "v100") {
        p.peak_speed = 1000, p.launch_overhead_s = 0.010, p.saturation_batch = 16, p.memory_gb = 16;
    } else if (device == "m60") {
        p.peak_speed = 420, p.launch_overhead_s = 0.015, p.saturation_batch = 8, p.memory_gb = 8;
    } else if (device == "k80") {
        p.peak_speed = 300, p.launch_overhead_s = 0.020, p.saturation_batch = 8, p.memory_gb = 12;
    } else if (device == "k520") {
        p.peak_speed = 160, p.launch_overhead_s = 0.025, p.saturation_batch = 4, p.memory_gb = 4;
    } else {
        throw std::invalid_argument("unknown GPU class '" + device + "' (expected v100, m60, k80 or k520)");
    }
    p.base_memory_gb = 1.0;
    p.memory_per_sample_gb = 0.04;
    p.noise.sigma = 0.02;
    return p;
}

GpuPerformanceModel::GpuPerformanceModel(GpuProfile profile, std::uint64_t noise_seed)
    : profile_(std::move(profile))
    , noise_rng_(noise_seed)
{
}

ComputeTiming GpuPerformanceModel::compute(double, std::int32_t batch_size)
{
    const double jitter = draw_jitter(profile_.noise, noise_rng_);
    const double effective = std::max(batch_size, profile_.saturation_batch);
    ComputeTiming timing;
    timing.duration_s = (profile_.launch_overhead_s + effective / profile_.peak_speed) * jitter;
    timing.device_memory = profile_.memory_use(batch_size);
    return timing;
}

} // namespace fulcrum::perf
