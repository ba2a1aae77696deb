#pragma once

#include "gpu/dense_ops.h"

#include <cstdint>
#include <vector>

namespace fulcrum::gpu {

// A DenseNetwork's shape: layer sizes (input, hidden..., classes) and its loss head. The
// parameter layout is DenseNetwork's: layer by layer, W (out x in, column-major) then b.
struct NetworkShape {
    std::vector<std::int64_t> layer_sizes;
    model::LossHead head = model::LossHead::SoftmaxCrossEntropy;

    std::size_t layers() const { return layer_sizes.size() - 1; }
    std::int64_t input_dim() const { return layer_sizes.front(); }
    int classes() const { return static_cast<int>(layer_sizes.back()); }
    std::int64_t parameter_count() const;
    // Where layer l's W starts in the flat parameter vector.
    std::int64_t weights_offset(std::size_t layer) const;
};

// DenseNetwork's forward pass, loss head and backpropagation, written as DenseOps over
// buffers in the ops' Compute memory: the GPU's, or the host's in the reference.
class DensePass {
public:
    DensePass(DenseOps& ops, NetworkShape shape);

    // One batch (features: input_dim x batch): writes the mean gradient over the batch and,
    // in *loss (one float), the mean loss. Queued; read after ops.finish().
    void loss_and_gradient(const float* params, const float* features, const std::int32_t* labels, int batch,
        float* gradient, float* loss);
    // The batch's mean loss and the share it classifies right, each one float. Queued.
    void evaluate(const float* params, const float* features, const std::int32_t* labels, int batch, float* loss,
        float* accuracy);

    // Allocates now every buffer a batch of `batch` needs (OutOfDeviceMemory where they do
    // not fit), or gives them all back. True where a buffer moved.
    bool reserve(int batch);
    void release_buffers() noexcept;

    const NetworkShape& shape() const { return shape_; }

private:
    const float* forward(const float* params, const float* features, int batch);

    DenseOps& ops_;
    NetworkShape shape_;
    std::vector<OpsBuffer<float>> activations_; // per layer, after ReLU below the top
    OpsBuffer<float> delta_;
    OpsBuffer<float> delta_below_;
    OpsBuffer<float> per_sample_;
};

} // namespace fulcrum::gpu
