#include "ps/parameter_server.h"

#include <stdexcept>
#include <string>

namespace fulcrum::ps {

ParameterServer::ParameterServer(
    const Eigen::VectorXf& initial, int shards, OptimizerSpec optimizer, Aggregation aggregation)
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

ReshardReport ParameterServer::add_shard()
{
    const int after = static_cast<int>(shards_.size()) + 1;
    if (after > count_)
        throw std::invalid_argument("cannot add server " + std::to_string(after) + ": the model has only "
            + std::to_string(count_) + " parameters");
    const std::vector<KeyRange> balanced = split_key_ranges(count_, after);
    std::vector<ShardSlice> moved;
    ReshardReport report;
    for (std::size_t s = 0; s < shards_.size(); ++s) {
        const Eigen::Index surplus = shards_[s].key_count() - balanced[s].size();
        if (surplus <= 0)
            continue;
        for (ShardSlice& slice : shards_[s].release(surplus))
            moved.push_back(std::move(slice));
        report.moved_keys += surplus;
    }
    shards_.emplace_back(std::move(moved));
    ++layout_version_;
    report.shards = after;
    return report;
}

ReshardReport ParameterServer::remove_shard(int index)
{
    if (index < 0 || index >= static_cast<int>(shards_.size()))
        throw std::invalid_argument(
            "server " + std::to_string(index) + " does not exist (the job has " + std::to_string(shards_.size()) + ")");
    if (shards_.size() == 1)
        throw std::invalid_argument("cannot remove the last server of a job");
    ServerShard leaving = std::move(shards_[static_cast<std::size_t>(index)]);
    shards_.erase(shards_.begin() + index);
    const std::vector<KeyRange> balanced = split_key_ranges(count_, static_cast<int>(shards_.size()));
    ReshardReport report;
    report.moved_keys = leaving.key_count();
    // Hand out from the leaving shard's tail; the last receiver takes whatever is left, so
    // every key lands somewhere even when the others were unbalanced.
    for (std::size_t s = shards_.size(); s-- > 0;) {
        const Eigen::Index room = s == 0
            ? leaving.key_count()
            : std::min(leaving.key_count(), std::max<Eigen::Index>(0, balanced[s].size() - shards_[s].key_count()));
        if (room > 0)
            shards_[s].adopt(leaving.release(room));
    }
    ++layout_version_;
    report.shards = static_cast<int>(shards_.size());
    return report;
}

Eigen::VectorXf ParameterServer::parameters() const
{
    Eigen::VectorXf all(count_);
    pull(all);
    return all;
}

void ParameterServer::save_state(StateWriter& out) const
{
    out.put(static_cast<std::uint64_t>(shards_.size()));
    for (const ServerShard& shard : shards_)
        shard.save_state(out);
    out.put(version_);
    out.put(layout_version_);
}

void ParameterServer::load_state(StateReader& in)
{
    std::vector<ServerShard> shards;
    const std::size_t n = in.array_size("server shards", 1);
    Eigen::Index keys = 0;
    for (std::size_t i = 0; i < n; ++i) {
        shards.push_back(ServerShard::load_state(in));
        keys += shards.back().key_count();
    }
    if (keys != count_)
        in.fail(
            "server shards", "hold " + std::to_string(keys) + " keys; this job's model has " + std::to_string(count_));
    shards_ = std::move(shards);
    version_ = in.get<std::int64_t>("server version");
    layout_version_ = in.get<std::int64_t>("server layout version");
}

} // namespace fulcrum::ps
