#pragma once

#include "perf/cpu_performance_model.h"

#include <string>
#include <vector>

namespace fulcrum::perf {

// A GPU worker as LB-BSP Sec. 5 describes it: a fixed launch overhead Γ(0) > 0, a constant
// time for batches below the saturation size x_s (the device is not yet full), linear
// beyond, and memory that grows with the batch up to the limit x_o.
struct GpuProfile {
    std::string device = "v100";
    double peak_speed = 1000; // samples per second once saturated
    double launch_overhead_s = 0.02; // Γ(0)
    std::int32_t saturation_batch = 8; // x_s
    double memory_gb = 16;
    double base_memory_gb = 1.5; // model, optimizer state, workspace
    double memory_per_sample_gb = 0.05;
    TransientNoise noise;

    // x_o: the largest batch whose memory fits on the device.
    std::int32_t batch_limit() const;
    double memory_use(std::int32_t batch_size) const; // share of the device
};

// The GPU classes the paper's heterogeneous GPU cluster mixes, for one CNN workload
// (relative throughput and memory per device of AWS p3, g3, p2 and g2 instances).
const std::vector<std::string>& gpu_classes();
// Throws std::invalid_argument for an unknown class.
GpuProfile gpu_profile(const std::string& device);

class GpuPerformanceModel final : public PerformanceModel {
public:
    GpuPerformanceModel(GpuProfile profile, std::uint64_t noise_seed);
    ComputeTiming compute(double start_s, std::int32_t batch_size) override;
    ResourceShare share_at(double) override { return {}; }
    void save_state(StateWriter& out) const override { out.put(noise_rng_); }
    void load_state(StateReader& in) override { in.get(noise_rng_, "noise stream"); }
    std::int32_t batch_limit() const override { return profile_.batch_limit(); }
    double device_memory(std::int32_t batch_size) const override { return profile_.memory_use(batch_size); }
    const GpuProfile& profile() const { return profile_; }

private:
    GpuProfile profile_;
    Rng noise_rng_;
};

} // namespace fulcrum::perf
