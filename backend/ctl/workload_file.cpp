#include "ctl/workload_file.h"

#include "common/error.h"
#include "sched/csv_fields.h"

#include <cmath>
#include <fstream>
#include <sstream>

namespace fulcrum::ctl {

std::vector<protocol::SubmitWorkload::Arrival> read_workload_file(const std::filesystem::path& path)
{
    namespace csv = sched::csv;
    std::ifstream in(path);
    if (!in)
        throw InputError(path.string(), "", "cannot open the workload file");
    std::string line;
    if (!std::getline(in, line) || csv::split(line) != std::vector<std::string> { "scenario", "arrival_s" })
        throw InputError(path.string(), "line 1", "expected the header 'scenario,arrival_s'");
    std::vector<protocol::SubmitWorkload::Arrival> jobs;
    for (int number = 2; std::getline(in, line); ++number) {
        if (csv::trim(line).empty())
            continue;
        const std::string where = path.string() + ":" + std::to_string(number);
        const std::vector<std::string> cells = csv::split(line);
        if (cells.size() != 2)
            throw InputError(where, "", "expected 2 cells (scenario,arrival_s), got " + std::to_string(cells.size()));
        const double arrival = csv::number<double>(cells[1], where, "arrival_s", "seconds");
        if (!(arrival >= 0 && std::isfinite(arrival)))
            throw InputError(where, "arrival_s", "expected seconds from the submission, 0 or more");
        const std::filesystem::path scenario = path.parent_path() / cells[0];
        std::ifstream file(scenario);
        if (cells[0].empty() || !file)
            throw InputError(where, "scenario", "cannot open the scenario file '" + scenario.string() + "'");
        std::stringstream text;
        text << file.rdbuf();
        jobs.push_back({ text.str(), arrival });
    }
    if (jobs.empty())
        throw InputError(path.string(), "", "a workload needs at least one job");
    return jobs;
}

} // namespace fulcrum::ctl
