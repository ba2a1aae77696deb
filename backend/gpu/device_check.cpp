#include "gpu/device_check.h"

#include "common/error.h"
#include "gpu/cuda_devices.h"

#include <map>

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
    std::map<int, int> asked; // SMs asked of each device by the job's workers
    for (const perf::WorkerProfile& worker : workers) {
        if (!worker.device.is_cuda())
            continue;
        if (const std::string why = absent_device_reason(worker.device.index); !why.empty())
            throw InputError(source, "workers[" + worker.name + "].device",
                "is " + perf::to_string(worker.device) + ", a CUDA device this machine lacks: " + why);
        if (!worker.device.sms)
            continue;
        const int has = cuda_devices().sm_counts.at(static_cast<std::size_t>(worker.device.index));
        if ((asked[worker.device.index] += *worker.device.sms) > has)
            throw InputError(source, "workers[" + worker.name + "].sms",
                "brings the SMs this job's workers ask of " + perf::to_string(worker.device) + " to "
                    + std::to_string(asked[worker.device.index]) + "; it has " + std::to_string(has));
    }
}

} // namespace fulcrum::gpu
