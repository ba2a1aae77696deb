#pragma once

#include "ps/server_shard.h"

#include <vector>

namespace fulcrum::ps {

// The server side of one job: the flat parameter vector split by key range over shards.
// Workers pull every shard before computing and push one gradient per barrier; the
// transport (in-process here, the network later) never reaches the math.
class ParameterServer {
public:
    ParameterServer(const Eigen::VectorXf& initial, int shards, OptimizerSpec optimizer, Aggregation aggregation);

    void pull(Eigen::Ref<Eigen::VectorXf> replica) const;

    // The BSP barrier: every shard aggregates its range of the pushes and steps. An
    // asynchronous update (ASP, SSP, within an ElasticBSP superstep) is a barrier of one push
    // whose step is scaled by its share of the total batch, so every sample moves the model
    // as far as it would under BSP.
    void apply_barrier(std::span<const GradientPush> pushes, float step_scale = 1.0f);

    Eigen::VectorXf parameters() const;
    Eigen::Index parameter_count() const { return count_; }
    std::int64_t version() const { return version_; }
    const std::vector<ServerShard>& shards() const { return shards_; }
    Aggregation aggregation() const { return aggregation_; }

private:
    Eigen::Index count_;
    std::vector<ServerShard> shards_;
    OptimizerSpec optimizer_;
    Aggregation aggregation_;
    std::int64_t version_ = 0;
};

} // namespace fulcrum::ps
