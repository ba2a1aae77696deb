#include "data/data_shares.h"

#include <gtest/gtest.h>

using namespace fulcrum;

namespace {

std::int64_t count(const std::vector<data::SampleRange>& ranges)
{
    std::int64_t n = 0;
    for (const auto& r : ranges)
        n += r.size();
    return n;
}

// Each sample is active at exactly one member, and no member backs up its own active data.
void expect_every_sample_active_once(const data::DataShares& shares)
{
    std::vector<int> active(static_cast<std::size_t>(shares.samples()), 0);
    for (WorkerId w : shares.members()) {
        for (const auto& r : shares.active(w))
            for (std::int64_t i = r.begin; i < r.end; ++i)
                active[static_cast<std::size_t>(i)] += 1;
        for (const auto& b : shares.backups(w))
            for (const auto& r : shares.active(w))
                ASSERT_TRUE(b.end <= r.begin || r.end <= b.begin) << "worker " << w << " backs up its own active data";
    }
    for (std::size_t i = 0; i < active.size(); ++i)
        ASSERT_EQ(active[i], 1) << "sample " << i;
}

} // namespace

TEST(DataShares, ANewcomerGetsOneChunkOfDOverNSquaredFromEachWorkerWhoKeepsItAsBackup)
{
    data::DataShares shares(1200, 4); // D/N = 300 each
    const data::ShareChange joined = shares.add_worker(4);
    EXPECT_EQ(joined.moved_samples, 300); // 4 chunks of 1200/16 = 75
    EXPECT_EQ(count(shares.active(4)), 300);
    for (WorkerId w = 0; w < 4; ++w) {
        EXPECT_EQ(count(shares.active(w)), 225);
        EXPECT_EQ(count(shares.backups(w)), 75);
    }
    expect_every_sample_active_once(shares);
}

// One chunk of D/1² would be all of it: the lone worker would keep nothing to sample from.
TEST(DataShares, ALoneWorkerHandsANewcomerHalfItsData)
{
    data::DataShares shares(600, 1);
    EXPECT_EQ(shares.add_worker(1).moved_samples, 300);
    EXPECT_EQ(count(shares.active(0)), 300);
    EXPECT_EQ(count(shares.active(1)), 300);
    EXPECT_EQ(count(shares.backups(0)), 300);
    expect_every_sample_active_once(shares);
    shares.remove_worker(1);
    EXPECT_EQ(count(shares.active(0)), 600);
}

TEST(DataShares, RemovingTheNewcomerReactivatesBackupsAndMovesNothing)
{
    data::DataShares shares(1000, 3);
    std::vector<std::vector<data::SampleRange>> before;
    for (WorkerId w : shares.members())
        before.push_back(shares.active(w));
    shares.add_worker(7);
    const data::ShareChange left = shares.remove_worker(7);
    EXPECT_EQ(left.moved_samples, 0);
    EXPECT_EQ(left.reactivated_samples, 111 * 3); // 334/3, 333/3 and 333/3 samples handed over
    for (WorkerId w : shares.members()) {
        EXPECT_EQ(shares.active(w), before[static_cast<std::size_t>(w)]);
        EXPECT_TRUE(shares.backups(w).empty());
    }
    expect_every_sample_active_once(shares);
}

TEST(DataShares, RemovingAnOriginalWorkerSplitsItsDataEvenlyOverTheOthers)
{
    data::DataShares shares(900, 3);
    const data::ShareChange left = shares.remove_worker(1);
    EXPECT_EQ(left.moved_samples, 300);
    EXPECT_EQ(left.reactivated_samples, 0);
    EXPECT_EQ(count(shares.active(0)), 450);
    EXPECT_EQ(count(shares.active(2)), 450);
    expect_every_sample_active_once(shares);
}

TEST(DataShares, AnySequenceOfJoinsAndLeavesKeepsEverySampleActiveExactlyOnce)
{
    data::DataShares shares(5000, 2);
    WorkerId next = 2;
    std::uint64_t state = 12345;
    for (int step = 0; step < 200; ++step) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        const auto members = shares.members();
        const bool join = members.size() < 2 || (members.size() < 12 && (state >> 33) % 2 == 0);
        if (join)
            shares.add_worker(next++);
        else
            shares.remove_worker(members[(state >> 40) % members.size()]);
        expect_every_sample_active_once(shares);
    }
}

TEST(DataShares, ImpossibleChangesAreRefused)
{
    data::DataShares shares(10, 1);
    EXPECT_THROW(shares.add_worker(0), std::invalid_argument);
    EXPECT_THROW(shares.remove_worker(3), std::invalid_argument);
    EXPECT_THROW(shares.remove_worker(0), std::invalid_argument); // the last worker
    EXPECT_THROW(data::DataShares(3, 4), std::invalid_argument);
    EXPECT_THROW(data::DataShares(10, 0), std::invalid_argument);
}
