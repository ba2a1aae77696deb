#pragma once

#include "sched/simulator.h"

#include <string>

namespace fulcrum::sched {

// The summary metrics as one JSON object: placement, comm, jobs, rejected, avg_jct,
// median_jct, p95_jct, makespan, gpu_util (seconds and a 0..1 fraction), tasks.
std::string metrics_json(const SimulationResult& result);

// DIR/jobs.csv (one row per job: id, name, model, gpus, iterations, arrival, placed, finish,
// jct, placement), DIR/jct_cdf.csv (jct, fraction of jobs done within it) and
// DIR/utilization.csv (bin start, GPU utilization in the bin). Creates DIR; throws
// InputError naming a file it cannot write.
void write_csv_reports(const SimulationResult& result, const std::string& dir, double utilization_bin_s);

} // namespace fulcrum::sched
