#include "model/loss_head.h"

#include <cmath>

namespace fulcrum::model {

namespace {

double softmax_cross_entropy(const Eigen::MatrixXf& scores, std::span<const std::int32_t> labels, Eigen::MatrixXf* grad)
{
    const Eigen::Index batch = scores.cols();
    double total = 0;
    if (grad)
        grad->resize(scores.rows(), batch);
    const float inv_batch = 1.0f / static_cast<float>(batch);
    for (Eigen::Index j = 0; j < batch; ++j) {
        const auto column = scores.col(j);
        const float top = column.maxCoeff();
        // Shift by the max so exp never overflows; the log-sum-exp stays exact.
        const float sum = (column.array() - top).exp().sum();
        const float log_sum = std::log(sum) + top;
        const auto y = static_cast<Eigen::Index>(labels[static_cast<std::size_t>(j)]);
        total += static_cast<double>(log_sum - column(y));
        if (grad) {
            grad->col(j) = ((column.array() - log_sum).exp() * inv_batch).matrix();
            (*grad)(y, j) -= inv_batch;
        }
    }
    return total / static_cast<double>(batch);
}

double multiclass_hinge(const Eigen::MatrixXf& scores, std::span<const std::int32_t> labels, Eigen::MatrixXf* grad)
{
    const Eigen::Index batch = scores.cols();
    double total = 0;
    if (grad)
        grad->setZero(scores.rows(), batch);
    const float inv_batch = 1.0f / static_cast<float>(batch);
    for (Eigen::Index j = 0; j < batch; ++j) {
        const auto y = static_cast<Eigen::Index>(labels[static_cast<std::size_t>(j)]);
        Eigen::Index rival = -1;
        float rival_score = -INFINITY;
        for (Eigen::Index c = 0; c < scores.rows(); ++c)
            if (c != y && scores(c, j) > rival_score) {
                rival_score = scores(c, j);
                rival = c;
            }
        const float margin = 1.0f + rival_score - scores(y, j);
        if (margin > 0) {
            total += margin;
            if (grad) {
                (*grad)(rival, j) += inv_batch;
                (*grad)(y, j) -= inv_batch;
            }
        }
    }
    return total / static_cast<double>(batch);
}

} // namespace

double head_loss(
    LossHead head, const Eigen::MatrixXf& scores, std::span<const std::int32_t> labels, Eigen::MatrixXf* grad)
{
    switch (head) {
    case LossHead::SoftmaxCrossEntropy:
        return softmax_cross_entropy(scores, labels, grad);
    case LossHead::MulticlassHinge:
        return multiclass_hinge(scores, labels, grad);
    }
    return 0;
}

} // namespace fulcrum::model
