#include "gpu/dense_pass.h"

#include <algorithm>
#include <stdexcept>

namespace fulcrum::gpu {

namespace {

int narrow(std::int64_t v)
{
    return static_cast<int>(v);
}

std::size_t elements(std::int64_t rows, int cols)
{
    return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
}

} // namespace

std::int64_t NetworkShape::parameter_count() const
{
    return weights_offset(layers());
}

std::int64_t NetworkShape::weights_offset(std::size_t layer) const
{
    std::int64_t offset = 0;
    for (std::size_t l = 0; l < layer; ++l)
        offset += layer_sizes[l + 1] * layer_sizes[l] + layer_sizes[l + 1];
    return offset;
}

DensePass::DensePass(DenseOps& ops, NetworkShape shape)
    : ops_(ops)
    , shape_(std::move(shape))
    , delta_(ops, Memory::Compute)
    , delta_below_(ops, Memory::Compute)
    , per_sample_(ops, Memory::Compute)
{
    if (shape_.layer_sizes.size() < 2)
        throw std::invalid_argument("a dense network needs an input and an output layer");
    for (std::size_t l = 0; l < shape_.layers(); ++l)
        activations_.emplace_back(ops, Memory::Compute);
}

bool DensePass::reserve(int batch)
{
    bool moved = false;
    const auto grow = [&moved](OpsBuffer<float>& buffer, std::size_t count) {
        const float* before = buffer.data();
        moved = buffer.reserve(count) != before || moved;
    };
    std::int64_t widest = 0;
    for (std::size_t l = 0; l < shape_.layers(); ++l) {
        grow(activations_[l], elements(shape_.layer_sizes[l + 1], batch));
        widest = std::max(widest, shape_.layer_sizes[l + 1]);
    }
    // delta_ and delta_below_ trade places layer by layer: each may hold any layer's.
    for (std::size_t l = 1; l < shape_.layers(); ++l)
        widest = std::max(widest, shape_.layer_sizes[l]);
    grow(delta_, elements(widest, batch));
    grow(delta_below_, elements(widest, batch));
    grow(per_sample_, static_cast<std::size_t>(batch));
    return moved;
}

void DensePass::release_buffers() noexcept
{
    for (OpsBuffer<float>& a : activations_)
        a.clear();
    delta_.clear();
    delta_below_.clear();
    per_sample_.clear();
}

const float* DensePass::forward(const float* params, const float* features, int batch)
{
    const float* input = features;
    for (std::size_t l = 0; l < shape_.layers(); ++l) {
        const std::int64_t out = shape_.layer_sizes[l + 1], in = shape_.layer_sizes[l];
        const float* weights = params + shape_.weights_offset(l);
        const float* bias = weights + out * in;
        float* z = activations_[l].reserve(elements(out, batch));
        ops_.gemm(false, false, narrow(out), batch, narrow(in), weights, narrow(out), input, narrow(in), 0.0f, z,
            narrow(out));
        ops_.add_bias(z, bias, narrow(out), batch, l + 1 < shape_.layers());
        input = z;
    }
    return input;
}

void DensePass::loss_and_gradient(
    const float* params, const float* features, const std::int32_t* labels, int batch, float* gradient, float* loss)
{
    // Every buffer at its full size for this batch, as probe_batch_limit measured it: the
    // step's memory then grows with its batch alone, as Algorithm 2's x_o assumes.
    reserve(batch);
    const float* top = forward(params, features, batch);
    const int classes = shape_.classes();
    float* delta = delta_.reserve(elements(classes, batch));
    float* per_sample = per_sample_.reserve(static_cast<std::size_t>(batch));
    ops_.loss_head(shape_.head, top, labels, classes, batch, delta, per_sample);
    ops_.mean(per_sample, batch, loss);

    // Backpropagation, top layer first; delta_ holds d(loss)/d(pre-activation) of layer l.
    for (std::size_t l = shape_.layers(); l-- > 0;) {
        const std::int64_t out = shape_.layer_sizes[l + 1], in = shape_.layer_sizes[l];
        const float* below = l == 0 ? features : activations_[l - 1].data();
        float* grad_weights = gradient + shape_.weights_offset(l);
        float* grad_bias = grad_weights + out * in;
        ops_.gemm(false, true, narrow(out), narrow(in), batch, delta_.data(), narrow(out), below, narrow(in), 0.0f,
            grad_weights, narrow(out));
        ops_.row_sums(delta_.data(), narrow(out), batch, grad_bias);
        if (l == 0)
            break;
        const float* weights = params + shape_.weights_offset(l);
        float* delta_below = delta_below_.reserve(elements(in, batch));
        ops_.gemm(true, false, narrow(in), batch, narrow(out), weights, narrow(out), delta_.data(), narrow(out), 0.0f,
            delta_below, narrow(in));
        // Activations below are post-ReLU, so > 0 exactly where the unit was active.
        ops_.relu_backward(delta_below, below, static_cast<std::int64_t>(elements(in, batch)));
        delta_.swap(delta_below_);
    }
}

void DensePass::evaluate(
    const float* params, const float* features, const std::int32_t* labels, int batch, float* loss, float* accuracy)
{
    const float* top = forward(params, features, batch);
    float* per_sample = per_sample_.reserve(static_cast<std::size_t>(batch));
    ops_.loss_head(shape_.head, top, labels, shape_.classes(), batch, nullptr, per_sample);
    ops_.mean(per_sample, batch, loss);
    ops_.correct_predictions(top, labels, shape_.classes(), batch, per_sample);
    ops_.mean(per_sample, batch, accuracy);
}

} // namespace fulcrum::gpu
