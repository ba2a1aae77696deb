#include "experiment/results_table.h"

#include "common/error.h"

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace fulcrum::experiment {

ResultsTable::ResultsTable(std::vector<std::string> columns)
    : columns_(std::move(columns))
{
}

void ResultsTable::add(std::vector<std::string> row)
{
    if (row.size() != columns_.size())
        throw std::logic_error("results row has " + std::to_string(row.size()) + " cells for "
            + std::to_string(columns_.size()) + " columns");
    rows_.push_back(std::move(row));
}

namespace {

std::string csv_cell(const std::string& text)
{
    if (text.find_first_of(",\"\n") == std::string::npos)
        return text;
    std::string quoted = "\"";
    for (char c : text)
        quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

} // namespace

void ResultsTable::write_csv(const std::filesystem::path& file) const
{
    std::ofstream out(file);
    if (!out)
        throw InputError(file.string(), "--out", "cannot write the results file");
    for (std::size_t i = 0; i < columns_.size(); ++i)
        out << (i ? "," : "") << csv_cell(columns_[i]);
    out << '\n';
    for (const auto& row : rows_) {
        for (std::size_t i = 0; i < row.size(); ++i)
            out << (i ? "," : "") << csv_cell(row[i]);
        out << '\n';
    }
}

std::string ResultsTable::markdown() const
{
    std::string md = "|";
    for (const auto& c : columns_)
        md += " " + c + " |";
    md += "\n|";
    for (std::size_t i = 0; i < columns_.size(); ++i)
        md += " --- |";
    md += "\n";
    for (const auto& row : rows_) {
        md += "|";
        for (const auto& cell : row)
            md += " " + cell + " |";
        md += "\n";
    }
    return md;
}

std::string fmt(double value, int decimals)
{
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
    return buffer;
}

void write_markdown(
    const std::filesystem::path& file, const std::string& title, const std::string& command, const std::string& body)
{
    std::ofstream out(file);
    if (!out)
        throw InputError(file.string(), "--out", "cannot write the results file");
    out << "# " << title << "\n\nMade by `" << command << "`.\n\n" << body;
}

} // namespace fulcrum::experiment
