#pragma once

// Small helpers shared by the workload readers (not a general CSV parser: no quoting, as
// workload files hold names, numbers and model names only).

#include "common/error.h"
#include "sched/model_templates.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <functional>
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
template <typename T>
T number(const std::string& text, const std::string& where, const char* field, const char* expected)
{
    T value {};
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size())
        throw InputError(where, field, std::string("expected ") + expected + ", got '" + text + "'");
    return value;
}

// A whole number >= 1.
template <typename T> T positive(const std::string& cell, const std::string& where, const char* field)
{
    const T n = number<T>(cell, where, field, "a positive whole number");
    if (n < 1)
        throw InputError(where, field, "expected a positive whole number, got " + cell);
    return n;
}

inline ModelTemplate model_cell(const std::string& cell, const std::string& where, const ModelCatalogue& models)
{
    if (const auto model = models.find(cell))
        return *model;
    throw InputError(where, "model", "expected one of " + models.names() + ", got '" + cell + "'");
}

inline double arrival_cell(const std::string& cell, const std::string& where)
{
    const double t = number<double>(cell, where, "arrival_s", "seconds from the start (a number >= 0)");
    if (!(t >= 0) || !std::isfinite(t))
        throw InputError(where, "arrival_s", "expected seconds from the start (a number >= 0), got " + cell);
    return t;
}

// Reads a workload file: `#` comments and blank lines skipped, the first line must be
// `header` exactly, and every later line must have as many cells; `row(cells, where)` gets
// each with where = "FILE:LINE". An unreadable, empty or header-only file is an InputError.
// A row describes a `row_noun` ("job" in a workload file, "model" in a models file).
inline void for_each_row(const std::string& path, const std::string& header,
    const std::function<void(const std::vector<std::string>&, const std::string&)>& row,
    const std::string& row_noun = "job")
{
    std::ifstream in(path);
    if (!in)
        throw InputError(path, "", row_noun == "job" ? "cannot open the workload file" : "cannot open the models file");
    const std::size_t columns = split(header).size();
    bool header_seen = false, any = false;
    int line_number = 0;
    for (std::string line; std::getline(in, line);) {
        ++line_number;
        const std::string content = trim(line);
        if (content.empty() || content.front() == '#')
            continue;
        const std::string where = path + ":" + std::to_string(line_number);
        if (!header_seen) {
            if (split(content) != split(header))
                throw InputError(where, "header", "expected '" + header + "', got '" + content + "'");
            header_seen = true;
            continue;
        }
        const std::vector<std::string> cells = split(content);
        if (cells.size() != columns)
            throw InputError(where, "",
                "expected " + std::to_string(columns) + " comma-separated fields (" + header + "), got "
                    + std::to_string(cells.size()));
        row(cells, where);
        any = true;
    }
    if (!header_seen)
        throw InputError(path, "", "is empty: expected the header '" + header + "' and one line per " + row_noun);
    if (!any)
        throw InputError(
            path, "", "has a header but no " + row_noun + "s: expected one line per " + row_noun + " after it");
}

} // namespace fulcrum::sched::csv
