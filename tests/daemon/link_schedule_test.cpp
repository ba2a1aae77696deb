#include "daemon/link_schedule.h"
#include "daemon/shared_clock.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <gtest/gtest.h>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

using namespace fulcrum;
using daemon::LinkSchedule;

namespace {

// Two servers of two GPUs: GPUs 0 and 1 share server 0's link, 2 and 3 server 1's.
sched::ClusterSpec two_servers()
{
    sched::ClusterSpec c;
    c.servers = 2;
    c.gpus_per_server = 2;
    return c;
}

LinkSchedule::Transfer transfer(JobId job, std::vector<int> gpus, double bytes = 1e8, double alone_s = 1.0)
{
    const std::vector<double> alone(gpus.size(), alone_s);
    return { job, bytes, std::move(gpus), alone };
}

// A wall clock that moves only when the test moves it (advance_to). It knows the instant
// each thread sleeping on it waits for, so that a test moves it once the threads it expects
// are held, each until the instant it expects.
class ManualWallTime final : public daemon::WallTime {
public:
    double now_s() const override
    {
        std::lock_guard lock(mutex_);
        return now_;
    }
    bool sleep_until(double until, const std::atomic<bool>* stop) override
    {
        std::unique_lock lock(mutex_);
        const auto me = sleeping_.insert(until);
        changed_.notify_all();
        bool reached = true;
        while (now_ < until) { // real time only to see a stop: the instant it returns at is the test's
            if (stop && stop->load()) {
                reached = false;
                break;
            }
            changed_.wait_for(lock, std::chrono::milliseconds(1));
        }
        sleeping_.erase(me);
        changed_.notify_all();
        return reached;
    }
    void advance_to(double t)
    {
        std::lock_guard lock(mutex_);
        now_ = t;
        changed_.notify_all();
    }
    // Until the threads sleeping on it wait for exactly these instants; false after 30 s of
    // real time (a thread that never came: the test fails instead of hanging).
    bool wait_for_sleeping(const std::multiset<double>& untils)
    {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, std::chrono::seconds(30), [&] { return sleeping_ == untils; });
    }

private:
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    double now_ = 0;
    std::multiset<double> sleeping_;
};

// However a test ends (an ASSERT returns early too), its threads end: the clock goes past
// every instant they wait for, and they are joined.
struct JoinedAtEnd {
    ManualWallTime& wall;
    std::vector<std::thread>& threads;
    ~JoinedAtEnd()
    {
        wall.advance_to(1e9);
        for (std::thread& t : threads)
            if (t.joinable())
                t.join();
    }
};

} // namespace

TEST(LinkSchedule, Srsf1RunsOneTransferPerLinkAndSaysWhenToAskAgain)
{
    LinkSchedule links(two_servers(), "srsf-1");
    EXPECT_TRUE(links.scheduling());
    EXPECT_EQ(links.policy(), "srsf-1");
    const LinkSchedule::Decision a = links.try_start(transfer(1, { 0 }), 0);
    ASSERT_TRUE(a.started);
    EXPECT_EQ(a.stretch, std::vector<double> { 1.0 }) << "alone on its link";
    const LinkSchedule::Decision b = links.try_start(transfer(2, { 1 }), 0.5);
    EXPECT_FALSE(b.started) << "server 0's link carries job 1's transfer";
    EXPECT_EQ(b.retry_at, 1.0) << "when job 1's transfer ends";
    EXPECT_TRUE(links.try_start(transfer(3, { 2 }), 0.5).started) << "server 1's link is free";
    const LinkSchedule::Decision again = links.try_start(transfer(2, { 1 }), 1.0);
    ASSERT_TRUE(again.started);
    EXPECT_EQ(again.stretch, std::vector<double> { 1.0 }) << "srsf-1 never lets transfers contend";
    EXPECT_EQ(links.transfers_on_links(1.2), (std::vector<int> { 1, 1 }));
    // A job on both servers needs both links: held until the first of them frees.
    const LinkSchedule::Decision wide = links.try_start(transfer(4, { 0, 2 }), 1.2);
    EXPECT_FALSE(wide.started);
    EXPECT_EQ(wide.retry_at, 1.5) << "job 3's transfer on server 1 ends at 0.5 + 1";
    EXPECT_EQ(links.transfers_on_links(2.5), (std::vector<int> { 0, 0 }));
}

TEST(LinkSchedule, Srsf2AndAdaSrsfLetTransfersShareALinkStretchedByEquationFive)
{
    const sched::ContentionModel eq5 = two_servers().network;
    const double m = 1e8;
    const double two = (eq5.a + (2 * eq5.b + eq5.eta) * m) / (eq5.a + eq5.b * m); // T(2) / T(1)
    {
        LinkSchedule links(two_servers(), "srsf-2");
        ASSERT_TRUE(links.try_start(transfer(1, { 0 }), 0).started);
        const LinkSchedule::Decision b = links.try_start(transfer(2, { 1 }), 0.5);
        ASSERT_TRUE(b.started) << "srsf-2: a second transfer may share the link";
        EXPECT_DOUBLE_EQ(b.stretch.at(0), two);
        const LinkSchedule::Decision c = links.try_start(transfer(3, { 0 }), 0.6);
        EXPECT_FALSE(c.started) << "but not a third";
        EXPECT_EQ(c.retry_at, 1.0);
    }
    {
        // AdaDUAL: beside one running transfer only when M_new / M_old (its bytes left) is
        // below b / (2(b + eta)); never beside two.
        LinkSchedule links(two_servers(), "ada-srsf");
        ASSERT_TRUE(links.try_start(transfer(1, { 0 }, m), 0).started);
        EXPECT_FALSE(links.try_start(transfer(2, { 1 }, m), 0.5).started) << "as large as what is left: it waits";
        const LinkSchedule::Decision small = links.try_start(transfer(3, { 1 }, 1e6, 0.01), 0.5);
        ASSERT_TRUE(small.started) << "1 MB beside 50 MB left: it goes now";
        EXPECT_DOUBLE_EQ(small.stretch.at(0), eq5.stretch(1e6, 2));
        EXPECT_FALSE(links.try_start(transfer(4, { 0 }, 1e3, 0.001), 0.501).started) << "never beside two";
    }
    {
        LinkSchedule links(two_servers(), "none");
        EXPECT_FALSE(links.scheduling());
        ASSERT_TRUE(links.try_start(transfer(1, { 0 }), 0).started);
        const LinkSchedule::Decision b = links.try_start(transfer(2, { 1 }), 0.5);
        ASSERT_TRUE(b.started) << "no scheduler holds anything";
        EXPECT_DOUBLE_EQ(b.stretch.at(0), two);
    }
}

TEST(LinkSchedule, APolicyTheSchedulerLacksIsRefusedAndChangesNothing)
{
    LinkSchedule links(two_servers(), "ada-srsf");
    for (const char* bad : { "srsf-0", "srsf", "fifo", "" }) {
        try {
            links.set_policy(bad);
            ADD_FAILURE() << bad << " was taken";
        } catch (const std::invalid_argument& e) {
            EXPECT_EQ(std::string(e.what()),
                std::string("unknown communication scheduler '") + bad
                    + "' (expected none, srsf-N with N >= 1 (e.g. srsf-1) or ada-srsf)");
        }
    }
    EXPECT_EQ(links.policy(), "ada-srsf");
    links.set_policy("srsf-3");
    EXPECT_EQ(links.policy(), "srsf-3");
    EXPECT_THROW(LinkSchedule(two_servers(), "lwf-1"), std::invalid_argument);
}

// Three jobs on threads share server 0's link under srsf-1 on the shared clock. Job 1's
// transfer holds the link over [0, 1); jobs 2 (much work left) and 3 (little) ask at 0.2 and
// 0.3 and are held until 1. There the job with the least remaining service goes first (SRSF),
// whatever the threads' speed: job 3 over [1, 2), job 2 after it over [2, 3).
TEST(LinkSchedule, HeldTransfersStartInSrsfOrderOnTheSharedClock)
{
    for (int round = 0; round < 5; ++round) {
        daemon::SharedVirtualClock clock;
        LinkSchedule links(two_servers(), "srsf-1");
        std::mutex mutex;
        std::map<JobId, LinkSchedule::Scheduled> got;
        const auto run = [&](JobId job, double ready, double service) {
            clock.advance(job, 0, nullptr); // entered: its first barrier is at the daemon's time 0
            clock.advance(job, ready, nullptr); // computing until `ready`
            LinkSchedule::Scheduled s = links.schedule(clock, transfer(job, { 0 }), ready, service, nullptr);
            {
                std::lock_guard lock(mutex);
                got[job] = std::move(s);
            }
            clock.advance(job, 10, nullptr);
            clock.leave(job);
        };
        for (JobId job = 1; job <= 3; ++job)
            clock.enter(job);
        std::vector<std::thread> threads;
        threads.emplace_back(run, 1, 0.0, 50);
        threads.emplace_back(run, 2, 0.2, 100);
        threads.emplace_back(run, 3, 0.3, 10);
        for (std::thread& t : threads)
            t.join();
        ASSERT_EQ(got.size(), 3u);
        for (const auto& [job, s] : got) {
            EXPECT_TRUE(s.started) << "job " << job;
            EXPECT_EQ(s.stretch, std::vector<double> { 1.0 }) << "job " << job;
        }
        EXPECT_EQ(got[1].wait_s, 0);
        EXPECT_EQ(got[1].asked, 1);
        EXPECT_NEAR(got[3].wait_s, 0.7, 1e-12) << "round " << round << ": the shorter job starts when job 1 ends";
        EXPECT_EQ(got[3].asked, 2);
        EXPECT_NEAR(got[2].wait_s, 1.8, 1e-12) << "round " << round << ": the longer job waits for job 3's too";
        EXPECT_EQ(got[2].asked, 3);
    }
}

// The same in wall time, for paced and real-mode jobs (schedule_paced), on a wall clock the
// test moves: job 1's transfer holds server 0's link over [0, 1) s; jobs 2 (much work left)
// and 3 (little) ask at 0 and are held until 1 s. There job 3 goes first, whichever thread
// wakes first, over [1, 2) s, and job 2 is held again until 2 s. Their waits are exact.
TEST(LinkSchedule, HeldPacedTransfersStartInSrsfOrderInWallTime)
{
    for (int round = 0; round < 20; ++round) {
        ManualWallTime wall;
        LinkSchedule links(two_servers(), "srsf-1", &wall);
        const LinkSchedule::Scheduled first = links.schedule_paced(transfer(1, { 0 }), 1.0, 50, nullptr);
        ASSERT_TRUE(first.started);
        EXPECT_EQ(first.asked, 1);
        std::mutex mutex;
        std::map<JobId, LinkSchedule::Scheduled> got;
        const auto run = [&](JobId job, double service) {
            LinkSchedule::Scheduled s = links.schedule_paced(transfer(job, { 0 }), 1.0, service, nullptr);
            std::lock_guard lock(mutex);
            got[job] = std::move(s);
        };
        std::vector<std::thread> threads;
        const JoinedAtEnd joined { wall, threads };
        threads.emplace_back(run, 2, 100);
        threads.emplace_back(run, 3, 10);
        ASSERT_TRUE(wall.wait_for_sleeping({ 1.0, 1.0 })) << "both held until job 1's transfer ends";
        wall.advance_to(1.0);
        ASSERT_TRUE(wall.wait_for_sleeping({ 2.0 })) << "one started, the other held until its transfer ends";
        wall.advance_to(2.0);
        for (std::thread& t : threads)
            t.join();
        ASSERT_EQ(got.size(), 2u);
        EXPECT_TRUE(got[2].started);
        EXPECT_TRUE(got[3].started);
        EXPECT_EQ(got[3].asked, 2) << "round " << round << ": the shorter job starts when job 1's transfer ends";
        EXPECT_EQ(got[3].wait_s, 1.0);
        EXPECT_EQ(got[2].asked, 3) << "round " << round << ": the longer job is held again, behind job 3";
        EXPECT_EQ(got[2].wait_s, 2.0);
    }
}

// A held paced transfer whose job is stopped gives up at once, on a clock that never moves.
TEST(LinkSchedule, AHeldPacedTransferGivesUpWhenItsJobStops)
{
    ManualWallTime wall;
    LinkSchedule links(two_servers(), "srsf-1", &wall);
    ASSERT_TRUE(links.schedule_paced(transfer(1, { 0 }), 1.0, 50, nullptr).started);
    std::atomic<bool> stop { false };
    LinkSchedule::Scheduled held;
    std::vector<std::thread> threads;
    const JoinedAtEnd joined { wall, threads };
    threads.emplace_back([&] { held = links.schedule_paced(transfer(2, { 0 }), 1.0, 10, &stop); });
    ASSERT_TRUE(wall.wait_for_sleeping({ 1.0 }));
    stop = true;
    threads[0].join();
    EXPECT_FALSE(held.started);
    EXPECT_EQ(held.asked, 1);
    EXPECT_EQ(held.wait_s, 0.0) << "no wall time passed";
    wall.advance_to(1.0);
    EXPECT_TRUE(links.schedule_paced(transfer(3, { 0 }), 1.0, 10, nullptr).started) << "it left no one held";
}
