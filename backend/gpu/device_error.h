#pragma once

#include "common/error.h"

namespace fulcrum::gpu {

// A CUDA or cuBLAS call that failed: the job that made it fails with this message (the
// call, the device and the library's own words); the daemon goes on.
class DeviceError : public RuntimeFailure {
public:
    using RuntimeFailure::RuntimeFailure;
};

// An allocation the device's memory had no room for: what the batch-limit probe looks for.
class OutOfDeviceMemory : public DeviceError {
public:
    using DeviceError::DeviceError;
};

} // namespace fulcrum::gpu
