#pragma once

// Free of Eigen, so that CUDA sources can name the head too.
namespace fulcrum::model {

// The output layer's loss: turns class scores into a mean loss and its gradient
// with respect to the scores.
enum class LossHead {
    SoftmaxCrossEntropy, // multinomial logistic
    MulticlassHinge, // Crammer-Singer: max(0, 1 + max_{j != y} s_j - s_y)
};

} // namespace fulcrum::model
