#include "ps/parameter_server.h"

#include <gtest/gtest.h>
#include <set>

using namespace fulcrum;

namespace {

// Every key in [0, count) is owned by exactly one shard.
void expect_partition(const ps::ParameterServer& server)
{
    std::vector<int> owners(static_cast<std::size_t>(server.parameter_count()), 0);
    for (const auto& shard : server.shards())
        for (const ps::KeyRange& r : shard.ranges())
            for (Eigen::Index k = r.begin; k < r.end; ++k)
                owners[static_cast<std::size_t>(k)] += 1;
    for (std::size_t k = 0; k < owners.size(); ++k)
        ASSERT_EQ(owners[k], 1) << "key " << k;
}

Eigen::VectorXf gradient(Eigen::Index count, int step, int worker)
{
    Eigen::VectorXf g(count);
    for (Eigen::Index k = 0; k < count; ++k)
        g[k] = std::sin(
            0.37f * static_cast<float>(k) + 1.3f * static_cast<float>(step) + 0.7f * static_cast<float>(worker));
    return g;
}

void barrier(ps::ParameterServer& server, int step)
{
    const Eigen::VectorXf g0 = gradient(server.parameter_count(), step, 0),
                          g1 = gradient(server.parameter_count(), step, 1);
    const ps::GradientPush pushes[] = { { 0, 24, g0.data() }, { 1, 40, g1.data() } };
    server.apply_barrier(pushes);
}

} // namespace

TEST(Resharding, AddingAServerMovesOnlyItsBalancedShareAndKeepsEveryKeyOwnedOnce)
{
    const Eigen::VectorXf initial = Eigen::VectorXf::LinSpaced(1000, -1, 1);
    ps::ParameterServer server(initial, 3, {}, ps::Aggregation::Weighted);
    const ps::ReshardReport added = server.add_shard();
    EXPECT_EQ(added.shards, 4);
    EXPECT_EQ(added.moved_keys, 250); // 1000/4: the least that balances four servers
    expect_partition(server);
    for (const auto& shard : server.shards())
        EXPECT_EQ(shard.key_count(), 250);
    EXPECT_EQ(server.parameters(), initial);
    EXPECT_EQ(server.layout_version(), 1);
}

TEST(Resharding, RemovingAServerHandsAllItsKeysToTheOthersBalanced)
{
    const Eigen::VectorXf initial = Eigen::VectorXf::LinSpaced(1001, -1, 1);
    ps::ParameterServer server(initial, 4, {}, ps::Aggregation::Weighted);
    const ps::ReshardReport removed = server.remove_shard(1);
    EXPECT_EQ(removed.shards, 3);
    EXPECT_EQ(removed.moved_keys, 250);
    expect_partition(server);
    std::multiset<Eigen::Index> sizes;
    for (const auto& shard : server.shards())
        sizes.insert(shard.key_count());
    EXPECT_EQ(sizes, (std::multiset<Eigen::Index> { 333, 334, 334 }));
    EXPECT_EQ(server.parameters(), initial);
}

TEST(Resharding, AddThenRemoveRestoresTheOriginalRanges)
{
    ps::ParameterServer server(Eigen::VectorXf::Zero(90), 3, {}, ps::Aggregation::Weighted);
    std::vector<std::vector<ps::KeyRange>> before;
    for (const auto& shard : server.shards())
        before.push_back(shard.ranges());
    server.add_shard();
    server.remove_shard(3);
    std::vector<std::vector<ps::KeyRange>> after;
    for (const auto& shard : server.shards())
        after.push_back(shard.ranges());
    EXPECT_EQ(after, before); // slices that come home merge back into one range
}

TEST(Resharding, ModelAfterAddsAndRemovesEqualsAStaticServerBitForBit)
{
    // Momentum and weight decay make each key's optimizer state matter: it must move with
    // the key or the next step differs.
    const ps::OptimizerSpec optimizer { .learning_rate = 0.05f, .momentum = 0.9f, .weight_decay = 1e-3f };
    const Eigen::VectorXf initial = Eigen::VectorXf::LinSpaced(777, -2, 2);
    ps::ParameterServer elastic(initial, 2, optimizer, ps::Aggregation::Weighted);
    ps::ParameterServer fixed(initial, 1, optimizer, ps::Aggregation::Weighted);
    const std::vector<std::string> plan { "add", "add", "", "remove 0", "add", "remove 2", "", "remove 1", "add",
        "add" };
    for (int step = 0; step < static_cast<int>(plan.size()); ++step) {
        barrier(elastic, step);
        barrier(fixed, step);
        if (plan[static_cast<std::size_t>(step)] == "add")
            elastic.add_shard();
        else if (plan[static_cast<std::size_t>(step)].starts_with("remove"))
            elastic.remove_shard(std::stoi(plan[static_cast<std::size_t>(step)].substr(7)));
        expect_partition(elastic);
    }
    barrier(elastic, 99);
    barrier(fixed, 99);
    EXPECT_EQ(elastic.version(), fixed.version());
    const Eigen::VectorXf a = elastic.parameters(), b = fixed.parameters();
    for (Eigen::Index k = 0; k < a.size(); ++k)
        ASSERT_EQ(a[k], b[k]) << "key " << k;
    EXPECT_NE(a, initial);
}

TEST(Resharding, ImpossibleChangesAreRefusedAndLeaveTheServerUnchanged)
{
    ps::ParameterServer server(Eigen::VectorXf::Ones(2), 1, {}, ps::Aggregation::Weighted);
    EXPECT_THROW(server.remove_shard(0), std::invalid_argument);
    EXPECT_THROW(server.remove_shard(5), std::invalid_argument);
    server.add_shard();
    EXPECT_THROW(server.add_shard(), std::invalid_argument); // two keys, two servers
    EXPECT_EQ(server.shards().size(), 2u);
    expect_partition(server);
}
