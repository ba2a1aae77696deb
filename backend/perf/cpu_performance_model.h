#pragma once

#include "perf/performance_model.h"

namespace fulcrum::perf {

// Transient slowdowns that do not follow the resource shares (GC pauses, interrupts):
// noise a resource-aware predictor cannot and should not learn.
struct TransientNoise {
    double sigma = 0.0; // log-normal jitter of the compute time
    double spike_probability = 0.0; // chance per iteration of a spike
    double spike_factor = 3.0; // a spike multiplies the compute time by this
};

// One draw of the multiplicative noise: log-normal jitter with mean 1, times spike_factor
// with spike_probability. Always consumes the same stream positions.
double draw_jitter(const TransientNoise& noise, Rng& rng);

struct CpuProfile {
    double speed = 1000; // samples per second with the whole machine (cpu = memory = 1)
    double memory_need = 0.25; // memory share below which the worker starts to page and slow down
    double overhead_s = 0.0; // fixed cost per iteration (framework, data loading)
    TransientNoise noise;
};

// LB-BSP's CPU worker model: a batch of x samples takes t = x / v(t) where the speed
// v(t) = speed * cpu(t) * min(1, memory(t) / memory_need) follows the resource timeline.
// The work is integrated across changes of share during the batch, then jittered.
class CpuPerformanceModel final : public PerformanceModel {
public:
    CpuPerformanceModel(CpuProfile profile, ResourceTimeline resources, std::uint64_t noise_seed);

    ComputeTiming compute(double start_s, std::int32_t batch_size) override;
    double speed_at(double t);
    ResourceShare share_at(double t) override { return resources_.at(t); }
    void save_state(StateWriter& out) const override
    {
        resources_.save_state(out);
        out.put(noise_rng_);
    }
    void load_state(StateReader& in) override
    {
        resources_.load_state(in);
        in.get(noise_rng_, "noise stream");
    }
    const CpuProfile& profile() const { return profile_; }

private:
    double speed_for(const ResourceShare& share) const;

    CpuProfile profile_;
    ResourceTimeline resources_;
    Rng noise_rng_;
};

} // namespace fulcrum::perf
