#pragma once

// Small helpers shared by the workload readers (not a general CSV parser: no quoting, as
// workload files hold names, numbers and model names only).

#include "common/error.h"

#include <charconv>
#include <sstream>
#include <string>
#include <vector>

namespace fulcrum::sched::csv {

inline std::string trim(const std::string& s)
{
    const auto first = s.find_first_not_of(" \t\r");
    const auto last = s.find_last_not_of(" \t\r");
    return first == std::string::npos ? std::string() : s.substr(first, last - first + 1);
}

inline std::vector<std::string> split(const std::string& line)
{
    std::vector<std::string> cells;
    std::stringstream in(line);
    for (std::string cell; std::getline(in, cell, ',');)
        cells.push_back(trim(cell));
    if (!line.empty() && line.back() == ',')
        cells.emplace_back();
    return cells;
}

// The cell as a number, or InputError(where, field, "expected <expected>, got '<text>'").
template <typename T> T number(const std::string& text, const std::string& where, const char* field, const char* expected)
{
    T value {};
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size())
        throw InputError(where, field, std::string("expected ") + expected + ", got '" + text + "'");
    return value;
}

} // namespace fulcrum::sched::csv
