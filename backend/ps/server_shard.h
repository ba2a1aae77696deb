#pragma once

#include "common/state_archive.h"
#include "ps/gradient.h"
#include "ps/key_range.h"

#include <span>
#include <vector>

namespace fulcrum::ps {

// A piece of a shard that travels when the server set changes: a key range with its
// parameters and its optimizer state, so a moved key steps exactly as if it had stayed.
struct ShardSlice {
    KeyRange range;
    Eigen::VectorXf parameters;
    Eigen::VectorXf velocity;
};

// One parameter-server shard: owns the parameters (and optimizer state) of its key ranges.
// A shard starts with one contiguous range, as in ps-lite; Elastic PS re-sharding hands
// slices of ranges between shards, so a shard may come to own several.
class ServerShard {
public:
    ServerShard(KeyRange range, Eigen::Ref<const Eigen::VectorXf> initial);
    explicit ServerShard(std::vector<ShardSlice> slices);

    std::vector<KeyRange> ranges() const;
    Eigen::Index key_count() const;

    // Copies this shard's parameters into the same ranges of a worker's full replica.
    void pull_into(Eigen::Ref<Eigen::VectorXf> replica) const;

    // Aggregates the pushes (eq. 7 or eq. 5) and applies one SGD step to every owned key.
    void apply(std::span<const GradientPush> pushes, Aggregation aggregation, const OptimizerSpec& optimizer);

    // Gives up `keys` keys (and their optimizer state) from the end of its ranges.
    std::vector<ShardSlice> release(Eigen::Index keys);
    // Takes ownership of slices released by another shard.
    void adopt(std::vector<ShardSlice> slices);

    // A checkpoint: every slice's range, parameters and optimizer state, bit for bit.
    void save_state(StateWriter& out) const;
    static ServerShard load_state(StateReader& in);

private:
    std::vector<ShardSlice> slices_; // in key order
    Eigen::VectorXf aggregate_; // scratch, as long as the largest slice
};

} // namespace fulcrum::ps
