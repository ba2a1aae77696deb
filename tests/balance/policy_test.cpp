#include "balance/policy_registry.h"
#include "balance/rounding.h"
#include "common/random.h"

#include <algorithm>
#include <cmath>
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

namespace {

// The textbook largest-remainder method with a full sort: what proportional_split must match.
std::vector<std::int32_t> largest_remainder_reference(const std::vector<double>& weights, std::int32_t total)
{
    const double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
    std::vector<double> exact(weights.size());
    std::vector<std::int32_t> shares(weights.size());
    std::int64_t given = 0;
    for (std::size_t i = 0; i < weights.size(); ++i) {
        exact[i]
            = sum > 0 ? weights[i] * (total / sum) : static_cast<double>(total) / static_cast<double>(weights.size());
        shares[i] = std::max(1, static_cast<std::int32_t>(std::floor(exact[i])));
        given += shares[i];
    }
    std::vector<std::size_t> order(weights.size());
    std::iota(order.begin(), order.end(), std::size_t { 0 });
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const double ra = exact[a] - shares[a], rb = exact[b] - shares[b];
        return ra > rb || (ra == rb && a < b);
    });
    for (std::size_t k = 0; given < total; ++k, ++given)
        ++shares[order[k % order.size()]];
    return shares;
}

} // namespace

TEST(ProportionalSplit, MatchesTheSortedLargestRemainderMethodOnRandomInputs)
{
    // The selection by remainder buckets must give exactly what a full sort gives, ties
    // included (equal weights make equal remainders).
    Rng rng(7);
    for (int trial = 0; trial < 500; ++trial) {
        const auto n = static_cast<std::size_t>(1 + trial % 97);
        std::vector<double> weights(n);
        for (auto& w : weights)
            w = trial % 5 == 0 ? static_cast<double>(1 + static_cast<int>(uniform01(rng) * 3)) : uniform01(rng) * 100;
        const auto total
            = static_cast<std::int32_t>(n + static_cast<std::size_t>(uniform01(rng) * 50 * static_cast<double>(n)));
        const auto reference = largest_remainder_reference(weights, total);
        if (std::accumulate(reference.begin(), reference.end(), std::int64_t { 0 }) != total)
            continue; // lifted minimums overshoot: the other branch, covered above
        ASSERT_EQ(balance::proportional_split(weights, total), reference) << "trial " << trial;
    }
}
