#include "sched/eps_rules.h"

#include <gtest/gtest.h>

using namespace fulcrum::sched;

namespace {

EpsHolder holder(SlotCount held, SlotCount request, SlotCount minimum, bool may_release = true)
{
    return EpsHolder { held, request, minimum, may_release };
}

} // namespace

TEST(EpsRules, ANewcomerStartsWithItsRequestWhenItFits)
{
    EXPECT_EQ(eps_start_size(10, { 4, 2 }, { 1, 1 }, true), (SlotCount { 4, 2 }));
    EXPECT_EQ(eps_start_size(6, { 4, 2 }, { 1, 1 }, false), (SlotCount { 4, 2 }));
}

TEST(EpsRules, AnElasticNewcomerStartsSmallerWithServersInProportion)
{
    // 3 of 6 slots free: a third servers (1), the rest workers (2).
    EXPECT_EQ(eps_start_size(3, { 4, 2 }, { 1, 1 }, true), (SlotCount { 2, 1 }));
    // Never below one of each, never more workers than asked.
    EXPECT_EQ(eps_start_size(2, { 4, 2 }, { 1, 1 }, true), (SlotCount { 1, 1 }));
    EXPECT_EQ(eps_start_size(5, { 1, 8 }, { 1, 1 }, true), (SlotCount { 1, 4 }));
    // fulcrumd's jobs: one GPU per worker, servers hold none.
    EXPECT_EQ(eps_start_size(3, { 4, 0 }, { 2, 0 }, true), (SlotCount { 3, 0 }));
}

TEST(EpsRules, ANewcomerWaitsBelowItsMinimumOrWhenNotElastic)
{
    EXPECT_EQ(eps_start_size(1, { 4, 2 }, { 1, 1 }, true), std::nullopt);
    EXPECT_EQ(eps_start_size(1, { 4, 0 }, { 2, 0 }, true), std::nullopt);
    EXPECT_EQ(eps_start_size(5, { 4, 2 }, { 1, 1 }, false), std::nullopt);
}

TEST(EpsRules, ReleaseTakesWhatHoldersHoldBeyondTheirRequestFirst)
{
    // Job 0 grew from 2+1 to 4+3; job 1 holds exactly its request of 6 workers.
    const std::vector<EpsHolder> holders { holder({ 4, 3 }, { 2, 1 }, { 1, 1 }), holder({ 6, 0 }, { 6, 0 }, { 1, 0 }) };
    const auto taken = eps_release(holders, 0, 3);
    ASSERT_EQ(taken.size(), 2U);
    EXPECT_EQ(taken[0].slots(), 3);
    EXPECT_EQ(taken[1].slots(), 0);
    // Balanced: a worker goes while workers are at least as many as servers (4+3, 3+3),
    // then a server (2+3 with the workers at their request).
    EXPECT_EQ(taken[0], (SlotCount { 2, 1 }));
}

TEST(EpsRules, ReleaseGoesDownToTheMinimumFromTheLargestHolder)
{
    const std::vector<EpsHolder> holders { holder({ 3, 0 }, { 3, 0 }, { 1, 0 }), holder({ 5, 0 }, { 5, 0 }, { 2, 0 }) };
    const auto taken = eps_release(holders, 1, 5);
    // 4 slots needed: job 1 has 3 to spare, job 0 has 2; one at a time from the one with most.
    EXPECT_EQ(taken[0].slots() + taken[1].slots(), 4);
    EXPECT_EQ(taken[1], (SlotCount { 2, 0 }));
    EXPECT_EQ(taken[0], (SlotCount { 2, 0 }));
}

TEST(EpsRules, ReleaseSkipsJobsThatMayNotReleaseAndNeverGoesBelowTheMinimum)
{
    const std::vector<EpsHolder> holders { holder({ 8, 0 }, { 4, 0 }, { 1, 0 }, false),
        holder({ 3, 0 }, { 3, 0 }, { 2, 0 }) };
    const auto taken = eps_release(holders, 0, 6);
    EXPECT_EQ(taken[0].slots(), 0) << "a job before its early feedback keeps everything";
    EXPECT_EQ(taken[1], (SlotCount { 1, 0 })) << "down to its minimum, and no further";
}

TEST(EpsRules, NothingIsTakenWhenTheFreeSlotsSuffice)
{
    const std::vector<EpsHolder> holders { holder({ 8, 0 }, { 4, 0 }, { 1, 0 }) };
    EXPECT_EQ(eps_release(holders, 3, 3)[0].slots(), 0);
}

TEST(EpsRules, GrowthRoundsStartOneJobLaterEachTime)
{
    EXPECT_EQ(eps_growth_order(3, 0), (std::vector<std::size_t> { 0, 1, 2 }));
    EXPECT_EQ(eps_growth_order(3, 1), (std::vector<std::size_t> { 1, 2, 0 }));
    EXPECT_EQ(eps_growth_order(3, 5), (std::vector<std::size_t> { 2, 0, 1 }));
    EXPECT_TRUE(eps_growth_order(0, 4).empty());
}

TEST(EpsRules, AGrowthStepThatSlowedTheJobIsRolledBack)
{
    EXPECT_TRUE(eps_growth_kept(10.0, 12.0));
    EXPECT_TRUE(eps_growth_kept(10.0, 10.0));
    EXPECT_FALSE(eps_growth_kept(10.0, 9.5));
}
