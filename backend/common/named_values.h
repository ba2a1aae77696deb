#pragma once

// Enum values with their names on the command line, in files and on the wire: one table per
// enum, looked up both ways.

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace fulcrum {

// One thing a registry offers, as a person and a client see it: its name as scenarios and
// commands spell it, and what it does.
struct CatalogueEntry {
    std::string name;
    std::string description;
};

template <typename E, std::size_t N> using NameTable = std::array<std::pair<E, std::string_view>, N>;

template <typename E, std::size_t N> std::string_view name_of(const NameTable<E, N>& table, E value)
{
    for (const auto& [v, name] : table)
        if (v == value)
            return name;
    return "unknown";
}

template <typename E, std::size_t N> std::optional<E> value_named(const NameTable<E, N>& table, std::string_view name)
{
    for (const auto& [v, n] : table)
        if (n == name)
            return v;
    return std::nullopt;
}

} // namespace fulcrum
