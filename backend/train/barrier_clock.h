#pragma once

#include "common/records.h"
#include "perf/performance_model.h"
#include "train/worker_endpoint.h"

#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

namespace fulcrum::train {

class JobCore;

// What one worker's batch of a barrier iteration measured: the pull from the server and
// the endpoint's compute (wall seconds since the run started).
struct BarrierTask {
    double pull_start = 0, pull_end = 0, end = 0;
    BatchMeasurement batch;
};

// How a barrier engine's iterations are timed: the run clock of the virtual and paced
// modes (the workers' performance models and the discrete-event queue) or the wall clock
// of the real mode (what the endpoints measured). The engine computes real gradients the
// same way under both; only the times in its rows, and so the barrier, come from here.
class BarrierClock {
public:
    virtual ~BarrierClock() = default;
    // Threads computing an iteration's batches at once.
    virtual std::size_t compute_threads() const = 0;
    // Before the iteration is handed out: the real mode asks fulcrumd's communication
    // scheduler (TrainerConfig::comm_gate) whether the active workers' pulls may start, and
    // waits while they are held (the modelled modes ask when they time the barrier).
    virtual void hold_for_links(
        const std::vector<std::size_t>& /*active*/, std::int64_t /*iteration*/, const std::atomic<bool>* /*stop*/)
    {
    }
    // When the iteration is handed out, on the run clock (`now`: the last barrier).
    virtual double dispatch(double now) const = 0;
    // The factor an endpoint idles its compute by for an injected straggler of `slowdown`.
    virtual double endpoint_slowdown(double slowdown) const = 0;
    // Times one iteration's rows (start, compute, communication, end, resource shares) and
    // returns the barrier: the `needed`-th arrival. `tasks` is indexed by worker; the paced
    // clock marks a batch given up while it waited for the barrier (its `lost`: excluded). A
    // stop request ends a wait for the links, or for the wall clock, early.
    virtual double close_barrier(std::vector<IterationRecord>& rows, std::vector<BarrierTask>& tasks, double dispatched,
        std::int64_t iteration, std::size_t needed, const std::atomic<bool>* stop)
        = 0;
    // The resources the row's worker starts the next iteration with, as the manager sees them.
    virtual perf::ResourceShare next_share(const IterationRecord& row, double barrier) const = 0;
    // After the barrier at `now`: the paced clock waits for the wall clock to catch up (with
    // the rows final, for the time the iteration's evaluation and recording took).
    virtual void after_barrier(double now, const std::atomic<bool>* stop) = 0;
};

// The clock of `core.config().mode`. The virtual ones set each timed worker's entry of
// `device_memory` (part of the engine's checkpoint; the real one leaves it).
std::unique_ptr<BarrierClock> make_barrier_clock(JobCore& core, std::vector<double>& device_memory);

} // namespace fulcrum::train
