#pragma once

#include "common/records.h"
#include "common/stall_spec.h"
#include "train/batch_release.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace fulcrum::balance {
class BatchSizeManager;
}

namespace fulcrum::train {

struct BarrierTask;
struct JobState;
class RemoteWorkers;
class TrainingObserver;

// The events' messages, whose numbers the typed Stall detail reads back (common/job_event.h):
// "worker 2 stalled: its batch of 64 has taken 2 s, predicted 0.04 s (its limit 2 s: ...)"
// and "worker 2 recovered: its batch of 64 took 9.5 s, predicted 0.04 s". `who`: "worker 2",
// "rank 1 (rank-1)".
std::string stall_message(
    const std::string& who, std::int32_t batch, double elapsed_s, double predicted_s, double limit_s);
std::string recovery_message(const std::string& who, std::int32_t batch, double took_s, double predicted_s);

// The stall detection of one barrier engine (issue 42, common/stall_spec.h). A batch runs
// from its worker's release at the barrier to its push, and is predicted to take its size
// over the policy's predicted speed, or over the worker's last measured speed under a policy
// that predicts none (uniform), plus its last pull and push; a worker with neither (its first
// batch) is not judged.
// - Real mode: the engine waits for its workers through next_due and check, so a stall is
//   reported while it lasts, and the exclude action gives up the worker's batch at once
//   (the barrier goes on without it); finish records the recoveries.
// - Virtual and paced modes: judge reads the timed rows after the barrier, and records each
//   stall at its modelled instant; an exclusion then applies from the next barrier.
class StallWatch {
public:
    StallWatch(const StallSpec& spec, JobState& job, TrainingObserver& observer, balance::BatchSizeManager& manager,
        BatchRelease& release);

    // Iteration `iteration` starts at `start` (the run clock): the workers in `active`, with
    // their batch sizes and the policy's predicted speeds (samples per second), by worker.
    void begin(std::int64_t iteration, double start, const std::vector<std::size_t>& active,
        const std::vector<std::int32_t>& sizes, const std::vector<std::optional<double>>& predicted_speeds);
    // The earliest instant a stall is due to be reported or acted on; none when nothing is.
    std::optional<double> next_due() const;
    // At `now`, `ended` by worker: reports the stalls due and takes the on_stall action.
    void check(double now, const std::vector<bool>& ended);
    // The iteration's batches ended (real mode): worker-recovered for each stalled one that
    // brought its result.
    void finish(const std::vector<BarrierTask>& tasks);
    // The free-running engines (asp, ssp, elastic-bsp), where each worker has its own batches:
    // worker `worker`'s batch of its iteration `iteration` starts at `start`.
    void begin_batch(std::size_t worker, std::int64_t iteration, double start, std::int32_t size,
        std::optional<double> predicted_speed);
    // ... and ended at `end` (real mode): worker-recovered if it was stalled and brought its result.
    void end_batch(std::size_t worker, double end, bool lost);
    // The virtual and paced modes' timed rows (of the iteration, or a free-running worker's row).
    void judge(std::span<const IterationRecord> rows);
    // Rows as recorded: each worker's measured speed, the prediction of last resort.
    void observe(std::span<const IterationRecord> rows);

private:
    struct Batch {
        std::int64_t iteration = 0; // its events' iteration
        bool active = false;
        std::int32_t size = 0;
        double start = 0;
        std::optional<double> predicted_s;
        bool reported = false;
        bool acted = false;
    };
    void report(std::size_t worker, double at);
    void act(std::size_t worker, double at);
    void recovered(std::size_t worker, double end);

    StallSpec spec_;
    JobState& job_;
    TrainingObserver& observer_;
    balance::BatchSizeManager& manager_;
    BatchRelease& release_;
    std::vector<Batch> batches_;
    std::vector<double> measured_speed_; // by worker, samples per second; 0: none yet
    std::vector<double> measured_comm_; // by worker, its last pull and push (s)
};

} // namespace fulcrum::train
