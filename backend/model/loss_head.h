#pragma once

#include "common/eigen_core.h"

#include <cstdint>
#include <span>

namespace fulcrum::model {

// The output layer's loss: turns class scores into a mean loss and its gradient
// with respect to the scores.
enum class LossHead {
    SoftmaxCrossEntropy, // multinomial logistic
    MulticlassHinge, // Crammer-Singer: max(0, 1 + max_{j != y} s_j - s_y)
};

// Returns the mean loss; if `grad` is non-null it receives d(mean loss)/d(scores).
double head_loss(
    LossHead head, const Eigen::MatrixXf& scores, std::span<const std::int32_t> labels, Eigen::MatrixXf* grad);

} // namespace fulcrum::model
