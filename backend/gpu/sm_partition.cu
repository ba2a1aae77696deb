// Green contexts through the driver's entry points (cudaGetDriverEntryPointByVersion): the
// binaries link only the static CUDA runtime, and a driver older than 12.4 lacks the
// functions, which is reported rather than fatal.
#include "gpu/cuda_devices.h"
#include "gpu/dense_ops.h"
#include "gpu/sm_partition.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <map>
#include <mutex>
#include <vector>

namespace fulcrum::gpu {

namespace {

struct GreenContextApi {
    PFN_cuDeviceGet_v2000 device_get = nullptr;
    PFN_cuDeviceGetDevResource_v12040 device_resource = nullptr;
    PFN_cuDevSmResourceSplitByCount_v12040 split_by_count = nullptr;
    PFN_cuDevResourceGenerateDesc_v12040 generate_desc = nullptr;
    PFN_cuGreenCtxCreate_v12040 create = nullptr;
    PFN_cuGreenCtxDestroy_v12040 destroy = nullptr;
    PFN_cuCtxFromGreenCtx_v12040 as_context = nullptr;
    PFN_cuGreenCtxStreamCreate_v12050 stream_create = nullptr;
    PFN_cuCtxSetCurrent_v4000 set_current = nullptr;
    PFN_cuStreamDestroy_v4000 stream_destroy = nullptr;
    PFN_cuGetErrorString_v6000 error_string = nullptr;
    std::string missing; // the first function the driver lacks, or empty
};

template <typename F> void resolve(GreenContextApi& api, const char* name, unsigned version, F& function)
{
    void* address = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion(name, &address, version, cudaEnableDefault, &found) != cudaSuccess
        || found != cudaDriverEntryPointSuccess || !address) {
        if (api.missing.empty())
            api.missing = name;
        return;
    }
    function = reinterpret_cast<F>(address);
}

const GreenContextApi& api()
{
    static const GreenContextApi loaded = [] {
        GreenContextApi a;
        resolve(a, "cuDeviceGet", 2000, a.device_get);
        resolve(a, "cuDeviceGetDevResource", 12040, a.device_resource);
        resolve(a, "cuDevSmResourceSplitByCount", 12040, a.split_by_count);
        resolve(a, "cuDevResourceGenerateDesc", 12040, a.generate_desc);
        resolve(a, "cuGreenCtxCreate", 12040, a.create);
        resolve(a, "cuGreenCtxDestroy", 12040, a.destroy);
        resolve(a, "cuCtxFromGreenCtx", 12040, a.as_context);
        resolve(a, "cuGreenCtxStreamCreate", 12050, a.stream_create);
        resolve(a, "cuCtxSetCurrent", 4000, a.set_current);
        resolve(a, "cuStreamDestroy", 4000, a.stream_destroy);
        resolve(a, "cuGetErrorString", 6000, a.error_string);
        return a;
    }();
    return loaded;
}

std::string driver_error(CUresult status)
{
    const char* text = nullptr;
    if (api().error_string)
        api().error_string(status, &text);
    return text ? text : "CUDA driver error " + std::to_string(static_cast<int>(status));
}

// One device's SMs, split once into the smallest partitions the device allows; a lease
// takes whole partitions. Partitions from one split may be combined into one green
// context, which is what lets workers of different sizes share the device.
class DevicePartitions {
public:
    // Empty `why_not` on success.
    DevicePartitions(int device, std::string& why_not)
    {
        const GreenContextApi& a = api();
        CUresult status = a.device_get(&device_, device);
        CUdevResource whole {};
        if (status == CUDA_SUCCESS)
            status = a.device_resource(device_, &whole, CU_DEV_RESOURCE_TYPE_SM);
        if (status != CUDA_SUCCESS) {
            why_not = "cuDeviceGetDevResource: " + driver_error(status);
            return;
        }
        total_ = static_cast<int>(whole.sm.smCount);
        size_ = static_cast<int>(std::max(whole.sm.minSmPartitionSize, whole.sm.smCoscheduledAlignment));
        if (size_ <= 0 || total_ <= 0) { // take() divides by the size
            why_not = "the driver reports " + std::to_string(total_) + " SMs in partitions of at least "
                + std::to_string(size_) + ", so it cannot partition them";
            size_ = 0;
            return;
        }
        unsigned groups = 0;
        status = a.split_by_count(nullptr, &groups, &whole, nullptr, 0, static_cast<unsigned>(size_));
        if (status == CUDA_SUCCESS && groups > 0) {
            partitions_.resize(groups);
            status
                = a.split_by_count(partitions_.data(), &groups, &whole, &remainder_, 0, static_cast<unsigned>(size_));
            partitions_.resize(groups);
        }
        if (status != CUDA_SUCCESS || partitions_.empty()) {
            why_not = "cuDevSmResourceSplitByCount: "
                + (status != CUDA_SUCCESS ? driver_error(status) : std::string("no partition of the device's SMs"));
            return;
        }
        free_.assign(partitions_.size(), true);
    }

    int total() const { return total_; }
    int partition_size() const { return size_; }
    int partitions() const { return static_cast<int>(partitions_.size()); }

    // Indices of enough free partitions for `sms`, taken; empty where too few are free.
    std::vector<std::size_t> take(int sms)
    {
        const auto needed = static_cast<std::size_t>((sms + size_ - 1) / size_);
        std::vector<std::size_t> taken;
        for (std::size_t i = 0; i < free_.size() && taken.size() < needed; ++i)
            if (free_[i])
                taken.push_back(i);
        if (taken.size() < needed)
            return {};
        for (const std::size_t i : taken)
            free_[i] = false;
        return taken;
    }
    void give_back(const std::vector<std::size_t>& taken)
    {
        for (const std::size_t i : taken)
            free_[i] = true;
    }
    int free_sms() const
    {
        int n = 0;
        for (std::size_t i = 0; i < free_.size(); ++i)
            n += free_[i] ? static_cast<int>(partitions_[i].sm.smCount) : 0;
        return n;
    }
    CUdevResource& partition(std::size_t i) { return partitions_[i]; }
    CUdevice device() const { return device_; }

private:
    CUdevice device_ = 0;
    int total_ = 0;
    int size_ = 1;
    std::vector<CUdevResource> partitions_;
    CUdevResource remainder_ {};
    std::vector<bool> free_;
};

std::mutex partitions_mutex;

// Every device's partitions, made at the first lease on it and kept for the process.
DevicePartitions* partitions_of(int device, std::string& why_not)
{
    static std::map<int, std::unique_ptr<DevicePartitions>> devices;
    static std::map<int, std::string> failures;
    if (const auto failed = failures.find(device); failed != failures.end()) {
        why_not = failed->second;
        return nullptr;
    }
    auto& slot = devices[device];
    if (!slot) {
        auto made = std::make_unique<DevicePartitions>(device, why_not);
        if (!why_not.empty()) {
            failures[device] = why_not;
            devices.erase(device);
            return nullptr;
        }
        slot = std::move(made);
    }
    return slot.get();
}

class GreenContextLease final : public SmLease {
public:
    GreenContextLease(
        DevicePartitions& device, std::vector<std::size_t> taken, CUgreenCtx context, CUstream stream, int sms)
        : device_(device)
        , taken_(std::move(taken))
        , context_(context)
        , stream_(stream)
        , sms_(sms)
    {
    }
    GreenContextLease(const GreenContextLease&) = delete;
    GreenContextLease& operator=(const GreenContextLease&) = delete;
    ~GreenContextLease() override
    {
        api().stream_destroy(stream_);
        api().destroy(context_);
        std::lock_guard lock(partitions_mutex);
        device_.give_back(taken_);
    }

    cudaStream_t stream() const override { return stream_; }
    int sms() const override { return sms_; }
    void bind() const override
    {
        CUcontext as_context = nullptr;
        if (api().as_context(&as_context, context_) == CUDA_SUCCESS)
            api().set_current(as_context);
    }

private:
    DevicePartitions& device_;
    std::vector<std::size_t> taken_;
    CUgreenCtx context_;
    CUstream stream_;
    int sms_;
};

} // namespace

std::optional<SmPartitioning> sm_partitioning(int device, std::string& why_not)
{
    if (const std::string& missing = api().missing; !missing.empty()) {
        why_not = "the NVIDIA driver lacks green contexts (" + missing + " needs a CUDA 12.5 or later driver)";
        return std::nullopt;
    }
    // Submission asks this while jobs compute: their captures must not meet its cudaFree.
    const std::lock_guard memory(device_memory_mutex());
    cudaSetDevice(device);
    cudaFree(nullptr); // the primary context exists before a green context retains it
    std::lock_guard lock(partitions_mutex);
    const DevicePartitions* partitions = partitions_of(device, why_not);
    if (!partitions)
        return std::nullopt;
    return SmPartitioning { partitions->partition_size(), partitions->partitions() };
}

std::unique_ptr<SmLease> lease_sms(int device, int sms, std::string& why_not)
{
    const GreenContextApi& a = api();
    if (!a.missing.empty()) {
        why_not = "the NVIDIA driver lacks green contexts (" + a.missing + " needs a CUDA 12.5 or later driver)";
        return nullptr;
    }
    cudaSetDevice(device);
    cudaFree(nullptr); // the primary context exists before a green context retains it
    std::lock_guard lock(partitions_mutex);
    DevicePartitions* partitions = partitions_of(device, why_not);
    if (!partitions)
        return nullptr;
    if (sms > partitions->total()) {
        why_not = "cuda:" + std::to_string(device) + " has " + std::to_string(partitions->total()) + " SMs, fewer than "
            + std::to_string(sms);
        return nullptr;
    }
    std::vector<std::size_t> taken = partitions->take(sms);
    if (taken.empty()) {
        why_not = "cuda:" + std::to_string(device) + " has " + std::to_string(partitions->free_sms())
            + " SMs left in partitions of " + std::to_string(partitions->partition_size()) + ", fewer than "
            + std::to_string(sms);
        return nullptr;
    }
    std::vector<CUdevResource> resources;
    int granted = 0;
    for (const std::size_t i : taken) {
        resources.push_back(partitions->partition(i));
        granted += static_cast<int>(partitions->partition(i).sm.smCount);
    }
    CUdevResourceDesc desc = nullptr;
    CUgreenCtx context = nullptr;
    CUstream stream = nullptr;
    CUresult status = a.generate_desc(&desc, resources.data(), static_cast<unsigned>(resources.size()));
    if (status == CUDA_SUCCESS)
        status = a.create(&context, desc, partitions->device(), CU_GREEN_CTX_DEFAULT_STREAM);
    if (status == CUDA_SUCCESS)
        status = a.stream_create(&stream, context, CU_STREAM_NON_BLOCKING, 0);
    if (status != CUDA_SUCCESS) {
        if (context)
            a.destroy(context);
        partitions->give_back(taken);
        why_not = "creating a green context of " + std::to_string(granted) + " SMs: " + driver_error(status);
        return nullptr;
    }
    return std::make_unique<GreenContextLease>(*partitions, std::move(taken), context, stream, granted);
}

} // namespace fulcrum::gpu
