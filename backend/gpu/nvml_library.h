#pragma once

#include <optional>
#include <string>

namespace fulcrum::gpu {

// NVML, the NVIDIA driver's management library, opened at run time where
// libnvidia-ml.so.1 exists (it comes with the driver, never with the toolkit): the one
// source of a GPU's utilisation. Nothing links it, so a machine without it runs the same
// binaries and records utilisation as NULL.
class NvmlLibrary {
public:
    // The library, initialised once per process; null where it cannot be used.
    static const NvmlLibrary* get();
    // Why get() is null ("libnvidia-ml.so.1 is not installed", or NVML's own words), or empty.
    static const std::string& why_absent();

    // The device at this PCI bus id (as cudaDeviceGetPCIBusId writes it, so that CUDA's
    // ordinals and NVML's, which may differ, name the same GPU); null where NVML lacks it.
    void* device(const std::string& pci_bus_id) const;
    // The share of NVML's last sample period in which a kernel ran on `device` (0..1).
    std::optional<double> utilization(void* device) const;

    struct Symbols;
    explicit NvmlLibrary(const Symbols* symbols)
        : symbols_(symbols)
    {
    }

private:
    const Symbols* symbols_;
};

} // namespace fulcrum::gpu
