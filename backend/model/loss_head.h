#pragma once

#include "common/eigen_core.h"
#include "model/loss_head_kind.h"

#include <cstdint>
#include <span>

namespace fulcrum::model {

// Returns the mean loss; if `grad` is non-null it receives d(mean loss)/d(scores).
double head_loss(
    LossHead head, const Eigen::MatrixXf& scores, std::span<const std::int32_t> labels, Eigen::MatrixXf* grad);

} // namespace fulcrum::model
