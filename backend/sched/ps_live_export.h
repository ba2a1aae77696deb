#pragma once

#include "sched/cluster.h"
#include "sched/ps_job.h"

#include <filesystem>
#include <string>
#include <vector>

namespace fulcrum::sched {

// A parameter-server workload as fulcrumd runs it live (the simulator-versus-daemon cross-
// check, scripts/elastic-cross-check.sh): each job a virtual-mode elastic scenario whose
// iteration at its requested size takes what PsClusterModel::iteration_s gives it, and whose
// resizes and restarts pause it for PsClusterModel's costs; arrivals as submit-workload takes
// them; its servers hold GPUs as the simulator's hold slots (placement.server_gpus). What
// the two cannot share is in docs/scheduling.md ("Simulator and daemon, one workload").
struct LiveJob {
    std::string file; // the scenario's file name in the export folder
    std::string scenario_json;
    double arrival_s = 0;
};

// The live form of one job (see above); `max_workers` bounds its growth.
LiveJob live_job(const PsJobSpec& job, const PsClusterModel& model, int max_workers);

// Writes `folder`/workload.csv (submit-workload's, fulcrumctl submit-workload), one scenario
// file per job under `folder`/jobs, and `folder`/cluster.json: the cluster's servers and GPUs
// for fulcrumd --cluster, one GPU per slot, its links free of other jobs' contention as the
// simulator's parameter-server model has them. Throws InputError naming a file it cannot write.
void export_live_workload(const std::vector<PsJobSpec>& jobs, const ClusterSpec& cluster, const PsClusterModel& model,
    const std::filesystem::path& folder);

} // namespace fulcrum::sched
