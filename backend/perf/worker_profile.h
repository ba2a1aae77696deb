#pragma once

#include "perf/cpu_performance_model.h"
#include "perf/network_model.h"

#include <optional>
#include <string>
#include <vector>

namespace fulcrum::perf {

// Everything that decides how fast one worker is: what a scenario states and what the
// trainer's performance model runs on.
struct WorkerProfile {
    std::string name;
    CpuProfile cpu;
    NetworkProfile network;
    std::vector<ResourcePoint> resources;
    std::optional<ColocatedLoad> colocated;
};

} // namespace fulcrum::perf
