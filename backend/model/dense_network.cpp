#include "model/dense_network.h"

#include "common/product_blocking.h"
#include "common/random.h"

#include <cmath>

namespace fulcrum::model {

DenseNetwork::DenseNetwork(std::string name, std::vector<Eigen::Index> layer_sizes, LossHead head)
    : name_(std::move(name))
    , sizes_(std::move(layer_sizes))
    , head_(head)
    , activations_(sizes_.size() - 1)
{
    pin_product_blocking(); // the same rounding on every CPU
    for (std::size_t l = 0; l < layers(); ++l) {
        offsets_.push_back(parameter_count_);
        parameter_count_ += sizes_[l + 1] * sizes_[l] + sizes_[l + 1];
    }
}

void DenseNetwork::initialize(GradView params, std::uint64_t seed) const
{
    Rng rng = make_rng(seed, Stream::ModelInit);
    params.setZero();
    for (std::size_t l = 0; l < layers(); ++l) {
        // He initialisation for layers feeding a ReLU, Glorot-like 1/fan_in for the scores.
        const bool feeds_relu = l + 1 < layers();
        const double stddev = std::sqrt((feeds_relu ? 2.0 : 1.0) / static_cast<double>(sizes_[l]));
        const Eigen::Index weights = sizes_[l + 1] * sizes_[l];
        for (Eigen::Index k = 0; k < weights; ++k)
            params(offsets_[l] + k) = static_cast<float>(stddev * standard_normal(rng));
    }
}

const Eigen::MatrixXf& DenseNetwork::forward(ParamsView params, const Eigen::MatrixXf& features)
{
    const Eigen::MatrixXf* input = &features;
    for (std::size_t l = 0; l < layers(); ++l) {
        const Eigen::Index out = sizes_[l + 1], in = sizes_[l];
        const Eigen::Map<const Eigen::MatrixXf> weights(params.data() + offsets_[l], out, in);
        const Eigen::Map<const Eigen::VectorXf> bias(params.data() + offsets_[l] + out * in, out);
        Eigen::MatrixXf& z = activations_[l];
        z.resize(out, input->cols());
        z.noalias() = weights * *input;
        z.colwise() += bias;
        if (l + 1 < layers())
            z = z.cwiseMax(0.0f);
        input = &z;
    }
    return activations_.back();
}

double DenseNetwork::loss_and_gradient(
    ParamsView params, const Eigen::MatrixXf& features, std::span<const std::int32_t> labels, GradView gradient)
{
    const Eigen::MatrixXf& top = forward(params, features);
    const double loss = head_loss(head_, top, labels, &delta_);

    // Backpropagation, top layer first; delta_ holds d(loss)/d(pre-activation) of layer l.
    for (std::size_t l = layers(); l-- > 0;) {
        const Eigen::Index out = sizes_[l + 1], in = sizes_[l];
        const Eigen::MatrixXf& below = l == 0 ? features : activations_[l - 1];
        Eigen::Map<Eigen::MatrixXf> grad_weights(gradient.data() + offsets_[l], out, in);
        Eigen::Map<Eigen::VectorXf> grad_bias(gradient.data() + offsets_[l] + out * in, out);
        grad_weights.noalias() = delta_ * below.transpose();
        grad_bias = delta_.rowwise().sum();
        if (l == 0)
            break;
        const Eigen::Map<const Eigen::MatrixXf> weights(params.data() + offsets_[l], out, in);
        delta_below_.resize(in, delta_.cols());
        delta_below_.noalias() = weights.transpose() * delta_;
        // ReLU derivative: activations below are post-ReLU, so > 0 exactly where the unit was active.
        delta_below_.array() *= (below.array() > 0.0f).cast<float>();
        delta_.swap(delta_below_);
    }
    return loss;
}

void DenseNetwork::scores(ParamsView params, const Eigen::MatrixXf& features, Eigen::MatrixXf& out)
{
    out = forward(params, features);
}

double DenseNetwork::loss_from_scores(const Eigen::MatrixXf& scores, std::span<const std::int32_t> labels) const
{
    return head_loss(head_, scores, labels, nullptr);
}

double DenseNetwork::flops_per_sample() const
{
    // Forward: one multiply-add per weight. Backward: weight gradients (one per weight) and
    // input gradients for every layer except the first. Two flops per multiply-add.
    double forward = 0, backward = 0;
    for (std::size_t l = 0; l < layers(); ++l) {
        const double weights = static_cast<double>(sizes_[l] * sizes_[l + 1]);
        forward += weights;
        backward += weights * (l == 0 ? 1.0 : 2.0);
    }
    return 2.0 * (forward + backward);
}

std::unique_ptr<Model> DenseNetwork::clone() const
{
    return std::make_unique<DenseNetwork>(name_, sizes_, head_);
}

} // namespace fulcrum::model
