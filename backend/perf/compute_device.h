#pragma once

#include <optional>
#include <string>

namespace fulcrum::perf {

// Where a worker computes its gradients: the CPU, or one CUDA GPU ("cuda:N").
struct ComputeDevice {
    enum class Kind { Cpu, Cuda };
    Kind kind = Kind::Cpu;
    int index = 0; // the CUDA device ordinal
    // A share of the GPU's streaming multiprocessors (a green context of this many SMs, the
    // device's partition size rounding it up); unset: the whole GPU, shared.
    std::optional<int> sms = std::nullopt;
    // With `sms`: a share that cannot be granted when the worker starts (the driver lacks
    // green contexts, or other workers hold the partitions) fails the job rather than
    // sharing the whole GPU ("sms_strict" in a scenario).
    bool strict_sms = false;

    bool is_cuda() const { return kind == Kind::Cuda; }
    bool operator==(const ComputeDevice&) const = default;
};

// "cpu" or "cuda:N": the device, not the SM share.
std::string to_string(const ComputeDevice& device);
// "cpu" or "cuda:N" (N a device ordinal, 0..1023); nullopt for anything else.
std::optional<ComputeDevice> parse_compute_device(const std::string& text);

} // namespace fulcrum::perf
