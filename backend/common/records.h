#pragma once

// Plain records that travel from the trainer to the recorder, the stream and the console.
// No Qt, Beast or SQLite here: every module may include this header.

#include <cstdint>
#include <optional>
#include <string>

namespace fulcrum {

using RunId = std::int64_t;
using JobId = std::int32_t;
using WorkerId = std::int32_t;

// A GPU worker's device while it computed a batch: its own device memory (GB), the device's
// memory in use by every process as a share of the whole (what Algorithm 2's 95 % ceiling
// reads), and the device's utilisation (0..1) as NVML sampled it. Unset where nothing
// measured it; the virtual modes carry the performance model's memory and no utilisation.
struct GpuUse {
    std::optional<double> memory_gb;
    std::optional<double> memory_share;
    std::optional<double> utilization;

    bool operator==(const GpuUse&) const = default;
};

// One worker's part of one iteration (one BSP superstep). Times are in seconds on the
// run's clock: virtual seconds in the virtual and paced modes, measured wall seconds in
// the real mode.
struct IterationRecord {
    JobId job = 0;
    WorkerId worker = 0;
    std::int64_t iteration = 0;
    double start_s = 0; // barrier release: the worker pulls parameters
    double end_s = 0; // the worker's push completed
    std::int32_t batch_size = 0;
    double compute_s = 0; // forward and backward on the batch
    double comm_s = 0; // pull plus push
    double wait_s = 0; // idle at the barrier until the slowest worker arrives
    double cpu_share = 0; // CPU share available to the worker during compute (0..1)
    double memory_share = 0; // memory share available to the worker during compute (0..1)
    double speed = 0; // measured samples per second: batch_size / compute_s
    std::optional<double> predicted_speed; // the batch-size policy's prediction, if it makes one
    double loss = 0; // mean training loss on this worker's batch
    std::string decision; // the policy's decision that set this batch size
    GpuUse gpu; // GPU workers only

    bool operator==(const IterationRecord&) const = default;
};

struct EvaluationRecord {
    JobId job = 0;
    std::int64_t iteration = 0;
    double time_s = 0; // run clock
    double wall_s = 0; // wall seconds since the run started
    double epoch = 0;
    double train_loss = 0; // batch-size-weighted mean over the last iteration's workers
    double test_loss = 0;
    double test_accuracy = 0;

    bool operator==(const EvaluationRecord&) const = default;
};

struct EventRecord {
    JobId job = 0;
    std::int64_t iteration = 0;
    double time_s = 0;
    std::string kind; // e.g. "run-started", "phase-change", "warning", "pin"
    std::optional<WorkerId> worker;
    std::string message;
    std::string actor = "system"; // who caused it: "system", or an operator's name later

    bool operator==(const EventRecord&) const = default;
};

// The cluster a live job ran on (fulcrumd), as it stood from this moment of the job's run
// clock: what the console's scheduler view and cluster map show when the run is replayed.
struct ClusterRecord {
    JobId job = 0;
    std::int64_t iteration = 0;
    double time_s = 0;
    std::string state; // the cluster-state message as fulcrumd streamed it (docs/protocol.md)
    JobId cluster_job = 0; // the job's own id in `state` (fulcrumd's job id)

    bool operator==(const ClusterRecord&) const = default;
};

} // namespace fulcrum
