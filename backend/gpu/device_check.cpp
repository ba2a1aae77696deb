#include "gpu/device_check.h"

#include "common/error.h"
#include "gpu/cuda_devices.h"

namespace fulcrum::gpu {

std::string absent_device_reason(int index)
{
    const CudaDevices& devices = cuda_devices();
    if (index >= 0 && index < devices.count)
        return {};
    if (devices.count == 0)
        return devices.why_none;
    return "this machine has " + std::to_string(devices.count) + " (cuda:0 to cuda:" + std::to_string(devices.count - 1)
        + ")";
}

void check_worker_devices(std::span<const perf::WorkerProfile> workers, const std::string& source)
{
    for (const perf::WorkerProfile& worker : workers) {
        if (!worker.device.is_cuda())
            continue;
        if (const std::string why = absent_device_reason(worker.device.index); !why.empty())
            throw InputError(source, "workers[" + worker.name + "].device",
                "is " + perf::to_string(worker.device) + ", a CUDA device this machine lacks: " + why);
    }
}

} // namespace fulcrum::gpu
