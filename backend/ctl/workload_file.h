#pragma once

#include "protocol/messages.h"

#include <filesystem>
#include <vector>

namespace fulcrum::ctl {

// A workload file for submit-workload: CSV with the header `scenario,arrival_s`, one job a
// line, each a scenario file (a path relative to the workload file's folder, or absolute)
// and its arrival in seconds on fulcrumd's virtual clock from the submission. Throws
// InputError naming the file, the line and the field.
std::vector<protocol::SubmitWorkload::Arrival> read_workload_file(const std::filesystem::path& path);

} // namespace fulcrum::ctl
