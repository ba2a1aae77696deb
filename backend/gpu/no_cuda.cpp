// The build without the CUDA path (FULCRUM_CUDA=OFF, or no nvcc found): no device is
// usable, and every request for one says why.
#include "gpu/cuda_devices.h"
#include "gpu/device_error.h"

namespace fulcrum::gpu {

namespace {
constexpr const char* kWhy = "this build of Fulcrum has no CUDA path (configured with FULCRUM_CUDA=OFF, "
                             "or no nvcc was found; see docs/gpu.md)";
}

const CudaDevices& cuda_devices()
{
    static const CudaDevices none { 0, {}, {}, {}, kWhy };
    return none;
}

bool built_with_cuda()
{
    return false;
}

std::unique_ptr<DenseOps> make_cuda_dense_ops(int device, std::optional<int> /*sms*/, bool /*graphs*/, bool /*strict*/)
{
    throw DeviceError("cuda:" + std::to_string(device) + ": " + kWhy);
}

std::optional<SmPartitioning> sm_partitioning(int /*device*/, std::string& why_not)
{
    why_not = kWhy;
    return std::nullopt;
}

} // namespace fulcrum::gpu
