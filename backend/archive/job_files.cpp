#include "archive/job_files.h"

#include <algorithm>

namespace fulcrum::archive {

std::optional<JobId> job_of_file(const std::string& name, std::string_view extension)
{
    const std::size_t prefix = 4; // "job-"
    if (name.size() <= prefix + extension.size() || name.rfind("job-", 0) != 0 || !name.ends_with(extension))
        return std::nullopt;
    const std::string digits = name.substr(prefix, name.size() - prefix - extension.size());
    if (digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    return static_cast<JobId>(std::stol(digits));
}

} // namespace fulcrum::archive
