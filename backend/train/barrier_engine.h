#pragma once

#include "train/job_core.h"

#include <atomic>
#include <memory>
#include <string>
#include <string_view>

namespace fulcrum::train {

// The sync models with a barrier every iteration (bsp, and backup(k), whose barrier closes at
// the (n - k)-th arrival and drops the later gradients). Each iteration: the BatchSizeManager
// sizes every worker's batch, the workers pull, compute real gradients in parallel and
// push, the server aggregates at the barrier (LB-BSP eq. 7 or eq. 5) and steps. Only the
// clock differs by mode: virtual and paced take batch times from the workers' performance
// models (discrete-event clock), real measures them on the workers' threads, a remote
// slot's thread waiting for its fulcrum-worker process. Its safe point is the barrier:
// elastic resizes, stragglers, sync-model switches, pins, exclusions and policy changes
// are applied there, and checkpoints are taken there.
class BarrierEngine {
public:
    explicit BarrierEngine(JobCore& core);
    ~BarrierEngine();

    // From core.progress().next until training ends (false) or the sync model switches to a
    // free-running one (true: the other engine goes on from core.progress()).
    bool run(const std::atomic<bool>* stop);
    // Whether a checkpoint whose format line is `format` is this engine's.
    static bool reads(std::string_view format);
    // Before the first run(): core.progress(), the job, the manager and the sync model in
    // effect from a checkpoint, read past its format line (bit for bit on the virtual
    // clock). Throws InputError naming the part of a checkpoint that is damaged or another
    // job's.
    void resume_from_checkpoint(StateReader& in, const std::string& format);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace fulcrum::train
