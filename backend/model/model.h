#pragma once

#include "common/eigen_core.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace fulcrum::model {

using Vector = Eigen::VectorXf;
using ParamsView = Eigen::Ref<const Vector>;
using GradView = Eigen::Ref<Vector>;

// A trainable model over a flat parameter vector. The parameter server shards that vector
// by key range; the model only maps it. An instance owns scratch buffers, so each worker
// holds its own clone().
class Model {
public:
    virtual ~Model() = default;

    virtual std::string name() const = 0;
    virtual Eigen::Index parameter_count() const = 0;
    virtual Eigen::Index input_dim() const = 0;
    virtual int classes() const = 0;
    virtual void initialize(GradView params, std::uint64_t seed) const = 0;

    // Mean loss over the batch (features: dim x batch); writes the mean gradient.
    virtual double loss_and_gradient(
        ParamsView params, const Eigen::MatrixXf& features, std::span<const std::int32_t> labels, GradView gradient)
        = 0;

    // Class scores for a batch (classes x batch) and the mean loss on them.
    virtual void scores(ParamsView params, const Eigen::MatrixXf& features, Eigen::MatrixXf& out) = 0;
    virtual double loss_from_scores(const Eigen::MatrixXf& scores, std::span<const std::int32_t> labels) const = 0;

    // Multiply-adds of one forward and backward pass per sample (for throughput reports).
    virtual double flops_per_sample() const = 0;

    virtual std::unique_ptr<Model> clone() const = 0;
};

} // namespace fulcrum::model
