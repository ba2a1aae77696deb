#include "gpu/resident_step.h"

#include "gpu/device_error.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>

namespace fulcrum::gpu {

std::mutex& device_memory_mutex()
{
    static std::mutex mutex;
    return mutex;
}

ResidentStep::ResidentStep(std::unique_ptr<DenseOps> ops, NetworkShape shape, std::span<const float> features,
    std::span<const std::int32_t> labels)
    : ops_(std::move(ops))
    , pass_(*ops_, std::move(shape))
    , samples_(static_cast<std::int64_t>(labels.size()))
    , dataset_(*ops_, Memory::Compute)
    , dataset_labels_(*ops_, Memory::Compute)
    , params_(*ops_, Memory::Compute)
    , gradient_(*ops_, Memory::Compute)
    , features_(*ops_, Memory::Compute)
    , labels_(*ops_, Memory::Compute)
    , samples_in_(*ops_, Memory::Compute)
    , results_(*ops_, Memory::Compute)
    , staged_params_(*ops_, Memory::Staging)
    , staged_gradient_(*ops_, Memory::Staging)
    , staged_samples_(*ops_, Memory::Staging)
    , staged_results_(*ops_, Memory::Staging)
{
    const std::lock_guard memory(device_memory_mutex());
    const NetworkShape& s = pass_.shape();
    if (features.size() != labels.size() * static_cast<std::size_t>(s.input_dim()))
        throw std::invalid_argument("the resident training set has " + std::to_string(features.size())
            + " feature values for " + std::to_string(labels.size()) + " samples of dimension "
            + std::to_string(s.input_dim()));
    // The upload goes through staging memory in slices, so that a 200 MB training set
    // needs no 200 MB of page-locked memory.
    float* dataset = dataset_.reserve(features.size());
    constexpr std::size_t slice = std::size_t { 4 } << 20; // floats
    float* staging = staged_params_.reserve(std::min(slice, std::max<std::size_t>(features.size(), 1)));
    for (std::size_t begin = 0; begin < features.size(); begin += slice) {
        const std::size_t count = std::min(slice, features.size() - begin);
        ops_->finish(); // the staging slice is free again
        std::memcpy(staging, features.data() + begin, count * sizeof(float));
        ops_->copy_in(dataset + begin, staging, count * sizeof(float));
    }
    std::int32_t* dataset_labels = dataset_labels_.reserve(std::max<std::size_t>(labels.size(), 1));
    auto* staged_labels = static_cast<std::int32_t*>(ops_->allocate(Memory::Staging, labels.size_bytes() + 4));
    std::memcpy(staged_labels, labels.data(), labels.size_bytes());
    ops_->copy_in(dataset_labels, staged_labels, labels.size_bytes());
    ops_->finish();
    ops_->release(Memory::Staging, staged_labels);

    const auto parameters = static_cast<std::size_t>(s.parameter_count());
    params_.reserve(parameters);
    gradient_.reserve(parameters);
    results_.reserve(2);
    staged_results_.reserve(2);
}

ResidentStep::~ResidentStep()
{
    try {
        ops_->finish();
    } catch (...) { // NOLINT(bugprone-empty-catch): a failed device is released regardless
    }
    // The buffers go here, under the lock, rather than with the members after this body.
    const std::lock_guard memory(device_memory_mutex());
    ops_->drop_graphs();
    unpin_host_buffers();
    release_batch_buffers();
    for (OpsBuffer<float>* buffer :
        { &dataset_, &params_, &gradient_, &results_, &staged_params_, &staged_gradient_, &staged_results_ })
        buffer->clear();
    dataset_labels_.clear();
    staged_samples_.clear();
}

bool ResidentStep::pin_host_buffers(std::span<const float> params, std::span<float> gradient)
{
    const auto parameters = static_cast<std::size_t>(pass_.shape().parameter_count());
    if (params.size() != parameters || gradient.size() != parameters)
        throw std::invalid_argument("pinned buffers of " + std::to_string(params.size()) + " parameters and "
            + std::to_string(gradient.size()) + " gradient values for a model of " + std::to_string(parameters));
    ops_->finish(); // no queued copy uses the buffers pinned before
    const std::lock_guard memory(device_memory_mutex());
    unpin_host_buffers();
    if (ops_->pin_host(params.data(), params.size_bytes()))
        pinned_params_ = params.data();
    if (ops_->pin_host(gradient.data(), gradient.size_bytes()))
        pinned_gradient_ = gradient.data();
    if (pinned_gradient_)
        staged_gradient_.clear(); // reserved again by a step into a buffer not pinned
    return pinned_params_ && pinned_gradient_;
}

void ResidentStep::unpin_host_buffers() noexcept
{
    if (pinned_params_)
        ops_->unpin_host(pinned_params_);
    if (pinned_gradient_)
        ops_->unpin_host(pinned_gradient_);
    pinned_params_ = nullptr;
    pinned_gradient_ = nullptr;
}

void ResidentStep::pull(std::span<const float> params)
{
    const auto parameters = static_cast<std::size_t>(pass_.shape().parameter_count());
    if (params.size() != parameters)
        throw std::invalid_argument(
            "expected " + std::to_string(parameters) + " parameters, got " + std::to_string(params.size()));
    float* staged = staged_params_.reserve(parameters);
    std::memcpy(staged, params.data(), params.size_bytes());
    ops_->copy_in(params_.data(), staged, params.size_bytes());
}

void ResidentStep::gather(std::span<const std::int64_t> samples)
{
    // An evaluation's chunk may outgrow the step's buffers: the graphs then hold stale addresses.
    {
        const std::lock_guard memory(device_memory_mutex());
        if (reserve_step(static_cast<int>(samples.size())))
            ops_->drop_graphs();
    }
    const auto dim = static_cast<std::size_t>(pass_.shape().input_dim());
    std::int64_t* staged = staged_samples_.reserve(samples.size());
    std::memcpy(staged, samples.data(), samples.size_bytes());
    ops_->copy_in(samples_in_.reserve(samples.size()), staged, samples.size_bytes());
    ops_->gather_samples(dataset_.data(), dataset_labels_.data(), static_cast<int>(dim), samples_in_.data(),
        static_cast<int>(samples.size()), features_.reserve(dim * samples.size()), labels_.reserve(samples.size()));
}

bool ResidentStep::reserve_step(int batch)
{
    const auto samples = static_cast<std::size_t>(batch);
    const auto dim = static_cast<std::size_t>(pass_.shape().input_dim());
    const void* before[]
        = { features_.data(), labels_.data(), samples_in_.data(), staged_samples_.data(), staged_params_.data() };
    features_.reserve(dim * samples);
    labels_.reserve(samples);
    samples_in_.reserve(samples);
    staged_samples_.reserve(samples);
    staged_params_.reserve(static_cast<std::size_t>(pass_.shape().parameter_count()));
    const void* after[]
        = { features_.data(), labels_.data(), samples_in_.data(), staged_samples_.data(), staged_params_.data() };
    const bool pass_moved = pass_.reserve(batch);
    return pass_moved || !std::equal(std::begin(before), std::end(before), std::begin(after));
}

void ResidentStep::queue_step(int batch)
{
    const NetworkShape& s = pass_.shape();
    const auto samples = static_cast<std::size_t>(batch);
    ops_->copy_in(samples_in_.data(), staged_samples_.data(), samples * sizeof(std::int64_t));
    ops_->gather_samples(dataset_.data(), dataset_labels_.data(), static_cast<int>(s.input_dim()), samples_in_.data(),
        batch, features_.data(), labels_.data());
    pass_.loss_and_gradient(params_.data(), features_.data(), labels_.data(), batch, gradient_.data(), results_.data());
    ops_->copy_out(staged_results_.data(), results_.data(), sizeof(float));
}

double ResidentStep::loss_and_gradient(
    std::span<const float> params, std::span<const std::int64_t> samples, std::span<float> gradient)
{
    if (samples.empty())
        throw std::invalid_argument("a training step needs at least one sample");
    const auto parameters = static_cast<std::size_t>(pass_.shape().parameter_count());
    if (gradient.size() != parameters)
        throw std::invalid_argument("the gradient buffer has the wrong size");
    if (params.size() != parameters)
        throw std::invalid_argument(
            "expected " + std::to_string(parameters) + " parameters, got " + std::to_string(params.size()));
    for (const std::int64_t sample : samples)
        if (sample < 0 || sample >= samples_)
            throw std::out_of_range("sample " + std::to_string(sample) + " is not in the resident training set of "
                + std::to_string(samples_));
    const int batch = static_cast<int>(samples.size());

    ops_->finish(); // the staging buffers of the last step are free
    const bool gradient_pinned = gradient.data() == pinned_gradient_;
    {
        const std::lock_guard memory(device_memory_mutex());
        if (reserve_step(batch))
            ops_->drop_graphs();
        if (!gradient_pinned) // no graph uses it: the gradient's copy is queued around them
            staged_gradient_.reserve(parameters);
    }
    // Buffers the caller pinned are copied from and to directly; others through Staging memory.
    const float* params_from = params.data() == pinned_params_ ? pinned_params_ : staged_params_.data();
    float* gradient_to = gradient_pinned ? pinned_gradient_ : staged_gradient_.data();
    if (params_from != params.data())
        std::memcpy(staged_params_.data(), params.data(), params.size_bytes());
    std::memcpy(staged_samples_.data(), samples.data(), samples.size_bytes());
    const auto queue_copies_and_step = [&] {
        ops_->copy_in(params_.data(), params_from, params.size_bytes());
        if (!ops_->replay(batch))
            queue_step(batch);
        ops_->copy_out(gradient_to, gradient_.data(), gradient.size_bytes());
    };
    // The step's very first run sets cuBLAS up and loads kernels, untimed: on an H100 it took
    // 30 times a step, and a policy that reads it (LB-BSP Algorithm 2 keeps who led) is
    // misled for the rest of the job.
    if (steps_run_++ == 0) {
        queue_copies_and_step();
        ops_->finish();
    }
    // A launch-bound step (small batches) pays one graph launch instead of a dozen kernel
    // launches. A batch size is captured at its first step, before the timing starts: a
    // policy that moves samples meets new sizes all along, and eager first steps at new
    // sizes timed 3 to 5 times their batch's time on an H100, which made the fastest worker
    // look like the straggler (docs/gpu.md).
    if (ops_->can_capture() && !ops_->has_graph(batch) && !uncapturable_.contains(batch))
        capture(batch);
    ops_->start_timing();
    queue_copies_and_step();
    ops_->finish();
    last_seconds_ = ops_->timed_seconds();
    if (gradient_to != gradient.data())
        std::memcpy(gradient.data(), staged_gradient_.data(), gradient.size_bytes());
    return staged_results_.data()[0];
}

void ResidentStep::capture(int batch)
{
    const std::lock_guard memory(device_memory_mutex());
    bool recorded = false;
    try {
        ops_->begin_capture();
        queue_step(batch);
        recorded = ops_->end_capture(batch);
    } catch (const DeviceError&) { // the capture ends with the step, and no half-recorded graph stays
        if (ops_->end_capture(batch))
            ops_->drop_graphs();
    } catch (...) { // not the device's refusal: a bug, reported as it is
        if (ops_->end_capture(batch))
            ops_->drop_graphs();
        throw;
    }
    if (!recorded) // this size runs without a graph from now on; the job goes on
        uncapturable_.insert(batch);
}

void ResidentStep::release_batch_buffers() noexcept
{
    pass_.release_buffers();
    features_.clear();
    labels_.clear();
    samples_in_.clear();
}

bool ResidentStep::batch_fits(std::int32_t batch)
{
    release_batch_buffers();
    bool fits = true;
    try {
        const auto samples = static_cast<std::size_t>(batch);
        samples_in_.reserve(samples);
        labels_.reserve(samples);
        features_.reserve(static_cast<std::size_t>(pass_.shape().input_dim()) * samples);
        pass_.reserve(batch);
    } catch (const OutOfDeviceMemory&) {
        fits = false;
    }
    release_batch_buffers();
    return fits;
}

std::int32_t ResidentStep::probe_batch_limit(std::int32_t cap)
{
    ops_->finish(); // nothing queued still uses the buffers given back
    const std::lock_guard memory(device_memory_mutex());
    ops_->drop_graphs(); // they would use them
    if (cap < 1 || !batch_fits(1))
        return 0;
    std::int32_t fits = cap;
    if (!batch_fits(cap)) {
        fits = 1;
        std::int32_t does_not = cap; // bisect: fits < x_o + 1 <= does_not
        while (does_not - fits > 1) {
            const std::int32_t middle = fits + (does_not - fits) / 2;
            (batch_fits(middle) ? fits : does_not) = middle;
        }
    }
    // The buffers go back: workers sharing a device probe one after another, and buffers
    // kept at each one's x_o would leave the next less room (or none). They grow with the
    // batches the worker runs, under the lock, so no growth frees one mid-capture.
    release_batch_buffers();
    return fits;
}

GpuUse gpu_use(const DeviceReading& reading)
{
    GpuUse use;
    use.memory_gb = static_cast<double>(reading.own_bytes) / 1e9;
    if (reading.used_bytes && reading.total_bytes && *reading.total_bytes > 0)
        use.memory_share = static_cast<double>(*reading.used_bytes) / static_cast<double>(*reading.total_bytes);
    use.utilization = reading.utilization;
    return use;
}

ResidentStep::Evaluation ResidentStep::evaluate(std::span<const float> params, std::int64_t chunk)
{
    ops_->finish();
    pull(params);
    Evaluation total;
    std::vector<std::int64_t> indices(static_cast<std::size_t>(std::min(chunk, samples_)));
    for (std::int64_t begin = 0; begin < samples_; begin += chunk) {
        const std::int64_t count = std::min(chunk, samples_ - begin);
        std::iota(indices.begin(), indices.begin() + count, begin);
        ops_->finish();
        gather(std::span<const std::int64_t>(indices.data(), static_cast<std::size_t>(count)));
        pass_.evaluate(params_.data(), features_.data(), labels_.data(), static_cast<int>(count), results_.data(),
            results_.data() + 1);
        ops_->copy_out(staged_results_.data(), results_.data(), 2 * sizeof(float));
        ops_->finish();
        total.loss += static_cast<double>(staged_results_.data()[0]) * static_cast<double>(count);
        total.accuracy += static_cast<double>(staged_results_.data()[1]) * static_cast<double>(count);
    }
    if (samples_ > 0) {
        total.loss /= static_cast<double>(samples_);
        total.accuracy /= static_cast<double>(samples_);
    }
    return total;
}

} // namespace fulcrum::gpu
