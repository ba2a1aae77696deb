#include "ps/server_shard.h"

#include <algorithm>
#include <stdexcept>

namespace fulcrum::ps {

ServerShard::ServerShard(KeyRange range, Eigen::Ref<const Eigen::VectorXf> initial)
{
    slices_.push_back({ range, initial.segment(range.begin, range.size()), Eigen::VectorXf::Zero(range.size()) });
    aggregate_.resize(range.size());
}

ServerShard::ServerShard(std::vector<ShardSlice> slices)
{
    adopt(std::move(slices));
}

std::vector<KeyRange> ServerShard::ranges() const
{
    std::vector<KeyRange> out;
    for (const auto& s : slices_)
        out.push_back(s.range);
    return out;
}

Eigen::Index ServerShard::key_count() const
{
    Eigen::Index keys = 0;
    for (const auto& s : slices_)
        keys += s.range.size();
    return keys;
}

void ServerShard::pull_into(Eigen::Ref<Eigen::VectorXf> replica) const
{
    for (const auto& s : slices_)
        replica.segment(s.range.begin, s.range.size()) = s.parameters;
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

    // Every operation is element-wise, so the result for a key does not depend on which
    // slice holds it: re-sharding cannot change a single bit of the model.
    for (ShardSlice& s : slices_) {
        auto aggregate = aggregate_.head(s.range.size());
        aggregate.setZero();
        for (const auto& push : pushes) {
            const float weight = aggregation == Aggregation::Weighted
                ? static_cast<float>(push.batch_size) / static_cast<float>(total)
                : 1.0f / static_cast<float>(pushes.size());
            aggregate += weight * Eigen::Map<const Eigen::VectorXf>(push.gradient + s.range.begin, s.range.size());
        }
        if (optimizer.weight_decay != 0.0f)
            aggregate += optimizer.weight_decay * s.parameters;
        if (optimizer.momentum != 0.0f) {
            s.velocity = optimizer.momentum * s.velocity + aggregate;
            s.parameters -= optimizer.learning_rate * s.velocity;
        } else {
            s.parameters -= optimizer.learning_rate * aggregate;
        }
    }
}

std::vector<ShardSlice> ServerShard::release(Eigen::Index keys)
{
    if (keys < 0 || keys > key_count())
        throw std::invalid_argument("a shard cannot release more keys than it owns");
    std::vector<ShardSlice> out;
    while (keys > 0) {
        ShardSlice& last = slices_.back();
        const Eigen::Index take = std::min(keys, last.range.size());
        if (take == last.range.size()) {
            out.push_back(std::move(last));
            slices_.pop_back();
        } else {
            const Eigen::Index keep = last.range.size() - take;
            out.push_back(
                { { last.range.end - take, last.range.end }, last.parameters.tail(take), last.velocity.tail(take) });
            last.range.end -= take;
            last.parameters.conservativeResize(keep);
            last.velocity.conservativeResize(keep);
        }
        keys -= take;
    }
    std::reverse(out.begin(), out.end()); // key order
    return out;
}

void ServerShard::adopt(std::vector<ShardSlice> slices)
{
    for (ShardSlice& s : slices)
        if (s.range.size() > 0)
            slices_.push_back(std::move(s));
    std::sort(slices_.begin(), slices_.end(),
        [](const ShardSlice& a, const ShardSlice& b) { return a.range.begin < b.range.begin; });
    // Adjacent slices merge back into one range, so a shard that gets its keys back is as
    // it was.
    std::vector<ShardSlice> merged;
    for (ShardSlice& s : slices_) {
        if (!merged.empty() && merged.back().range.end == s.range.begin) {
            ShardSlice& m = merged.back();
            const Eigen::Index before = m.range.size();
            m.parameters.conservativeResize(before + s.range.size());
            m.parameters.tail(s.range.size()) = s.parameters;
            m.velocity.conservativeResize(before + s.range.size());
            m.velocity.tail(s.range.size()) = s.velocity;
            m.range.end = s.range.end;
        } else {
            merged.push_back(std::move(s));
        }
    }
    slices_ = std::move(merged);
    Eigen::Index longest = 0;
    for (const auto& s : slices_)
        longest = std::max(longest, s.range.size());
    aggregate_.resize(longest);
}

void ServerShard::save_state(StateWriter& out) const
{
    out.put(static_cast<std::uint64_t>(slices_.size()));
    for (const ShardSlice& slice : slices_) {
        out.put(static_cast<std::int64_t>(slice.range.begin));
        out.put(static_cast<std::int64_t>(slice.range.end));
        out.put_array(slice.parameters.data(), static_cast<std::size_t>(slice.parameters.size()));
        out.put_array(slice.velocity.data(), static_cast<std::size_t>(slice.velocity.size()));
    }
}

ServerShard ServerShard::load_state(StateReader& in)
{
    std::vector<ShardSlice> slices(in.array_size("shard slices", 1));
    for (ShardSlice& slice : slices) {
        slice.range.begin = static_cast<Eigen::Index>(in.get<std::int64_t>("slice range"));
        slice.range.end = static_cast<Eigen::Index>(in.get<std::int64_t>("slice range"));
        if (slice.range.begin < 0 || slice.range.end < slice.range.begin)
            in.fail("slice range", "is not a key range");
        slice.parameters.resize(slice.range.size());
        slice.velocity.resize(slice.range.size());
        in.get_array(slice.parameters.data(), static_cast<std::size_t>(slice.range.size()), "slice parameters");
        in.get_array(slice.velocity.data(), static_cast<std::size_t>(slice.range.size()), "slice optimizer state");
    }
    if (slices.empty())
        in.fail("shard slices", "a shard owns at least one key range");
    return ServerShard(std::move(slices));
}

} // namespace fulcrum::ps
