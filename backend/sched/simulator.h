#pragma once

#include "sched/cluster.h"
#include "sched/job.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fulcrum::sched {

struct SimulationOptions {
    std::string placement = "lwf-1";
    std::string comm = "ada-srsf";
    std::uint64_t seed = 1;
    bool record_spans = false; // the per-GPU and per-link timeline (for a run store)
    // A GPU holds at most one job at a time (placement only on GPUs no job holds). Off, as in
    // the paper, jobs whose memory fits share a GPU in time and LWF's workload counts.
    bool exclusive_gpus = false;
    double utilization_bin_s = 60; // GPU utilization over time, one value per bin
    std::function<void(double fraction)> progress; // called now and then with jobs done / jobs
};

struct JobOutcome {
    JobSpec job;
    std::vector<int> gpus; // where it ran
    double placed_s = 0; // when the placement found room for it
    double finish_s = 0;
    double jct_s() const { return finish_s - job.arrival_s; }
};

// A stretch of the timeline: consecutive compute tasks of one job on one GPU, or one
// all-reduce of a job on the links it spans.
struct TimelineSpan {
    enum class Kind : std::uint8_t { Compute, AllReduce };
    Kind kind = Kind::Compute;
    int gpu = -1; // for compute; -1 for an all-reduce
    int job = 0;
    double start_s = 0;
    double end_s = 0;
    std::int64_t first_iteration = 0;
    std::int64_t iterations = 0; // tasks merged into the span (compute: forward+backward pairs)
    int contention = 1; // all-reduce: the most tasks that shared one of its links
};

struct SimulationResult {
    std::string placement, comm;
    std::vector<JobOutcome> jobs; // finished, in id order
    std::vector<RejectedJob> rejected; // refused at submission
    std::vector<RejectedJob> never_ran; // could not be placed although submitted (should stay empty)
    double makespan_s = 0;
    double gpu_utilization = 0; // compute-busy GPU time / (GPUs x makespan)
    std::vector<double> utilization_over_time; // per bin of SimulationOptions::utilization_bin_s
    std::vector<TimelineSpan> spans;
    std::int64_t tasks = 0; // compute and all-reduce tasks simulated

    double average_jct_s() const;
    double median_jct_s() const;
    double percentile_jct_s(double p) const; // nearest rank, p in (0, 1]
};

// Runs a workload to completion on the cluster: jobs arrive, are placed (PlacementPolicy)
// in SRSF order, each GPU runs the ready task of its placed jobs with the shortest remaining
// service first (communication ignored in that order, as in the paper), and all-reduces
// across servers start when the CommPolicy admits them and share links by eq. 5.
// Event-driven and deterministic for a seed. Jobs the cluster can never run are rejected
// up front; placement names and comm names as in make_placement / make_comm_policy.
SimulationResult simulate(const ClusterSpec& cluster, std::vector<JobSpec> jobs, const SimulationOptions& options);

} // namespace fulcrum::sched
