#include "perf/cpu_performance_model.h"

#include <algorithm>
#include <cmath>

namespace fulcrum::perf {

CpuPerformanceModel::CpuPerformanceModel(CpuProfile profile, ResourceTimeline resources, std::uint64_t noise_seed)
    : profile_(profile)
    , resources_(std::move(resources))
    , noise_rng_(noise_seed)
{
}

double CpuPerformanceModel::speed_for(const ResourceShare& share) const
{
    const double memory_factor = std::min(1.0, share.memory / profile_.memory_need);
    return profile_.speed * share.cpu * memory_factor;
}

double CpuPerformanceModel::speed_at(double t)
{
    return speed_for(resources_.at(t));
}

double draw_jitter(const TransientNoise& noise, Rng& rng)
{
    const double normal = standard_normal(rng);
    const bool spike = uniform01(rng) < noise.spike_probability;
    double jitter = std::exp(noise.sigma * normal - 0.5 * noise.sigma * noise.sigma);
    if (spike)
        jitter *= noise.spike_factor;
    return jitter;
}

ComputeTiming CpuPerformanceModel::compute(double start_s, std::int32_t batch_size)
{
    // Draw the noise first, always, so the stream position never depends on the trace.
    const double jitter = draw_jitter(profile_.noise, noise_rng_);

    double work = static_cast<double>(batch_size) * jitter; // in samples at the nominal rate
    double t = start_s;
    double cpu_area = 0, memory_area = 0;
    while (true) {
        const ResourceShare share = resources_.at(t);
        const double rate = speed_for(share);
        const double segment_end = resources_.next_change_after(t);
        const double needed = work / rate;
        const double step = std::min(needed, segment_end - t);
        cpu_area += share.cpu * step;
        memory_area += share.memory * step;
        if (needed <= segment_end - t) {
            t += needed;
            break;
        }
        work -= rate * step;
        t = segment_end;
    }
    const double compute = t - start_s;
    ComputeTiming timing;
    timing.duration_s = compute + profile_.overhead_s;
    timing.mean_share
        = compute > 0 ? ResourceShare { cpu_area / compute, memory_area / compute } : resources_.at(start_s);
    return timing;
}

} // namespace fulcrum::perf
