#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace fulcrum::experiment {

// The rows an experiment produces, written as DIR/results.csv; DIR/results.md gets the
// headline text followed by the same table.
class ResultsTable {
public:
    explicit ResultsTable(std::vector<std::string> columns);
    void add(std::vector<std::string> row);
    const std::vector<std::vector<std::string>>& rows() const { return rows_; }

    void write_csv(const std::filesystem::path& file) const;
    std::string markdown() const;

private:
    std::vector<std::string> columns_;
    std::vector<std::vector<std::string>> rows_;
};

// Fixed-precision formatting for tables.
std::string fmt(double value, int decimals = 3);

// DIR/results.md: a title, the command that made it, the headline paragraphs, the table(s).
void write_markdown(
    const std::filesystem::path& file, const std::string& title, const std::string& command, const std::string& body);

} // namespace fulcrum::experiment
