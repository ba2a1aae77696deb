#include "gpu/cuda_devices.h"

#include <cstdio>
#include <cuda_runtime.h>
#include <dlfcn.h>

namespace fulcrum::gpu {

namespace {

CudaDevices probe()
{
    CudaDevices found;
    int count = 0;
    if (const cudaError_t status = cudaGetDeviceCount(&count); status != cudaSuccess) {
        // Without a driver the runtime says only that the driver is "insufficient".
        void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
        found.why_none = driver ? std::string("no CUDA device is usable: ") + cudaGetErrorString(status)
                                : "no NVIDIA driver on this machine (libcuda.so.1 is not installed)";
        if (driver)
            dlclose(driver);
        return found;
    }
    for (int d = 0; d < count; ++d) {
        cudaDeviceProp props {};
        if (cudaGetDeviceProperties(&props, d) != cudaSuccess)
            continue;
        char line[320];
        std::snprintf(line, sizeof line, "%s (%d SMs, %.1f GiB, compute capability %d.%d)", props.name,
            props.multiProcessorCount, static_cast<double>(props.totalGlobalMem) / (1 << 30), props.major, props.minor);
        found.names.emplace_back(line);
        found.sm_counts.push_back(props.multiProcessorCount);
        found.memory_gb.push_back(static_cast<double>(props.totalGlobalMem) / 1e9);
    }
    found.count = static_cast<int>(found.names.size());
    if (found.count == 0)
        found.why_none = "no CUDA device is usable: the driver lists none";
    return found;
}

} // namespace

const CudaDevices& cuda_devices()
{
    static const CudaDevices devices = probe();
    return devices;
}

} // namespace fulcrum::gpu
