#pragma once

#include "sched/cluster.h"
#include "sched/job.h"
#include "sched/model_templates.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fulcrum::sched {

// A workload file: CSV with the header `name,model,gpus,iterations,arrival_s`, one job a
// line, `#` comments and blank lines allowed; `model` names one of `models`. Throws
// InputError naming the file, line and field, and what was expected. Jobs are numbered in
// file order and returned sorted by arrival.
std::vector<JobSpec> load_workload(const std::string& path, const ModelCatalogue& models = ModelCatalogue::table3());

// Why the cluster can never run this job (more GPUs than it has, more memory than a GPU
// has, nothing to do), or nothing when it can.
std::optional<std::string> check_submission(const JobSpec& job, const ClusterSpec& cluster);

// The paper's Microsoft-trace-derived mix (Sec. VI): of every 160 jobs, 80 take 1 GPU, 14
// take 2, 26 take 4, 30 take 8, 8 take 16 and 2 take 32; iterations uniform in
// [min_iterations, max_iterations]; models uniform over the catalogue; arrivals uniform over
// the horizon. The authors' simulator draws the same mix with 10 to 60 iterations and
// arrivals over 12 s.
struct WorkloadGenerator {
    int jobs = 160;
    double horizon_s = 20 * 60;
    std::int64_t min_iterations = 1000;
    std::int64_t max_iterations = 6000;
    std::uint64_t seed = 1;
    ModelCatalogue models = ModelCatalogue::table3();
};
std::vector<JobSpec> generate_workload(const WorkloadGenerator& generator);

// "MIN-MAX" with 1 <= MIN <= MAX (e.g. "10-60"), or nothing.
std::optional<std::pair<std::int64_t, std::int64_t>> parse_iteration_range(const std::string& text);

// Writes a workload in the file format load_workload reads.
std::string workload_csv(const std::vector<JobSpec>& jobs);

} // namespace fulcrum::sched
