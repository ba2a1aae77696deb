#include "gpu/nvml_library.h"

#include <dlfcn.h>

namespace fulcrum::gpu {

// NVML's C interface, as its header declares it (the header ships with the driver's
// development files, which the build machines lack): every call returns 0 for success.
struct NvmlLibrary::Symbols {
    struct Utilization {
        unsigned int gpu; // percent of the last sample period a kernel ran
        unsigned int memory; // percent of it device memory was read or written
    };
    using Device = void*;
    int (*init)() = nullptr; // nvmlInit_v2
    int (*device_by_pci_bus_id)(const char*, Device*) = nullptr; // nvmlDeviceGetHandleByPciBusId_v2
    int (*utilization_rates)(Device, Utilization*) = nullptr; // nvmlDeviceGetUtilizationRates
    const char* (*error_string)(int) = nullptr; // nvmlErrorString
};

namespace {

struct Loaded {
    NvmlLibrary::Symbols symbols;
    std::string why_absent;
    bool usable = false;
};

template <typename F> bool resolve(void* library, const char* name, F& function)
{
    function = reinterpret_cast<F>(dlsym(library, name)); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    return function != nullptr;
}

Loaded load()
{
    Loaded loaded;
    void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        loaded.why_absent = "libnvidia-ml.so.1 is not installed (NVML comes with the NVIDIA driver)";
        return loaded;
    }
    NvmlLibrary::Symbols& s = loaded.symbols;
    if (!resolve(library, "nvmlInit_v2", s.init) || !resolve(library, "nvmlErrorString", s.error_string)
        || !resolve(library, "nvmlDeviceGetHandleByPciBusId_v2", s.device_by_pci_bus_id)
        || !resolve(library, "nvmlDeviceGetUtilizationRates", s.utilization_rates)) {
        loaded.why_absent = "libnvidia-ml.so.1 lacks a function Fulcrum uses (an NVML older than CUDA 11's)";
        return loaded; // the library stays loaded: unloading a driver library is never worth it
    }
    if (const int status = s.init(); status != 0) {
        loaded.why_absent = std::string("nvmlInit failed: ") + s.error_string(status);
        return loaded;
    }
    loaded.usable = true;
    return loaded;
}

const Loaded& loaded()
{
    static const Loaded library = load();
    return library;
}

} // namespace

const NvmlLibrary* NvmlLibrary::get()
{
    static const NvmlLibrary library(&loaded().symbols);
    return loaded().usable ? &library : nullptr;
}

const std::string& NvmlLibrary::why_absent()
{
    return loaded().why_absent;
}

void* NvmlLibrary::device(const std::string& pci_bus_id) const
{
    Symbols::Device found = nullptr;
    return symbols_->device_by_pci_bus_id(pci_bus_id.c_str(), &found) == 0 ? found : nullptr;
}

std::optional<double> NvmlLibrary::utilization(void* device) const
{
    Symbols::Utilization rates {};
    if (!device || symbols_->utilization_rates(device, &rates) != 0)
        return std::nullopt;
    return rates.gpu / 100.0;
}

} // namespace fulcrum::gpu
