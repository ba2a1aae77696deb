#pragma once

#include "protocol/messages.h"
#include "ui/models/ring_buffer.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

namespace fulcrum::ui {

// One worker's part of one iteration, as the charts and the timeline draw it (times in run
// seconds).
struct WorkerSample {
    std::int64_t iteration = 0;
    double start_s = 0, end_s = 0;
    std::int32_t batch_size = 0;
    float compute_s = 0, comm_s = 0, wait_s = 0;
    float speed = 0;
    float predicted_speed = NAN; // NaN: the policy made no prediction
    float cpu_share = 0;

    double batch_time_s() const { return double(compute_s) + double(comm_s); }
};

// When an iteration's barrier fell on the run's clock: its slowest working worker's end
// (workers sitting the iteration out do not count).
double barrier_s(const protocol::IterationRows& rows);

// One iteration across the job's workers: when its barrier released and fell, how uneven
// the workers were and who was last.
struct IterationSummary {
    std::int64_t iteration = 0;
    double start_s = 0, barrier_s = 0;
    // How uneven the workers' batch processing times were: (max − min) / mean, or above
    // kWholeRangeUpTo workers the greater of the 10th to 90th percentile and the slowest's
    // excess over the median, each over the mean. The range of N noisy workers grows with N
    // (about √(2 ln N) standard deviations each way), so a 64-worker job with a few per cent
    // of noise never read equilibrium under the whole range; the interdecile range does not
    // grow with N, and the slowest's excess keeps a barrier's straggler in the count (the
    // barrier waits for it, however few there are).
    double spread = 0;
    bool robust_spread = false; // the spread is the large-job one
    static constexpr std::size_t kWholeRangeUpTo = 16;
    double mean_batch_time_s = 0;
    double fastest_batch_time_s = 0;
    // The workers' distribution, of those that ran: what a large job's charts draw as a band
    // and a median (issue 44 item 2).
    double median_batch_time_s = 0, slowest_batch_time_s = 0;
    std::int32_t least_batch = 0, median_batch = 0, greatest_batch = 0;
    WorkerId straggler = -1; // the worker the barrier waited for
};

// The recent iterations of one job, per worker and per iteration, in ring buffers of
// `capacity` iterations: what the equilibrium charts and the straggler timeline read.
class JobHistory {
public:
    explicit JobHistory(std::size_t capacity = 10000);

    void append(const protocol::IterationRows& rows);
    // Drops every iteration whose barrier fell after `time_s` (a replay seeked back).
    void truncate_after(double time_s);
    void clear();

    std::size_t capacity() const { return capacity_; }
    // Changes whenever iterations are dropped other than by age (truncate, clear), and
    // differs between histories: what a view's cache of drawn iterations checks.
    std::uint64_t generation() const { return generation_; }
    int workers() const { return static_cast<int>(workers_.size()); }
    const RingBuffer<WorkerSample>& worker(WorkerId worker) const
    {
        return workers_.at(static_cast<std::size_t>(worker));
    }
    const RingBuffer<IterationSummary>& iterations() const { return iterations_; }
    std::optional<std::int64_t> first_iteration() const;
    std::optional<std::int64_t> last_iteration() const;
    // Positions in iterations() of the first iteration >= `iteration`.
    std::size_t position_of(std::int64_t iteration) const;
    // Positions in worker(w) of the first sample with iteration >= `iteration`.
    std::size_t position_of(WorkerId worker, std::int64_t iteration) const;

private:
    static std::uint64_t next_generation();

    std::size_t capacity_;
    std::uint64_t generation_ = next_generation();
    std::vector<RingBuffer<WorkerSample>> workers_;
    RingBuffer<IterationSummary> iterations_;
};

// The stretches where the spread stays under `threshold` for at least `window` iterations
// in a row: where the batch sizes have settled ("equilibrium" on the chart), first and last
// iteration of each. The last one is still open when it reaches the newest iteration.
struct Equilibrium {
    std::int64_t first = 0, last = 0;
    bool operator==(const Equilibrium&) const = default;
};
inline constexpr std::size_t kEquilibriumWindow = 10;
std::vector<Equilibrium> equilibria(
    const JobHistory& history, double threshold, std::size_t window = kEquilibriumWindow);

} // namespace fulcrum::ui
