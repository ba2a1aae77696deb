#pragma once

#include "perf/resource_timeline.h"

#include <optional>
#include <string>
#include <vector>

namespace fulcrum::perf {

// An EC2 instance type of the LB-BSP paper's Cluster-B, with its capacity relative to an
// m4.2xlarge (vCPUs times per-core speed).
struct InstanceType {
    std::string name;
    double relative_speed = 1.0;
    int count_in_cluster_b = 0;
};

// m4.2xlarge x17, c5.2xlarge x10, r4.2xlarge x2, m4.4xlarge x2, m4.xlarge x1 (32 workers).
const std::vector<InstanceType>& cluster_b_instances();
std::optional<double> instance_speed_factor(const std::string& name);

// The paper's straggler extents, made by competing processes (Fig. 12).
enum class Heterogeneity { Homo, HeteroL2, HeteroL3 };
const char* to_string(Heterogeneity level);
std::optional<Heterogeneity> parse_heterogeneity(const std::string& text);

// Worker i of n gets a competing process that runs with probability i / (n - 1) and then
// takes 1 - 1/L of the CPU (L = 2 or 3): the fastest worker is never disturbed, the
// slowest always runs at 1/L, the ones between switch from period to period. Homo: none.
std::optional<CompetingProcess> competing_process(Heterogeneity level, int worker, int workers, double period_s = 1.0);

} // namespace fulcrum::perf
