#pragma once

#include "common/records.h"
#include "gpu/dense_pass.h"

#include <memory>
#include <set>
#include <span>

namespace fulcrum::gpu {

// A worker's training step with its training set resident in the ops' Compute memory (one
// upload, at the start): the parameters are pulled in through Staging memory, the batch
// is gathered where it is computed on, and the gradient is pushed out through Staging
// memory. With CUDA ops every copy and kernel is queued on the worker's own stream, and the
// step waits once, for the gradient.
class ResidentStep {
public:
    // `features` is dim x samples, column-major, as data::Dataset holds it.
    ResidentStep(std::unique_ptr<DenseOps> ops, NetworkShape shape, std::span<const float> features,
        std::span<const std::int32_t> labels);
    ResidentStep(const ResidentStep&) = delete;
    ResidentStep& operator=(const ResidentStep&) = delete;
    ~ResidentStep();

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
    // The step's device work, from the staged parameters and samples to the staged gradient
    // and loss: what a graph records.
    void queue_step(int batch);
    // Captures the step of `batch` into a graph, which nothing runs yet; where the device
    // cannot record it, that size runs without a graph from then on.
    void capture(int batch);
    bool batch_fits(std::int32_t batch);
    void release_batch_buffers() noexcept;

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
};

// A reading as the run store records it: GB (1e9 bytes, as PyTorch ranks report theirs)
// and shares.
GpuUse gpu_use(const DeviceReading& reading);

} // namespace fulcrum::gpu
