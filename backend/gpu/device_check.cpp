#include "gpu/device_check.h"

#include "common/error.h"
#include "gpu/cuda_devices.h"

#include <map>
#include <optional>

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
    std::map<int, int> held; // the same, each share rounded up to whole partitions
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
        // A share takes whole partitions, and the partitions need not cover every SM (an
        // H100's 132 make 15 of 8): a job whose shares could never all be given is refused.
        std::string why_not;
        const std::optional<SmPartitioning> cut = sm_partitioning(worker.device.index, why_not);
        if (!cut) {
            if (worker.device.strict_sms)
                throw InputError(source, "workers[" + worker.name + "].sms_strict",
                    "asks for a strict share of " + perf::to_string(worker.device) + ", which cannot be cut into "
                        + "green contexts here: " + why_not);
            continue;
        }
        const int size = cut->size;
        const int partitionable = cut->partitions * size;
        if ((held[worker.device.index] += (*worker.device.sms + size - 1) / size * size) > partitionable)
            throw InputError(source, "workers[" + worker.name + "].sms",
                "brings the SMs this job's workers hold on " + perf::to_string(worker.device) + " to "
                    + std::to_string(held[worker.device.index]) + ", each share rounded up to whole partitions of "
                    + std::to_string(size) + " SMs; its SMs make " + std::to_string(cut->partitions)
                    + " such partitions (" + std::to_string(partitionable) + " SMs)");
    }
}

} // namespace fulcrum::gpu
