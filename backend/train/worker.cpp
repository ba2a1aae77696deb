#include "train/worker.h"

#include "gpu/cuda_devices.h"
#include "gpu/device_error.h"
#include "model/dense_network.h"

#include <algorithm>
#include <stdexcept>

namespace fulcrum::train {

Worker::Worker(WorkerId id, const WorkerSetup& setup, const model::Model& prototype,
    std::shared_ptr<const data::Dataset> train, std::uint64_t seed)
    : id_(id)
    , setup_(setup)
    , model_(prototype.clone())
    , train_(std::move(train))
    , sampler_(train_->size(), derive_seed(seed, Stream::Sampling, static_cast<std::uint64_t>(id)))
    , performance_(
          perf::make_performance_model(setup, derive_seed(seed, Stream::Resources, static_cast<std::uint64_t>(id)),
              derive_seed(seed, Stream::Noise, static_cast<std::uint64_t>(id))))
    , replica_(model::Vector::Zero(prototype.parameter_count()))
    , gradient_(model::Vector::Zero(prototype.parameter_count()))
{
    if (setup.device.is_cuda()) {
        const auto* network = dynamic_cast<const model::DenseNetwork*>(&prototype);
        if (!network)
            throw std::invalid_argument("worker " + setup.name + ": model " + prototype.name()
                + " has no GPU path (it is not a dense network)");
        gpu::NetworkShape shape { { network->layer_sizes().begin(), network->layer_sizes().end() }, network->head() };
        const auto values = static_cast<std::size_t>(train_->features.size());
        on_device_ = std::make_unique<gpu::ResidentStep>(
            gpu::make_cuda_dense_ops(setup.device.index, setup.device.sms, true, setup.device.strict_sms),
            std::move(shape), std::span<const float>(train_->features.data(), values), train_->labels);
        // A large model's replica and gradient are copied to and from the device straight,
        // without a host copy of each through Staging memory. Only buffers the allocator maps
        // on pages of their own (glibc maps every block above 32 MiB so) are pinned: pinning
        // locks whole pages, and a small buffer's would hold other allocations' memory too.
        constexpr std::size_t pin_from_bytes = std::size_t { 32 } << 20;
        if (static_cast<std::size_t>(replica_.size()) * sizeof(float) > pin_from_bytes)
            host_buffers_pinned_
                = on_device_->pin_host_buffers(std::span<const float>(replica_.data(), replica_.size()),
                    std::span<float>(gradient_.data(), gradient_.size()));
    }
}

void Worker::measure_batch_limit(std::int32_t cap)
{
    if (!on_device_)
        return;
    measured_batch_limit_ = on_device_->probe_batch_limit(cap);
    if (*measured_batch_limit_ < 1)
        throw gpu::DeviceError("worker " + setup_.name + ": " + perf::to_string(setup_.device)
            + " has no room for the buffers of even one sample (its memory is taken)");
}

std::string Worker::device_note() const
{
    if (!on_device_)
        return {};
    std::string note = "worker " + setup_.name + " computes on " + on_device_->placement();
    if (measured_batch_limit_)
        note += "; its device holds batches of up to " + std::to_string(*measured_batch_limit_)
            + " samples (x_o, allocation probe)";
    if (host_buffers_pinned_)
        note += *host_buffers_pinned_ ? "; its parameters and gradient are copied straight from pinned memory"
                                      : "; the driver refused to pin its parameters and gradient: they are copied "
                                        "through staging memory, a host copy of each at every step";
    return note;
}

GpuUse Worker::modelled_device_use(double memory_share) const
{
    if (!setup_.gpu)
        return {};
    return { memory_share * setup_.gpu->memory_gb, memory_share, std::nullopt };
}

double Worker::compute_gradient(std::int32_t batch_size)
{
    if (on_device_)
        return on_device_->loss_and_gradient(std::span<const float>(replica_.data(), replica_.size()),
            sampler_.next(batch_size), std::span<float>(gradient_.data(), gradient_.size()));
    data::gather(*train_, sampler_.next(batch_size), features_, labels_);
    return model_->loss_and_gradient(replica_, features_, labels_, gradient_);
}

} // namespace fulcrum::train
