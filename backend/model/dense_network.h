#pragma once

#include "model/loss_head.h"
#include "model/model.h"

#include <vector>

namespace fulcrum::model {

// Fully connected layers with ReLU between them and a loss head on top. With no hidden
// layers it is a linear model: softmax regression (cross-entropy head) or a multi-class
// linear SVM (hinge head); with hidden layers it is the MLP.
// Parameter layout, layer by layer: W (out x in, column-major) then b (out).
class DenseNetwork final : public Model {
public:
    DenseNetwork(std::string name, std::vector<Eigen::Index> layer_sizes, LossHead head);

    std::string name() const override { return name_; }
    Eigen::Index parameter_count() const override { return parameter_count_; }
    Eigen::Index input_dim() const override { return sizes_.front(); }
    int classes() const override { return static_cast<int>(sizes_.back()); }
    void initialize(GradView params, std::uint64_t seed) const override;
    double loss_and_gradient(ParamsView params, const Eigen::MatrixXf& features, std::span<const std::int32_t> labels,
        GradView gradient) override;
    void scores(ParamsView params, const Eigen::MatrixXf& features, Eigen::MatrixXf& out) override;
    double loss_from_scores(const Eigen::MatrixXf& scores, std::span<const std::int32_t> labels) const override;
    double flops_per_sample() const override;
    std::unique_ptr<Model> clone() const override;

    LossHead head() const { return head_; }
    const std::vector<Eigen::Index>& layer_sizes() const { return sizes_; }

private:
    std::size_t layers() const { return sizes_.size() - 1; }
    const Eigen::MatrixXf& forward(ParamsView params, const Eigen::MatrixXf& features);

    std::string name_;
    std::vector<Eigen::Index> sizes_; // input, hidden..., classes
    std::vector<Eigen::Index> offsets_; // start of each layer's W in the flat vector
    Eigen::Index parameter_count_ = 0;
    LossHead head_;

    // Scratch, reused across calls: activations per layer (post-ReLU), deltas.
    std::vector<Eigen::MatrixXf> activations_;
    Eigen::MatrixXf delta_;
    Eigen::MatrixXf delta_below_;
};

} // namespace fulcrum::model
