#include "perf/compute_device.h"

#include <charconv>

namespace fulcrum::perf {

std::string to_string(const ComputeDevice& device)
{
    return device.is_cuda() ? "cuda:" + std::to_string(device.index) : "cpu";
}

std::optional<ComputeDevice> parse_compute_device(const std::string& text)
{
    if (text == "cpu")
        return ComputeDevice {};
    constexpr std::string_view prefix = "cuda:";
    if (text.size() <= prefix.size() || text.compare(0, prefix.size(), prefix) != 0)
        return std::nullopt;
    int index = -1;
    const char* first = text.data() + prefix.size();
    const char* last = text.data() + text.size();
    const auto [end, error] = std::from_chars(first, last, index);
    if (error != std::errc() || end != last || index < 0 || index > 1023)
        return std::nullopt;
    return ComputeDevice { ComputeDevice::Kind::Cuda, index, std::nullopt };
}

} // namespace fulcrum::perf
