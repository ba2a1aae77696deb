#pragma once

// Enum values with their names on the command line, in files and on the wire: one table per
// enum, looked up both ways.

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fulcrum {

// One thing a registry offers, as a person and a client see it: its name as scenarios and
// commands spell it, and what it does.
struct CatalogueEntry {
    std::string name;
    std::string description;
    // Which kind among its peers (sync models: "barrier" or "free-running"); empty for none.
    std::string family;
    // Fields its section must give besides its name ("batch_sizes" for the fixed policy): a
    // client that cannot fill them does not offer it.
    std::vector<std::string> required;
    // Fields its section may give besides its name ("backups" for backup workers): what a
    // client's form asks for when it is chosen.
    std::vector<std::string> fields = {};

    bool operator==(const CatalogueEntry&) const = default;
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
