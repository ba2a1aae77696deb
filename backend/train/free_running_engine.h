#pragma once

#include "train/job_core.h"

#include <atomic>
#include <memory>
#include <string_view>
#include <vector>

namespace fulcrum::train {

// The sync models without a barrier per iteration, on the virtual clock:
//   asp          every push is applied at once, the worker pulls and goes on;
//   ssp          the same, but a worker more than s iterations ahead of the slowest waits;
//   elastic-bsp  workers run freely within a superstep, the superstep ends at a barrier whose
//                place is chosen from each worker's next R predicted end times (ZipLine or
//                another barrier-window algorithm), worker i running r_i iterations.
// Gradients are real and really stale: a worker's gradient is computed on the parameters
// it pulled and applied when its push arrives, after whatever others pushed meanwhile.
// Each push moves the model by its share of the total batch (x_i / X of the learning rate)
// and counts as one update.
//
// Its safe point is between two events of the clock: pins and exclusions size each
// worker's next batches (a batch under way is applied as it was computed; an excluded
// worker starts no more and holds no one back), injected stragglers compute slower, a
// pause holds the clock, and the sync model switches among asp, ssp and elastic-bsp (the
// workers' clocks carry over; elastic-bsp begins a superstep once the batches under way
// arrive). A switch to bsp or backup lets the batches under way arrive, starts no more, and
// ends the segment.
class FreeRunningEngine {
public:
    explicit FreeRunningEngine(JobCore& core);
    ~FreeRunningEngine();

    // From core.progress() (every worker's clock at progress.next) until training ends
    // (false) or the sync model switches to bsp or backup (true), progress.next then past
    // every worker's last iteration.
    bool run(const std::atomic<bool>* stop);

    // Checkpoints are taken between two events (config's checkpoint_every counts updates):
    // the batches under way are in them with their gradients, so a resumed run goes on bit
    // for bit as the uninterrupted one would on the virtual clock.
    static bool reads(std::string_view format);
    // Before run(), read past the format line; throws InputError naming a damaged part.
    void resume_from_checkpoint(StateReader& in);
    // After resume_from_checkpoint(): per worker, the last iteration whose row was handed
    // over before the checkpoint (the run store sets aside the later ones).
    std::vector<std::int64_t> recorded_through() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace fulcrum::train
