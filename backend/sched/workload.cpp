#include "sched/workload.h"

#include "common/error.h"
#include "common/random.h"
#include "sched/csv_fields.h"
#include "sched/model_templates.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

namespace fulcrum::sched {

std::vector<JobSpec> load_workload(const std::string& path, const ModelCatalogue& models)
{
    std::vector<JobSpec> jobs;
    csv::for_each_row(path, "name,model,gpus,iterations,arrival_s",
        [&](const std::vector<std::string>& cells, const std::string& where) {
            JobSpec job;
            job.id = static_cast<int>(jobs.size());
            job.name = cells[0].empty() ? "job-" + std::to_string(job.id) : cells[0];
            job.model = csv::model_cell(cells[1], where, models);
            job.gpus = csv::number<int>(cells[2], where, "gpus", "a positive whole number of GPUs");
            if (job.gpus < 1)
                throw InputError(where, "gpus", "expected a positive whole number of GPUs, got " + cells[2]);
            job.iterations = csv::positive<std::int64_t>(cells[3], where, "iterations");
            job.arrival_s = csv::arrival_cell(cells[4], where);
            jobs.push_back(std::move(job));
        });
    std::stable_sort(
        jobs.begin(), jobs.end(), [](const JobSpec& x, const JobSpec& y) { return x.arrival_s < y.arrival_s; });
    return jobs;
}

std::optional<std::string> check_submission(const JobSpec& job, const ClusterSpec& cluster)
{
    if (job.gpus > cluster.gpus())
        return "asks for " + std::to_string(job.gpus) + " GPUs; the cluster has " + std::to_string(cluster.gpus());
    if (job.model.memory_gb > cluster.gpu_memory_gb) {
        std::ostringstream text;
        text << "needs " << job.model.memory_gb << " GB of GPU memory per worker; a GPU has " << cluster.gpu_memory_gb
             << " GB";
        return text.str();
    }
    if (job.gpus < 1 || job.iterations < 1)
        return "has no work (GPUs and iterations must be at least 1)";
    return std::nullopt;
}

std::vector<JobSpec> generate_workload(const WorkloadGenerator& g)
{
    // GPU counts in the trace's proportions, shuffled; the remainder of jobs % 160 is drawn
    // with the same weights.
    constexpr std::array<std::pair<int, int>, 6> kMix
        = { { { 1, 80 }, { 2, 14 }, { 4, 26 }, { 8, 30 }, { 16, 8 }, { 32, 2 } } };
    Rng rng = make_rng(g.seed, Stream::Data, 160);
    std::vector<int> sizes;
    for (int round = 0; round < g.jobs / 160; ++round)
        for (const auto& [gpus, count] : kMix)
            sizes.insert(sizes.end(), static_cast<std::size_t>(count), gpus);
    while (static_cast<int>(sizes.size()) < g.jobs) {
        auto pick = static_cast<int>(uniform_index(rng, 160));
        for (const auto& [gpus, count] : kMix) {
            if (pick < count) {
                sizes.push_back(gpus);
                break;
            }
            pick -= count;
        }
    }
    for (std::size_t i = sizes.size(); i > 1; --i) // Fisher-Yates with our own draw (portable)
        std::swap(sizes[i - 1], sizes[uniform_index(rng, i)]);

    const auto& templates = g.models.models();
    std::vector<double> arrivals(static_cast<std::size_t>(g.jobs));
    for (double& t : arrivals)
        t = std::round(uniform01(rng) * g.horizon_s * 1000) / 1000;
    std::sort(arrivals.begin(), arrivals.end());
    std::vector<JobSpec> jobs(static_cast<std::size_t>(g.jobs));
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        JobSpec& job = jobs[i];
        job.id = static_cast<int>(i);
        job.gpus = sizes[i];
        job.model = templates[uniform_index(rng, templates.size())];
        job.iterations = g.min_iterations
            + static_cast<std::int64_t>(
                uniform_index(rng, static_cast<std::uint64_t>(g.max_iterations - g.min_iterations + 1)));
        job.arrival_s = arrivals[i];
        job.name = job.model.name + "-" + std::to_string(job.gpus) + "gpu-" + std::to_string(i);
    }
    return jobs;
}

std::optional<std::pair<std::int64_t, std::int64_t>> parse_iteration_range(const std::string& text)
{
    const auto dash = text.find('-');
    if (dash == std::string::npos)
        return std::nullopt;
    std::int64_t lo = 0, hi = 0;
    const char* begin = text.data();
    const char* end = text.data() + text.size();
    const auto [lo_end, lo_error] = std::from_chars(begin, begin + dash, lo);
    const auto [hi_end, hi_error] = std::from_chars(begin + dash + 1, end, hi);
    if (lo_error != std::errc() || hi_error != std::errc() || lo_end != begin + dash || hi_end != end || lo < 1
        || hi < lo)
        return std::nullopt;
    return std::pair { lo, hi };
}

std::string workload_csv(const std::vector<JobSpec>& jobs)
{
    std::ostringstream out;
    out << "name,model,gpus,iterations,arrival_s\n";
    for (const JobSpec& j : jobs)
        out << j.name << ',' << j.model.name << ',' << j.gpus << ',' << j.iterations << ',' << j.arrival_s << '\n';
    return out.str();
}

} // namespace fulcrum::sched
