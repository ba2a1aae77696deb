#pragma once

#include "common/records.h"
#include "gpu/dense_pass.h"

#include <memory>
#include <set>
#include <span>

namespace fulcrum::gpu {

// A worker's training step with its training set resident in the ops' Compute memory (one
// upload, at the start): the parameters are pulled in through Staging memory (or straight
// from the caller's pinned buffer), the batch is gathered where it is computed on, and the
// gradient is pushed out the same way. With CUDA ops every copy and kernel is queued on the worker's own stream, and
// the step waits once, for the gradient.
class ResidentStep {
public:
    // `features` is dim x samples, column-major, as data::Dataset holds it.
    ResidentStep(std::unique_ptr<DenseOps> ops, NetworkShape shape, std::span<const float> features,
        std::span<const std::int32_t> labels);
    ResidentStep(const ResidentStep&) = delete;
    ResidentStep& operator=(const ResidentStep&) = delete;
    ~ResidentStep();

    // Pins the caller's parameter and gradient buffers, which must stay where they are for
    // this step's life: a step given these very buffers copies the parameters in from them
    // and the gradient out into them, with no host copy through Staging memory (for a
    // 20-million-parameter model, two 80 MB copies a step: two thirds of the step's wall
    // time on an H100, docs/benchmarks.md). Where the device will not pin one, its steps
    // copy through Staging memory as with any other buffers; true where both are pinned.
    bool pin_host_buffers(std::span<const float> params, std::span<float> gradient);
    // The mean gradient over the samples (indices into the resident set) at `params`;
    // returns the mean loss.
    double loss_and_gradient(
        std::span<const float> params, std::span<const std::int64_t> samples, std::span<float> gradient);
    // Mean loss and accuracy over the resident samples at `params`, in chunks.
    struct Evaluation {
        double loss = 0;
        double accuracy = 0;
    };
    Evaluation evaluate(std::span<const float> params, std::int64_t chunk = 4096);
    // The device time of the last loss_and_gradient, copies in and out included.
    double last_compute_seconds() const { return last_seconds_; }

    // x_o of LB-BSP Algorithm 2, measured: the largest batch, up to `cap`, whose buffers the
    // device can allocate now (real allocations, bisected; 0 where not even one sample fits).
    // Afterwards the step holds no batch buffers: they grow again with the batches it runs.
    // What other workers and processes allocate later is not foreseen; Algorithm 2's memory
    // ceiling on the device's reading guards that.
    std::int32_t probe_batch_limit(std::int32_t cap);
    // The device's memory now (this step's own and every process's) and its utilisation.
    DeviceReading reading() { return ops_->reading(); }
    std::string placement() const { return ops_->placement(); }

private:
    void pull(std::span<const float> params);
    // Queues the samples' indices in through staging memory and gathers their features and
    // labels into features_ and labels_. The staging buffers must be free (after finish()).
    void gather(std::span<const std::int64_t> samples);
    // Every buffer a training step of `batch` uses, at its size; true where one moved (the
    // ops' graphs then hold stale addresses).
    bool reserve_step(int batch);
    // The step's device work from the parameters on the device and the staged samples to the
    // gradient on the device and the staged loss: what a graph records. The parameters' and
    // the gradient's copies are queued around it, from and to pinned or Staging memory.
    void queue_step(int batch);
    // Captures the step of `batch` into a graph, which nothing runs yet; where the device
    // cannot record it, that size runs without a graph from then on.
    void capture(int batch);
    bool batch_fits(std::int32_t batch);
    void release_batch_buffers() noexcept;
    void unpin_host_buffers() noexcept;

    std::unique_ptr<DenseOps> ops_;
    DensePass pass_;
    std::int64_t samples_ = 0;
    OpsBuffer<float> dataset_;
    OpsBuffer<std::int32_t> dataset_labels_;
    OpsBuffer<float> params_;
    OpsBuffer<float> gradient_;
    OpsBuffer<float> features_;
    OpsBuffer<std::int32_t> labels_;
    OpsBuffer<std::int64_t> samples_in_;
    OpsBuffer<float> results_; // loss, accuracy
    OpsBuffer<float> staged_params_;
    OpsBuffer<float> staged_gradient_;
    OpsBuffer<std::int64_t> staged_samples_;
    OpsBuffer<float> staged_results_;
    double last_seconds_ = 0;
    std::int64_t steps_run_ = 0;
    std::set<int> uncapturable_; // batch sizes whose capture failed: they run without a graph
    const float* pinned_params_ = nullptr; // the caller's, pinned by pin_host_buffers
    float* pinned_gradient_ = nullptr;
};

// A reading as the run store records it: GB (1e9 bytes, as PyTorch ranks report theirs)
// and shares.
GpuUse gpu_use(const DeviceReading& reading);

} // namespace fulcrum::gpu
