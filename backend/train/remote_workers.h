#pragma once

#include "common/records.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace fulcrum::train {

// What a remote worker process measured for one batch.
struct RemoteBatch {
    double loss = 0;
    double compute_s = 0; // its own wall time for forward and backward
    double cpu_share = 0; // its CPU time over that wall time
    double memory_share = 0; // available memory on its host
    GpuUse gpu; // its GPU after the batch, when it computes on one (fulcrum-worker --device)
};

// Why a remote batch brought no gradient: the worker is lost.
struct RemoteLoss {
    enum class Kind : std::uint8_t {
        Disconnected, // its connection closed, or it sent a result that does not fit
        Silent, // it sent nothing, heartbeats included, for its job's worker timeout
        Excluded, // not lost: an operator excluded or removed it, and its task was given up
    };
    Kind kind = Kind::Disconnected;
    double silent_s = 0; // Silent: the worker timeout it was silent for
    // The process that was lost, when known: its host and connection ("host-b
    // (fulcrum-worker/0.1@10.0.0.7:40312)"), so the event says which machine went.
    std::string who {};

    // Excluded is no loss: the worker stays connected and the exclusion is the operator's.
    bool lost() const { return kind != Kind::Excluded; }
    // The row's decision: "dropped: disconnected", "dropped: silent", "dropped: excluded".
    std::string decision() const;
    // For a worker-lost event: "disconnected", "was silent for 10 s (the worker timeout)",
    // followed by " on WHO" when the process is known.
    std::string describe() const;
};

// A remote batch's gradient and measurements, or why there is none.
struct RemoteOutcome {
    std::optional<RemoteBatch> batch;
    RemoteLoss loss; // when no batch
};

// Worker slots whose batches are computed by other processes (fulcrum-worker), which
// fulcrumd connects to the trainer. The BSP trainer's real mode sends each remote slot its
// task and waits for the result on the slot's pool thread, as a local worker computes.
class RemoteWorkers {
public:
    virtual ~RemoteWorkers() = default;
    virtual bool is_remote(WorkerId worker) const = 0;
    // Sends the parameters and the batch size and blocks until the result, whose gradient is
    // written to `gradient`. No batch when the worker is gone: disconnected before or during
    // the task, silent for the worker timeout, or it sent a result that does not fit.
    virtual RemoteOutcome compute(WorkerId worker, std::int64_t iteration, std::span<const float> parameters,
        std::int32_t batch_size, std::span<float> gradient)
        = 0;
    // The worker was excluded or removed: its task under way (or one sent before the
    // exclusion applies) is given up at once as RemoteLoss::Excluded, so the barrier it holds
    // goes on without it; its result, when it comes, is discarded.
    virtual void give_up_task(WorkerId worker) = 0;
    // Included again (or the exclusion or removal refused): the task after the one that was
    // under way is not given up after all; the one under way still is.
    virtual void keep_next_task(WorkerId worker) = 0;
};

} // namespace fulcrum::train
