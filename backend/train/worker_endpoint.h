#pragma once

#include "train/batch_release.h"
#include "train/remote_workers.h"
#include "train/worker.h"

#include <cstdint>
#include <memory>
#include <optional>

namespace fulcrum::train {

// What computing one batch measured where it was computed.
struct BatchMeasurement {
    double loss = 0;
    double compute_s = 0; // the worker's own forward and backward time (wall seconds)
    // The call's wall time: compute_s, plus the round trip for a worker in another process
    // (the engines count the difference as communication).
    double elapsed_s = 0;
    double cpu_seconds = 0; // CPU time the batch used
    std::optional<double> memory_share; // measured on the worker's host; unset: this host's
    GpuUse gpu; // a GPU worker's device after the batch
    std::optional<RemoteLoss> lost; // the worker is gone: no gradient, nothing measured
};

// Where a worker's batches are computed: a CPU thread in this process, a fulcrum-worker
// process (and, next, a GPU stream or an external framework's rank). The engines pull the
// server's parameters into the worker's replica, hand the endpoint a batch size, and read
// the gradient from the worker's gradient buffer: the training math never knows where it
// ran (ps-lite's Van). Called from the worker's own thread in real mode, from the engine's
// in the virtual modes, whose clock ignores what was measured.
class WorkerEndpoint {
public:
    virtual ~WorkerEndpoint() = default;
    // The gradient of a batch of `batch_size` on the replica into the gradient buffer.
    // `slowdown` > 1 is an injected straggler: the endpoint idles for (slowdown - 1) times
    // its compute time, as a slower machine would (the virtual clock scales its model
    // instead, and passes 1).
    virtual BatchMeasurement compute(std::int64_t iteration, std::int32_t batch_size, double slowdown) = 0;
    // Whether the batches run in another process on its own clock, so only the real mode
    // can time them.
    virtual bool in_another_process() const = 0;
};

// A local worker computing on the calling thread.
// `reads_device`: a GPU worker's device is read after each batch (the real mode; the virtual
// modes record the performance model's memory, so they skip the driver and NVML calls).
// `release` (the real mode): a batch given up there is cut short and brings no gradient.
std::unique_ptr<WorkerEndpoint> make_local_endpoint(Worker& worker, bool reads_device, BatchRelease* release);
// A slot of `remote`: its process gets the replica and the batch size and sends the
// gradient back.
std::unique_ptr<WorkerEndpoint> make_remote_endpoint(Worker& worker, RemoteWorkers& remote);

} // namespace fulcrum::train
