#include "ps/server_shard.h"

#include <stdexcept>

namespace fulcrum::ps {

ServerShard::ServerShard(KeyRange range, Eigen::Ref<const Eigen::VectorXf> initial)
    : range_(range)
    , parameters_(initial.segment(range.begin, range.size()))
    , velocity_(Eigen::VectorXf::Zero(range.size()))
    , aggregate_(range.size())
{
}

void ServerShard::pull_into(Eigen::Ref<Eigen::VectorXf> replica) const
{
    replica.segment(range_.begin, range_.size()) = parameters_;
}

void ServerShard::apply(std::span<const GradientPush> pushes, Aggregation aggregation, const OptimizerSpec& optimizer)
{
    if (pushes.empty())
        return;
    std::int64_t total = 0;
    for (const auto& push : pushes)
        total += push.batch_size;
    if (total <= 0)
        throw std::invalid_argument("a barrier with no samples cannot be aggregated");

    aggregate_.setZero();
    for (const auto& push : pushes) {
        const float weight = aggregation == Aggregation::Weighted
            ? static_cast<float>(push.batch_size) / static_cast<float>(total)
            : 1.0f / static_cast<float>(pushes.size());
        aggregate_ += weight * Eigen::Map<const Eigen::VectorXf>(push.gradient + range_.begin, range_.size());
    }
    if (optimizer.weight_decay != 0.0f)
        aggregate_ += optimizer.weight_decay * parameters_;
    if (optimizer.momentum != 0.0f) {
        velocity_ = optimizer.momentum * velocity_ + aggregate_;
        parameters_ -= optimizer.learning_rate * velocity_;
    } else {
        parameters_ -= optimizer.learning_rate * aggregate_;
    }
}

} // namespace fulcrum::ps
