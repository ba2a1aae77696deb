#pragma once

#include "common/eigen_core.h"
#include "common/state_archive.h"

#include <cstdint>
#include <string>

namespace fulcrum::predict {

// The NARX look-back window (LB-BSP Sec. 4.1): the last `speed_lags` speeds and the current
// plus `resource_lags` past CPU and memory shares. Defaults give the paper's
// (v^{k-1}, v^{k-2}, c^k, c^{k-1}, c^{k-2}, m^k, m^{k-1}, m^{k-2}).
struct NarxShape {
    int speed_lags = 2;
    int resource_lags = 2;
    int hidden = 10;
    int inputs() const { return speed_lags + 2 * (resource_lags + 1); }
    bool operator==(const NarxShape&) const = default;
};

struct NarxTraining {
    int max_epochs = 400;
    int patience = 25; // early stopping: epochs without a better validation error
    double learning_rate = 0.01; // Adam
    double validation_fraction = 0.2; // every fifth sample, held out for early stopping
};

struct NarxTrainReport {
    int epochs = 0;
    double train_rmse = 0;
    double validation_rmse = 0;
    bool stopped_early = false;
};

// The feed-forward part of NARX: one tanh hidden layer and a linear output, trained on
// normalised speeds. Plain Eigen; small enough that inference is a few hundred flops.
class NarxNetwork {
public:
    NarxNetwork() = default;
    NarxNetwork(NarxShape shape, std::uint64_t seed);

    const NarxShape& shape() const { return shape_; }
    const Eigen::MatrixXd& input_weights() const { return w1_; } // hidden x inputs
    const Eigen::VectorXd& hidden_bias() const { return b1_; }
    const Eigen::VectorXd& output_weights() const { return w2_; }
    double output_bias() const { return b2_; }
    double forward(const Eigen::Ref<const Eigen::VectorXd>& input) const;
    // The same network in single precision with Eigen's vectorised tanh and no allocation
    // (the scratch is the caller's): the per-barrier path, which runs once per worker.
    float infer(const Eigen::Ref<const Eigen::VectorXf>& input, Eigen::VectorXf& hidden) const;

    // inputs: one column per sample (shape().inputs() rows), targets: one per column, in time
    // order (validation takes the tail). Keeps the weights of the best validation epoch.
    NarxTrainReport train(const Eigen::MatrixXd& inputs, const Eigen::VectorXd& targets, const NarxTraining& options);

    // A text form for warm starts from an earlier run's model.
    std::string serialize() const;
    // Throws std::invalid_argument on malformed text.
    static NarxNetwork deserialize(const std::string& text);
    // A checkpoint: the shape and every weight, bit for bit.
    void save_state(StateWriter& out) const;
    static NarxNetwork load_state(StateReader& in);

private:
    void refresh_single_precision();

    NarxShape shape_;
    Eigen::VectorXf packed_; // the single-precision copy infer() reads
    Eigen::MatrixXd w1_; // hidden x inputs
    Eigen::VectorXd b1_;
    Eigen::VectorXd w2_; // hidden
    double b2_ = 0;
};

} // namespace fulcrum::predict
