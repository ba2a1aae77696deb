#pragma once

#include "common/job_event.h"
#include "common/records.h"
#include "common/state_archive.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fulcrum::balance {

// What a worker reported at the barrier that just closed.
struct WorkerObservation {
    WorkerId worker = 0;
    std::int32_t batch_size = 0;
    double compute_s = 0;
    double comm_s = 0;
    double cpu_share = 0; // during the computation
    double memory_share = 0;
    double next_cpu_share = 1; // the state now, at the start of the next iteration (c^{k+1})
    double next_memory_share = 1; // (m^{k+1})
    double device_memory = 0; // GPU memory in use as a share of the device, 0 for CPU workers
    std::int32_t batch_limit = 0; // x_o, the largest batch that fits in memory; 0 = none

    double batch_time_s() const { return compute_s + comm_s; }
};

// Something a policy wants on the record: a phase change, a warning.
struct PolicyEvent {
    EventKind kind = EventKind::Warning; // PhaseChange or Warning
    std::optional<WorkerId> worker;
    std::string message;
};

// The batch-size manager's answer for the next iteration, one entry per worker.
struct Allocation {
    std::vector<std::int32_t> batch_sizes;
    std::vector<std::optional<double>> predicted_speeds; // empty, or one per worker
    std::string decision; // short tag recorded with every row, e.g. "uniform"
    std::vector<std::string> decisions; // empty, or a tag per worker overriding `decision`
    std::vector<PolicyEvent> events;
};

// A batch-size policy of the LB-BSP BatchSizeManager: called at every barrier with the
// observations of the workers that ran, returns their next sizes in the same order. The
// sizes sum to the total it is given.
class BatchSizePolicy {
public:
    virtual ~BatchSizePolicy() = default;
    virtual std::string name() const = 0;
    virtual Allocation initial(int workers, std::int32_t total_batch) = 0;
    virtual Allocation next(const std::vector<WorkerObservation>& observations, std::int32_t total_batch) = 0;
    // CPU policies are used blocking (the barrier waits for the answer); GPU policies
    // non-blocking (workers start with the previous answer), as in the paper.
    virtual bool blocking() const { return true; }
    // A checkpoint of what the policy has learned (phases, histories, predictors), so a
    // resumed job decides exactly as the uninterrupted one. A policy that returns false keeps
    // no checkpoint, and a job under it is not resumable.
    virtual bool save_state(StateWriter& /*out*/) const { return false; }
    virtual void load_state(StateReader& in) { in.fail("policy", name() + " keeps no checkpoint"); }
};

} // namespace fulcrum::balance
