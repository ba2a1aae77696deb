#include "daemon/daemon.h"
#include "daemon/shared_clock.h"
#include "daemon_support.h"

#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>
#include <mutex>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace fulcrum;

// Three jobs with their own barrier times run on threads: the clock lets them go in the
// daemon's one order of time, whatever the threads' speed.
TEST(SharedVirtualClock, JobsGoOnInOneOrderOfTheirTimes)
{
    daemon::SharedVirtualClock clock;
    std::mutex mutex;
    std::vector<std::pair<double, JobId>> order;
    const auto run = [&](JobId job, double step, int count) {
        clock.advance(job, 0, nullptr); // entered: its first barrier is at the daemon's time 0
        for (int k = 1; k <= count; ++k) {
            clock.advance(job, step * k, nullptr);
            std::lock_guard lock(mutex);
            order.emplace_back(step * k, job);
        }
        clock.leave(job);
    };
    for (JobId job = 1; job <= 3; ++job)
        clock.enter(job); // placed together: no one goes past the others' first barriers
    std::vector<std::thread> threads;
    threads.emplace_back(run, 1, 0.3, 10);
    threads.emplace_back(run, 2, 0.7, 4);
    threads.emplace_back(run, 3, 0.1, 30);
    for (std::thread& t : threads)
        t.join();
    ASSERT_EQ(order.size(), 44u);
    // Jobs let go at the same time (job 1's 0.3 x 10 and job 3's 0.1 x 30) run together, so
    // only the times must be in order.
    EXPECT_TRUE(std::is_sorted(order.begin(), order.end(), [](const auto& a, const auto& b) {
        return a.first < b.first;
    })) << "let go out of time order";
    EXPECT_DOUBLE_EQ(clock.now(), 3.0);
}

// A paused job holds no one up; resumed, it goes on from the daemon's time, not its own.
TEST(SharedVirtualClock, APausedJobHoldsNoOneUpAndResumesAtTheDaemonsTime)
{
    daemon::SharedVirtualClock clock;
    clock.advance(1, 0, nullptr);
    clock.advance(2, 0, nullptr);
    clock.suspend(2); // job 2 computed from 0; paused, it holds no one up
    clock.advance(1, 1, nullptr);
    clock.advance(1, 5, nullptr);
    EXPECT_DOUBLE_EQ(clock.now(), 5);
    clock.resume(2);
    clock.advance(2, 0.5, nullptr); // its own time 0.5 is the daemon's 5 now
    EXPECT_DOUBLE_EQ(clock.now(), 5);
    std::atomic<bool> stop { false };
    std::thread waits([&] { clock.advance(1, 5.2, &stop); });
    // Job 2 computes from daemon time 5: job 1 at 5.2 waits for job 2's next barrier.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_DOUBLE_EQ(clock.now(), 5);
    clock.advance(2, 0.6, nullptr); // daemon time 5.1: before job 1's 5.2, so it goes first
    EXPECT_NEAR(clock.now(), 5.1, 1e-12);
    clock.leave(2);
    waits.join();
    EXPECT_NEAR(clock.now(), 5.2, 1e-12);
}

// A stop request frees a waiting job, and the clock does not move for it.
TEST(SharedVirtualClock, AStopRequestEndsTheWaitWithoutMovingTheClock)
{
    daemon::SharedVirtualClock clock;
    clock.advance(1, 0, nullptr);
    clock.advance(2, 0, nullptr);
    std::atomic<bool> stop { false };
    std::atomic<bool> returned { false };
    std::thread waits([&] {
        clock.advance(1, 3, &stop); // job 2 computes from 0
        returned = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(returned) << "job 1 went on while job 2 could still have an earlier event";
    stop = true;
    waits.join();
    EXPECT_TRUE(returned);
    EXPECT_DOUBLE_EQ(clock.now(), 0);
}

namespace {

std::string virtual_job(const std::string& name, double speed, int iterations)
{
    return R"({"name": ")" + name + R"(", "mode": "virtual", "seed": 2,
      "data": {"source": "synthetic", "train_size": 600, "test_size": 100, "dim": 8, "classes": 3},
      "model": {"type": "softmax"}, "policy": {"type": "uniform"},
      "training": {"total_batch": 48, "iterations": )"
        + std::to_string(iterations) + R"(, "eval_interval": 100000},
      "workers": [{"speed": )"
        + std::to_string(speed) + R"(, "noise": {"sigma": 0}}]})";
}

} // namespace

// Two virtual-mode jobs in fulcrumd, one ten times slower per iteration: their rows come
// out in one order of the daemon's time. Whatever the difference of the jobs' start times
// on the daemon's clock (δ), every published row of one job is no later than the next row
// of the other by more than an iteration of look-ahead (a job publishes a barrier's rows,
// then waits at it), so some δ is consistent with the whole sequence. Each on its own
// clock, the slow job's 30 iterations would be done while the fast one is a tenth of its
// way, and no δ would fit.
TEST(SharedVirtualClock, VirtualJobsInFulcrumdRunOnTheDaemonsOneClock)
{
    const auto dir = std::filesystem::temp_directory_path() / ("fulcrum-shared-clock-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    {
        daemon::DaemonOptions o;
        o.data_dir = dir;
        daemon::Daemon d(o);
        auto viewer = d.connect(protocol::Role::Viewer, "v");
        d.receive(
            *viewer, protocol::encode(protocol::ClientMessage { protocol::Hello { protocol::kProtocolVersion, "t" } }));
        d.receive(*viewer,
            protocol::encode(
                protocol::ClientMessage { protocol::Subscribe { "s", { protocol::Stream::Iterations }, {}, {} } }));
        const JobId slow = d.submit(virtual_job("slow", 480, 30), "slow"); // 0.1 s an iteration
        const JobId fast = d.submit(virtual_job("fast", 4800, 300), "fast"); // 0.01 s
        std::vector<std::pair<JobId, double>> published; // (job, end of its barrier) in publication order
        std::vector<protocol::ServerMessage> seen;
        int done = 0;
        ASSERT_TRUE(testing_support::wait_for(*viewer, seen, [&](const protocol::ServerMessage& m) {
            if (const auto* rows = std::get_if<protocol::IterationRows>(&m)) {
                published.emplace_back(rows->job, rows->rows.front().end_s);
                done += rows->iteration == (rows->job == slow ? 29 : 299);
            }
            return done == 2;
        }));
        // a + o_slow <= b + o_fast for slow-then-fast, the reverse for fast-then-slow, with
        // an iteration of each job's look-ahead: δ = o_fast - o_slow.
        double lower = -1e9, upper = 1e9;
        for (std::size_t i = 1; i < published.size(); ++i) {
            const auto& [first, t1] = published[i - 1];
            const auto& [second, t2] = published[i];
            if (first == second)
                continue;
            if (first == slow)
                lower = std::max(lower, t1 - t2);
            else
                upper = std::min(upper, t2 - t1);
        }
        EXPECT_LE(lower, upper + 0.1 + 0.01) << "no one order of the daemon's time fits the rows";
        EXPECT_GT(
            std::count_if(published.begin(), published.end(), [&](const auto& p) { return p.first == fast; }), 200)
            << "the fast job's rows, interleaved";
        d.stop_all();
    }
    std::filesystem::remove_all(dir);
}

// A workload's jobs arrive at their daemon times: a running job does not go past an arrival
// until it has happened and the arrived job is placed (or left waiting), and an idle clock
// moves straight to the next arrival.
TEST(SharedVirtualClock, AWorkloadsJobsArriveAtTheirTimesAndHoldTheOthersThere)
{
    daemon::SharedVirtualClock clock;
    clock.advance(1, 0, nullptr);
    clock.advance(1, 1, nullptr);
    EXPECT_DOUBLE_EQ(clock.expect({ { 10, 1.0 }, { 11, 4.0 } }), 1.0); // due at 2 and 5
    std::atomic<bool> went { false };
    std::thread job([&] {
        clock.advance(1, 3, nullptr); // past job 10's arrival at 2
        went = true;
    });
    EXPECT_EQ(clock.next_arrival(nullptr), JobId { 10 });
    EXPECT_DOUBLE_EQ(clock.now(), 2);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(went) << "job 1 went past a job that arrived at 2 before it was placed";
    EXPECT_DOUBLE_EQ(clock.enter(10), 2); // placed: it starts at its arrival
    clock.advance(10, 0, nullptr);
    clock.advance(10, 0.5, nullptr); // daemon time 2.5
    EXPECT_FALSE(went);
    EXPECT_EQ(clock.leave(10), std::optional<double>(2.5)); // its end
    job.join();
    EXPECT_DOUBLE_EQ(clock.now(), 3);
    // Job 11 at 5 waits for job 1, which computes from 3; a stop request ends that wait.
    std::atomic<bool> stop { false };
    std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        stop = true;
    });
    EXPECT_EQ(clock.next_arrival(&stop), std::nullopt);
    stopper.join();
    EXPECT_EQ(clock.last_time(1), std::optional<double>(3));
    clock.leave(1);
    EXPECT_EQ(clock.next_arrival(nullptr), JobId { 11 }); // nothing runs: straight to 5
    EXPECT_DOUBLE_EQ(clock.now(), 5);
    EXPECT_EQ(clock.last_time(12), std::nullopt);
}
