#pragma once

#include "common/records.h"
#include "data/batch_sampler.h"
#include "gpu/resident_step.h"
#include "model/model.h"
#include "perf/worker_profile.h"

#include <memory>
#include <optional>
#include <string>

namespace fulcrum::train {

using WorkerSetup = perf::WorkerProfile;

// One data-parallel worker: a parameter replica, its own model scratch, its own pass over
// the shared training set and, in the virtual modes, its performance model.
class Worker {
public:
    Worker(WorkerId id, const WorkerSetup& setup, const model::Model& prototype,
        std::shared_ptr<const data::Dataset> train, std::uint64_t seed);

    // Draws a batch of `batch_size` samples and computes the mean gradient on the replica,
    // on the worker's device (setup().device); returns the mean loss.
    double compute_gradient(std::int32_t batch_size);
    // A GPU worker's device time for its last batch (CUDA events: copies and kernels), or
    // nullopt for a CPU worker.
    std::optional<double> device_seconds() const
    {
        return on_device_ ? std::optional<double>(on_device_->last_compute_seconds()) : std::nullopt;
    }

    // A GPU worker's device after its last batch (its memory, the device's, utilisation);
    // nullopt for a CPU worker.
    std::optional<GpuUse> device_use() const
    {
        return on_device_ ? std::optional<GpuUse>(gpu::gpu_use(on_device_->reading())) : std::nullopt;
    }
    // The virtual modes' record of a GPU-profile worker's device: the performance model's
    // memory share as GB and share, no utilisation; nothing for a CPU worker.
    GpuUse modelled_device_use(double memory_share) const;
    // A GPU worker measures x_o on its device (ResidentStep::probe_batch_limit, up to
    // `cap`); a CPU worker has none. Throws where not even one sample fits.
    void measure_batch_limit(std::int32_t cap);
    // A GPU worker's device, for the job's events: where it computes (its SM share, or why
    // it shares the whole GPU) and its measured x_o; empty for a CPU worker.
    std::string device_note() const;
    // x_o as measured on the worker's device; unset for a CPU worker.
    std::optional<std::int32_t> measured_batch_limit() const { return measured_batch_limit_; }

    // Elastic PS: sample only from these training-set indices from now on.
    void assign_data(std::vector<std::int64_t> indices) { sampler_.assign(std::move(indices)); }

    WorkerId id() const { return id_; }
    const WorkerSetup& setup() const { return setup_; }
    model::Vector& replica() { return replica_; }
    const model::Vector& gradient() const { return gradient_; }
    // Where a remote worker's gradient is put, so the barrier reads it as a local one.
    model::Vector& gradient_buffer() { return gradient_; }
    perf::PerformanceModel& performance() { return *performance_; }
    // A checkpoint: where its pass over the data stands and its performance model's streams.
    // The replica and gradient are rebuilt by the next pull and batch.
    void save_state(StateWriter& out) const
    {
        sampler_.save_state(out);
        performance_->save_state(out);
    }
    void load_state(StateReader& in)
    {
        sampler_.load_state(in);
        performance_->load_state(in);
    }

private:
    WorkerId id_;
    WorkerSetup setup_;
    std::unique_ptr<model::Model> model_;
    std::shared_ptr<const data::Dataset> train_;
    data::BatchSampler sampler_;
    std::unique_ptr<perf::PerformanceModel> performance_;
    model::Vector replica_;
    model::Vector gradient_;
    Eigen::MatrixXf features_;
    std::vector<std::int32_t> labels_;
    // A GPU worker's step, with the training set resident on its device.
    std::unique_ptr<gpu::ResidentStep> on_device_;
    std::optional<std::int32_t> measured_batch_limit_;
    std::optional<bool> host_buffers_pinned_; // asked for a large model: whether the driver pinned them
};

} // namespace fulcrum::train
