#pragma once

#include "ps/gradient.h"
#include "ps/key_range.h"

#include <span>

namespace fulcrum::ps {

// One parameter-server shard: owns the parameters (and optimizer state) of its key range.
class ServerShard {
public:
    ServerShard(KeyRange range, Eigen::Ref<const Eigen::VectorXf> initial);

    const KeyRange& range() const { return range_; }

    // Copies this shard's parameters into the same range of a worker's full replica.
    void pull_into(Eigen::Ref<Eigen::VectorXf> replica) const;

    // Aggregates the pushes (eq. 7 or eq. 5) and applies one SGD step to the range.
    void apply(std::span<const GradientPush> pushes, Aggregation aggregation, const OptimizerSpec& optimizer);

    const Eigen::VectorXf& parameters() const { return parameters_; }

private:
    KeyRange range_;
    Eigen::VectorXf parameters_;
    Eigen::VectorXf velocity_;
    Eigen::VectorXf aggregate_;
};

} // namespace fulcrum::ps
