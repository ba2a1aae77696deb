#include "ps/parameter_server.h"

namespace fulcrum::ps {

ParameterServer::ParameterServer(const Eigen::VectorXf& initial, int shards, OptimizerSpec optimizer,
                                 Aggregation aggregation)
    : count_(initial.size())
    , optimizer_(optimizer)
    , aggregation_(aggregation)
{
    for (const KeyRange& range : split_key_ranges(initial.size(), shards))
        shards_.emplace_back(range, initial);
}

void ParameterServer::pull(Eigen::Ref<Eigen::VectorXf> replica) const
{
    for (const auto& shard : shards_)
        shard.pull_into(replica);
}

void ParameterServer::apply_barrier(std::span<const GradientPush> pushes, float step_scale)
{
    OptimizerSpec step = optimizer_;
    step.learning_rate *= step_scale;
    for (auto& shard : shards_)
        shard.apply(pushes, aggregation_, step);
    ++version_;
}

Eigen::VectorXf ParameterServer::parameters() const
{
    Eigen::VectorXf all(count_);
    pull(all);
    return all;
}

} // namespace fulcrum::ps
