#include "sched/sim_report.h"

#include "common/error.h"

#include <algorithm>
#include <boost/json.hpp>
#include <filesystem>
#include <fstream>

namespace fulcrum::sched {

std::string metrics_json(const SimulationResult& r)
{
    boost::json::object o;
    o["placement"] = r.placement;
    o["comm"] = r.comm;
    o["jobs"] = r.jobs.size();
    o["rejected"] = r.rejected.size();
    o["never_ran"] = r.never_ran.size();
    o["avg_jct"] = r.average_jct_s();
    o["median_jct"] = r.median_jct_s();
    o["p95_jct"] = r.percentile_jct_s(0.95);
    o["makespan"] = r.makespan_s;
    o["gpu_util"] = r.gpu_utilization;
    o["tasks"] = r.tasks;
    return boost::json::serialize(o);
}

namespace {

std::ofstream open_for_writing(const std::filesystem::path& path)
{
    std::ofstream out(path);
    if (!out)
        throw InputError(path.string(), "", "cannot be written");
    out.precision(10);
    return out;
}

std::string placement_text(const std::vector<int>& gpus)
{
    std::string text;
    for (int g : gpus)
        text += (text.empty() ? "" : " ") + std::to_string(g);
    return text;
}

} // namespace

void write_csv_reports(const SimulationResult& r, const std::string& dir, double utilization_bin_s)
{
    std::error_code error;
    std::filesystem::create_directories(dir, error);
    if (error)
        throw InputError(dir, "", "cannot create the folder: " + error.message());
    const std::filesystem::path root(dir);
    {
        auto out = open_for_writing(root / "jobs.csv");
        out << "id,name,model,gpus,iterations,arrival_s,placed_s,finish_s,jct_s,placement\n";
        for (const JobOutcome& j : r.jobs)
            out << j.job.id << ',' << j.job.name << ',' << j.job.model.name << ',' << j.job.gpus << ','
                << j.job.iterations << ',' << j.job.arrival_s << ',' << j.placed_s << ',' << j.finish_s << ','
                << j.jct_s() << ',' << placement_text(j.gpus) << '\n';
        for (const RejectedJob& j : r.rejected)
            out << j.job.id << ',' << j.job.name << ',' << j.job.model.name << ',' << j.job.gpus << ','
                << j.job.iterations << ',' << j.job.arrival_s << ",,,,rejected: " << j.reason << '\n';
    }
    {
        auto out = open_for_writing(root / "jct_cdf.csv");
        out << "jct_s,fraction\n";
        std::vector<double> jcts;
        for (const JobOutcome& j : r.jobs)
            jcts.push_back(j.jct_s());
        std::sort(jcts.begin(), jcts.end());
        for (std::size_t i = 0; i < jcts.size(); ++i)
            out << jcts[i] << ',' << static_cast<double>(i + 1) / static_cast<double>(jcts.size()) << '\n';
    }
    {
        auto out = open_for_writing(root / "utilization.csv");
        out << "start_s,gpu_util\n";
        for (std::size_t b = 0; b < r.utilization_over_time.size(); ++b)
            out << static_cast<double>(b) * utilization_bin_s << ',' << r.utilization_over_time[b] << '\n';
    }
}

} // namespace fulcrum::sched
