#pragma once

#include <vector>

namespace fulcrum::sched {

// Summary statistics of job metrics (JCT, feedback latency); 0 for an empty set.
double mean_of(const std::vector<double>& values);
double median_of(std::vector<double> values);
// Nearest-rank percentile, p in (0, 1].
double percentile_of(std::vector<double> values, double p);

} // namespace fulcrum::sched
