#pragma once

#include "gpu/dense_ops.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fulcrum::gpu {

// The CUDA devices this process can use, probed once. `count` is 0 on a machine without
// a GPU or driver, and in a build without CUDA; `why_none` then says which.
struct CudaDevices {
    int count = 0;
    std::vector<std::string> names; // "NVIDIA H100 80GB HBM3 (132 SMs, 79.1 GiB)"
    std::vector<int> sm_counts; // per device
    std::vector<double> memory_gb; // per device, 1e9 bytes
    std::string why_none;
};
const CudaDevices& cuda_devices();

// Why CUDA device `index` cannot be used here ("this machine has 1 (cuda:0 to cuda:0)", or
// why_none), or empty where it can.
std::string absent_device_reason(int index);

// True where this build has the CUDA path (FULCRUM_CUDA found nvcc).
bool built_with_cuda();

// DenseOps on CUDA device `device`, on a stream of their own, with cuBLAS (loaded at run
// time) for the matrix products. Throws DeviceError where there is no such device. With
// `sms`, the stream's kernels run on that many of the device's SMs alone (a green
// context); where the driver cannot give them, on the whole GPU, and placement() says why.
// Without `graphs` nothing is captured (benchmarks compare the two). With `strict_sms`, a
// share that cannot be given throws DeviceError saying why instead.
std::unique_ptr<DenseOps> make_cuda_dense_ops(
    int device, std::optional<int> sms = std::nullopt, bool graphs = true, bool strict_sms = false);

// How CUDA device `device`'s SMs split into green-context partitions: `partitions` of
// `size` SMs each (the smallest the driver allows, cut once per process), so a share of
// n SMs takes ceil(n / size) partitions. nullopt, with `why_not`, where they cannot be cut.
struct SmPartitioning {
    int size = 0;
    int partitions = 0;
};
std::optional<SmPartitioning> sm_partitioning(int device, std::string& why_not);

} // namespace fulcrum::gpu
