#include "gpu/device_check.h"

#include "common/error.h"
#include "gpu/cuda_devices.h"

namespace fulcrum::gpu {

void check_worker_devices(std::span<const perf::WorkerProfile> workers, const std::string& source)
{
    for (const perf::WorkerProfile& worker : workers) {
        if (!worker.device.is_cuda())
            continue;
        const CudaDevices& devices = cuda_devices();
        if (worker.device.index < devices.count)
            continue;
        const std::string has = devices.count == 0 ? devices.why_none
                                                   : "this machine has " + std::to_string(devices.count)
                + " (cuda:0 to cuda:" + std::to_string(devices.count - 1) + ")";
        throw InputError(source, "workers[" + worker.name + "].device",
            "is " + perf::to_string(worker.device) + ", a CUDA device this machine lacks: " + has);
    }
}

} // namespace fulcrum::gpu
