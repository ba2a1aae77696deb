#pragma once

#include "perf/compute_device.h"
#include "perf/cpu_performance_model.h"
#include "perf/gpu_performance_model.h"
#include "perf/network_model.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fulcrum::perf {

// Everything that decides how fast one worker is: what a scenario states and what the
// trainer's performance model runs on. A worker with a `gpu` profile is a GPU worker.
struct WorkerProfile {
    std::string name;
    CpuProfile cpu;
    std::optional<GpuProfile> gpu;
    NetworkProfile network;
    std::vector<ResourcePoint> resources;
    std::optional<ColocatedLoad> colocated;
    std::optional<CompetingProcess> competing;
    // Computed by another process (fulcrum-worker) that joins the job over the network; the
    // profile's speed is then only the virtual modes' estimate, unused in the real mode.
    bool remote = false;
    // Where its gradients are computed, whatever the mode: the virtual modes' clock still
    // comes from the performance model, the real mode's from the device.
    ComputeDevice device;
};

// The performance model a profile describes, with its seeded noise and resource streams.
std::unique_ptr<PerformanceModel> make_performance_model(
    const WorkerProfile& profile, std::uint64_t resource_seed, std::uint64_t noise_seed);

} // namespace fulcrum::perf
