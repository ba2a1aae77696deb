#include "balance/policy_registry.h"
#include "balance/rounding.h"

#include <gtest/gtest.h>
#include <numeric>

using namespace fulcrum;

namespace {

balance::PolicySpec spec(const std::string& type, std::vector<std::int32_t> sizes = {})
{
    balance::PolicySpec s;
    s.type = type;
    s.batch_sizes = std::move(sizes);
    return s;
}

} // namespace

TEST(ProportionalSplit, KeepsTheTotalExactly)
{
    const auto shares = balance::proportional_split({ 3.3, 1.1, 0.7, 5.9 }, 128);
    EXPECT_EQ(std::accumulate(shares.begin(), shares.end(), 0), 128);
    // Exact shares 38.4, 12.8, 8.15, 68.65 floored to 126; remainders .8 and .65 take the last two.
    EXPECT_EQ(shares, (std::vector<std::int32_t> { 38, 13, 8, 69 }));
}

TEST(ProportionalSplit, GivesEveryWorkerTheMinimum)
{
    const auto shares = balance::proportional_split({ 1000, 0, 1e-9 }, 10);
    EXPECT_EQ(shares[1], 1);
    EXPECT_EQ(shares[2], 1);
    EXPECT_EQ(shares[0], 8);
}

TEST(ProportionalSplit, RefusesImpossibleRequests)
{
    EXPECT_THROW(balance::proportional_split({ 1, 1, 1 }, 2), std::invalid_argument);
    EXPECT_THROW(balance::proportional_split({}, 2), std::invalid_argument);
    EXPECT_THROW(balance::proportional_split({ 1, -1 }, 4), std::invalid_argument);
}

TEST(UniformPolicy, SplitsEvenlyWithRemainderToTheFirst)
{
    auto policy = balance::make_policy(spec("uniform"));
    EXPECT_EQ(policy->initial(3, 10).batch_sizes, (std::vector<std::int32_t> { 4, 3, 3 }));
}

TEST(FixedPolicy, KeepsTheGivenSizesAndChecksThem)
{
    auto policy = balance::make_policy(spec("fixed", { 89, 21, 12, 6 }));
    EXPECT_EQ(policy->initial(4, 128).batch_sizes, (std::vector<std::int32_t> { 89, 21, 12, 6 }));
    EXPECT_EQ(policy->initial(4, 128).decision, "fixed");
    EXPECT_THROW(policy->initial(4, 100), std::invalid_argument);
    EXPECT_THROW(policy->initial(3, 128), std::invalid_argument);
}

TEST(PolicyRegistry, UnknownPolicyIsRefused)
{
    EXPECT_THROW(balance::make_policy(spec("oracle")), std::invalid_argument);
}
