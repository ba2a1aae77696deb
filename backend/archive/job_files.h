#pragma once

#include "common/records.h"

#include <optional>
#include <string>
#include <string_view>

namespace fulcrum::archive {

// The largest job id: a job's files are named with at most 9 digits (job_of_file).
inline constexpr JobId kMaxJobId = 999'999'999;

// N of a file named job-N.EXTENSION (a job's run store "job-N.db", journal entry
// "job-N.json"); nothing for any other name.
std::optional<JobId> job_of_file(const std::string& name, std::string_view extension);

} // namespace fulcrum::archive
