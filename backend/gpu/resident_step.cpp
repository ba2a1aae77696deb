#include "gpu/resident_step.h"

#include "gpu/device_error.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>

namespace fulcrum::gpu {

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
    staged_gradient_.reserve(parameters);
    results_.reserve(2);
    staged_results_.reserve(2);
}

ResidentStep::~ResidentStep()
{
    try {
        ops_->finish();
    } catch (...) { // NOLINT(bugprone-empty-catch): a failed device is released regardless
    }
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
    if (reserve_step(static_cast<int>(samples.size())))
        ops_->drop_graphs();
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
    const auto parameters = static_cast<std::size_t>(s.parameter_count());
    const auto samples = static_cast<std::size_t>(batch);
    ops_->copy_in(params_.data(), staged_params_.data(), parameters * sizeof(float));
    ops_->copy_in(samples_in_.data(), staged_samples_.data(), samples * sizeof(std::int64_t));
    ops_->gather_samples(dataset_.data(), dataset_labels_.data(), static_cast<int>(s.input_dim()), samples_in_.data(),
        batch, features_.data(), labels_.data());
    pass_.loss_and_gradient(params_.data(), features_.data(), labels_.data(), batch, gradient_.data(), results_.data());
    ops_->copy_out(staged_gradient_.data(), gradient_.data(), parameters * sizeof(float));
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
    if (reserve_step(batch))
        ops_->drop_graphs();
    std::memcpy(staged_params_.data(), params.data(), params.size_bytes());
    std::memcpy(staged_samples_.data(), samples.data(), samples.size_bytes());
    ops_->start_timing();
    // A launch-bound step (small batches) pays one graph launch instead of a dozen kernel
    // launches: each batch size runs once eagerly (cuBLAS sets itself up), then is captured
    // and replayed from then on.
    if (!ops_->replay(batch)) {
        const bool capture = ops_->can_capture() && ++eager_steps_[batch] > 1;
        if (!capture) {
            queue_step(batch);
        } else {
            ops_->begin_capture();
            try {
                queue_step(batch);
            } catch (...) { // the capture ends with the step, and no half-recorded graph stays
                try {
                    ops_->end_capture(batch);
                } catch (...) { // NOLINT(bugprone-empty-catch): the first failure is the one to report
                }
                ops_->drop_graphs();
                throw;
            }
            ops_->end_capture(batch);
            ops_->replay(batch);
        }
    }
    ops_->finish();
    last_seconds_ = ops_->timed_seconds();
    std::memcpy(gradient.data(), staged_gradient_.data(), gradient.size_bytes());
    return staged_results_.data()[0];
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
    ops_->drop_graphs(); // they would use them
    if (cap < 1 || !batch_fits(1))
        return 0;
    if (batch_fits(cap))
        return cap;
    std::int32_t fits = 1, does_not = cap; // bisect: fits < x_o + 1 <= does_not
    while (does_not - fits > 1) {
        const std::int32_t middle = fits + (does_not - fits) / 2;
        (batch_fits(middle) ? fits : does_not) = middle;
    }
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
