#pragma once

#include "common/records.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

namespace fulcrum::ctl {

class CtlClient;

struct ExportSummary {
    int runs = 0;
    std::int64_t iteration_rows = 0, evaluations = 0, events = 0;
    std::filesystem::path folder;
};

// One run as CSV files in a folder, written as its records come: run-R-iterations.csv (one
// row per worker per iteration), run-R-evaluations.csv and run-R-events.csv, each with a
// header line; text cells quoted as RFC 4180 says. Throws InputError naming a file that
// cannot be written.
class CsvRunWriter {
public:
    CsvRunWriter(const std::filesystem::path& folder, RunId run, ExportSummary& summary);
    void row(const IterationRecord& r);
    void evaluation(const EvaluationRecord& e);
    void event(const EventRecord& e);
    void finish(); // flushes; throws InputError if a file could not be written completely

private:
    std::filesystem::path folder_;
    ExportSummary& summary_;
    std::ofstream rows_, evaluations_, events_;
};

// A run store's runs (or only `run`) as CSV into `folder`. Throws InputError naming the
// store, the run or the folder.
ExportSummary export_run_store(
    const std::filesystem::path& store, std::optional<RunId> run, const std::filesystem::path& folder);

// A run fulcrumd serves (`database` as list-runs names it), fetched by replaying it at full
// speed; the same files as export_run_store. Throws CtlError when the server refuses.
ExportSummary export_served_run(
    CtlClient& client, const std::string& database, RunId run, const std::filesystem::path& folder);

// One CSV cell: quoted when it holds a comma, a quote or a line break.
std::string csv_cell(const std::string& text);

} // namespace fulcrum::ctl
