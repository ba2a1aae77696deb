#pragma once

#include "perf/worker_profile.h"

#include <span>
#include <string>

namespace fulcrum::gpu {

// Refuses, before a job is accepted, a worker whose "device" names a CUDA device this
// machine or build lacks: InputError(source, "workers[NAME].device", why).
void check_worker_devices(std::span<const perf::WorkerProfile> workers, const std::string& source);

} // namespace fulcrum::gpu
