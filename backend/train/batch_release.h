#pragma once

#include "common/records.h"
#include "train/remote_workers.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

namespace fulcrum::train {

// Releases the barrier a worker holds when it is excluded or removed (issue 42 item 2): its
// batch under way, or the one it was just sent, is given up at once, and the barrier goes on
// without it (its row is "dropped: excluded"). The one place that does so, whoever excluded
// the worker: an operator, the job's on_stall policy, a resize.
// - A remote slot: RemoteWorkers::give_up_task; its late gradient is discarded on arrival.
// - A local worker in the real mode: its endpoint asks here when the batch starts, while it
//   idles for an injected slowdown, and when it ends. Arithmetic already under way finishes
//   (a GEMM is not interrupted); the idle time is cut, and the gradient is not used.
// - The paced mode: the barrier engine's modelled clock waits for the wall clock to reach
//   the barrier before its rows are final (ModelledBarrierClock), and a worker a person
//   excluded or removed meanwhile, whose modelled batch is still under way, is dropped
//   there, at that instant.
// - The virtual mode never waits in wall time: the exclusion applies from the next barrier,
//   which comes at once.
// Thread-safe: give_up comes from the daemon's or the engine's thread, the rest from the
// worker's own.
class BatchRelease {
public:
    BatchRelease(std::size_t workers, RemoteWorkers* remote, bool real_mode);

    // `paced`: a person's command, which comes in wall time, releases the paced clock's
    // barrier too. A scheduler's, a scenario's or a policy's decision follows the modelled
    // run there: it applies at the next barrier, as the same change in a scenario would, so
    // the run stays the one its decisions make (LiveElasticTest.APolicysResizes...).
    void give_up(WorkerId worker, bool paced = false);
    // Included again, or the exclusion or removal refused: the batch after the one that was
    // under way is not given up after all.
    void keep(WorkerId worker);

    // A local worker's batch, numbered by its starts: under asp and ssp a given-up batch does
    // not move the worker's clock, so the batch after it may carry the same iteration.
    using Batch = std::int64_t;
    // The local worker's next batch starts; ask given_up(worker, batch) whether to compute it.
    Batch start(WorkerId worker);
    // Idles up to `idle` (an injected straggler's extra time): false, at once, when the
    // batch is given up meanwhile.
    bool idle(WorkerId worker, Batch batch, std::chrono::duration<double> idle);
    bool given_up(WorkerId worker, Batch batch) const;

    // The paced mode: waits until one of `watched` is given up (that one), or until `until`
    // or a stop (none). A worker stays given up until keep().
    std::optional<WorkerId> wait_for_give_up(
        std::span<const WorkerId> watched, std::chrono::steady_clock::time_point until, const std::atomic<bool>* stop);

private:
    struct Slot {
        Batch started = 0; // the latest batch started
        Batch give_up_through = 0; // batches up to this one are given up
        bool modelled = false; // off the real mode: given up, and not kept since
    };
    Slot* local_slot(WorkerId worker); // none for a remote slot, off the real mode, or out of range

    RemoteWorkers* remote_;
    const bool real_mode_;
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<Slot> slots_;
};

} // namespace fulcrum::train
