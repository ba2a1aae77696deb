#pragma once

#include "common/records.h"

#include <filesystem>
#include <optional>
#include <string>

namespace fulcrum::ctl {

struct ExportSummary {
    int runs = 0;
    std::int64_t iteration_rows = 0, evaluations = 0, events = 0;
    std::filesystem::path folder;
};

// Writes a run store's runs (or only `run`) as CSV into `folder`: for run R,
// run-R-iterations.csv (one row per worker per iteration), run-R-evaluations.csv and
// run-R-events.csv, with a header line each; text cells quoted as RFC 4180 says. Throws
// InputError naming the store or the folder.
ExportSummary export_run_store(
    const std::filesystem::path& store, std::optional<RunId> run, const std::filesystem::path& folder);

// One CSV cell: quoted when it holds a comma, a quote or a line break.
std::string csv_cell(const std::string& text);

} // namespace fulcrum::ctl
