#pragma once

#include <cstdint>
#include <span>

namespace fulcrum::perf {

// One measured batch time of a device: the median of several steps at this batch size.
struct TimingPoint {
    std::int32_t batch_size = 0;
    double seconds = 0;
};

// The GPU performance model's timing (GpuPerformanceModel: t(x) = Γ(0) + max(x, x_s) / peak)
// fitted to measurements, as LB-BSP Sec. 5 describes a GPU: a launch overhead, a batch
// below which the device is not yet full, linear beyond.
struct TimingFit {
    double launch_overhead_s = 0; // Γ(0)
    std::int32_t saturation_batch = 0; // x_s
    double peak_speed = 0; // samples per second once saturated
    double rms_relative_error = 0; // of the fitted times against the measured ones

    double seconds(std::int32_t batch_size) const;
};

// Least squares in relative error (each batch size counts alike, small or large), x_s chosen
// among the measured batch sizes. Needs at least two distinct batch sizes and positive
// times; throws std::invalid_argument otherwise.
TimingFit fit_gpu_timing(std::span<const TimingPoint> points);

} // namespace fulcrum::perf
