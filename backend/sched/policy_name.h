#pragma once

#include <charconv>
#include <optional>
#include <string>

namespace fulcrum::sched {

// The number N in a name of the form PREFIX + N ("lwf-4", "srsf-2", "microsoft-160"), when
// it is a whole number of at least `minimum`.
inline std::optional<int> numbered_name(const std::string& name, const std::string& prefix, int minimum = 1)
{
    if (!name.starts_with(prefix))
        return std::nullopt;
    int n = 0;
    const char* last = name.data() + name.size();
    const auto [end, error] = std::from_chars(name.data() + prefix.size(), last, n);
    if (error != std::errc() || end != last || name.size() == prefix.size() || n < minimum)
        return std::nullopt;
    return n;
}

} // namespace fulcrum::sched
