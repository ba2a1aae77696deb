#pragma once

#include "ps/server_shard.h"

#include <vector>

namespace fulcrum::ps {

// What an Elastic PS server change did: how many keys (with their optimizer state) moved
// between shards, and the server count afterwards.
struct ReshardReport {
    Eigen::Index moved_keys = 0;
    int shards = 0;
};

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

    // Elastic PS, between barriers only. Adding a server moves to it the keys each shard
    // holds above the new balanced share (about count/(S+1) keys in all, the least that
    // balances); removing one hands its keys to the others, filling each up to its new
    // balanced share. Parameters and optimizer state move together, so the next barrier
    // computes exactly what it would have without the change. Removing the last server,
    // or adding more servers than keys, throws std::invalid_argument.
    ReshardReport add_shard();
    ReshardReport remove_shard(int index);

    Eigen::VectorXf parameters() const;
    Eigen::Index parameter_count() const { return count_; }
    std::int64_t version() const { return version_; }
    // Bumped by every server change, so a remote worker knows its server list is stale.
    std::int64_t layout_version() const { return layout_version_; }
    const std::vector<ServerShard>& shards() const { return shards_; }

    // A checkpoint: the shards as they are (an Elastic PS job may have re-sharded), their
    // optimizer state and the versions. Loading checks that the keys cover the same model.
    void save_state(StateWriter& out) const;
    void load_state(StateReader& in);
    Aggregation aggregation() const { return aggregation_; }

private:
    Eigen::Index count_;
    std::vector<ServerShard> shards_;
    OptimizerSpec optimizer_;
    Aggregation aggregation_;
    std::int64_t version_ = 0;
    std::int64_t layout_version_ = 0;
};

} // namespace fulcrum::ps
