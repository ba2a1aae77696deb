#pragma once

// A worker's share of one GPU's streaming multiprocessors, as a CUDA green context (driver
// API, CUDA 12.4 and later): so that one H100 holds a heterogeneous GPU cluster, a worker
// of 66 SMs and one of 16 computing side by side. Only in builds with the CUDA path.

#include <cuda_runtime.h>
#include <memory>
#include <string>

namespace fulcrum::gpu {

// The SMs a worker holds, disjoint from every other lease of this process on the device,
// with a stream whose kernels run on them alone. Given back when destroyed.
class SmLease {
public:
    virtual ~SmLease() = default;
    virtual cudaStream_t stream() const = 0;
    virtual int sms() const = 0; // granted: the request rounded up to the device's partition size
    // Makes the green context current on the calling thread (the runtime calls that follow
    // allocate and launch in it).
    virtual void bind() const = 0;
};

// `sms` SMs of CUDA device `device`, or null with `why_not` saying why (a driver without
// green contexts, or the device's SMs taken by other leases): the caller then shares the
// whole GPU, and says so.
std::unique_ptr<SmLease> lease_sms(int device, int sms, std::string& why_not);

} // namespace fulcrum::gpu
