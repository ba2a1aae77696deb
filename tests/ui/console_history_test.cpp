// The console's bounded histories and what the charts draw from them.

#include "ui/models/iteration_history.h"
#include "ui/models/ring_buffer.h"
#include "ui/views/iteration_window.h"
#include "ui/views/series_points.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace fulcrum;
using namespace fulcrum::ui;

namespace {

// Two workers; worker 1 takes `slow` times as long as worker 0 for the same batch.
protocol::IterationRows iteration(std::int64_t k, double slow, double start)
{
    protocol::IterationRows rows;
    rows.iteration = k;
    for (WorkerId w = 0; w < 2; ++w) {
        IterationRecord r;
        r.worker = w;
        r.iteration = k;
        r.batch_size = 32;
        r.compute_s = w == 0 ? 0.1 : 0.1 * slow;
        r.comm_s = 0.02;
        r.start_s = start;
        r.end_s = start + r.compute_s + r.comm_s;
        rows.rows.push_back(r);
    }
    const double barrier = std::max(rows.rows[0].end_s, rows.rows[1].end_s);
    for (IterationRecord& r : rows.rows)
        r.wait_s = barrier - r.end_s;
    return rows;
}

} // namespace

TEST(RingBuffer, KeepsTheNewestValuesInOrder)
{
    RingBuffer<int> ring(3);
    for (int i = 0; i < 5; ++i)
        ring.push_back(i);
    ASSERT_EQ(ring.size(), 3u);
    EXPECT_EQ(ring[0], 2);
    EXPECT_EQ(ring[2], 4);
    ring.pop_back();
    ring.push_back(9);
    EXPECT_EQ(ring.back(), 9);
    EXPECT_EQ(ring.partition_point([](int v) { return v < 3; }), 1u);
}

// A replay seeked back pops values off a buffer that has not wrapped yet, then appends
// again: the new values must follow the kept ones, not land after the dropped ones.
TEST(RingBuffer, AppendsAfterPopsBeforeItFirstWraps)
{
    RingBuffer<int> ring(10);
    for (int i = 0; i < 8; ++i)
        ring.push_back(i);
    for (int i = 0; i < 5; ++i)
        ring.pop_back();
    for (int i = 30; i < 39; ++i)
        ring.push_back(i);
    std::vector<int> held;
    for (std::size_t i = 0; i < ring.size(); ++i)
        held.push_back(ring[i]);
    EXPECT_EQ(held, (std::vector<int> { 2, 30, 31, 32, 33, 34, 35, 36, 37, 38 })); // 0 and 1 drop out: capacity 10
}

TEST(JobHistory, SummarisesEachIterationAndStaysWithinItsCapacity)
{
    JobHistory history(50);
    double t = 0;
    for (std::int64_t k = 0; k < 120; ++k) {
        const auto rows = iteration(k, k < 60 ? 2.0 : 1.05, t);
        t = rows.rows[0].end_s + rows.rows[0].wait_s;
        history.append(rows);
    }
    EXPECT_EQ(history.iterations().size(), 50u);
    EXPECT_EQ(history.worker(1).size(), 50u);
    EXPECT_EQ(*history.first_iteration(), 70);
    EXPECT_EQ(*history.last_iteration(), 119);
    const IterationSummary& last = history.iterations().back();
    EXPECT_EQ(last.straggler, 1);
    // Batch times 0.12 and 0.125: (0.125 - 0.12) / 0.1225.
    EXPECT_NEAR(last.spread, 0.005 / 0.1225, 1e-6); // times are kept as floats
    EXPECT_NEAR(last.fastest_batch_time_s, 0.12, 1e-6);

    // A seek back to the barrier of iteration 99 drops 100..119 everywhere.
    history.truncate_after(history.iterations()[29].barrier_s);
    EXPECT_EQ(*history.last_iteration(), 99);
    EXPECT_EQ(history.worker(0).back().iteration, 99);
}

TEST(JobHistory, EquilibriaAreTheStretchesWhereTheSpreadStaysUnderTheThreshold)
{
    JobHistory history(1000);
    double t = 0;
    for (std::int64_t k = 0; k < 100; ++k) {
        // Uneven until 30, settled 30..69, a straggler again from 70.
        const auto rows = iteration(k, k < 30 || k >= 70 ? 2.0 : 1.05, t);
        t += 1;
        history.append(rows);
    }
    const std::vector<Equilibrium> found = equilibria(history, 0.2);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0], (Equilibrium { 30, 69 }));
    EXPECT_TRUE(equilibria(history, 0.01).empty());
    // Shorter than the window: not an equilibrium.
    EXPECT_TRUE(equilibria(history, 0.2, 41).empty());
}

TEST(SeriesPoints, DownsamplingKeepsEveryBucketsExtremes)
{
    RingBuffer<WorkerSample> samples(10000);
    for (std::int64_t k = 0; k < 10000; ++k) {
        WorkerSample s;
        s.iteration = k;
        s.batch_size = k == 5123 ? 500 : (k == 777 ? 1 : 64);
        samples.push_back(s);
    }
    const auto size = [](const WorkerSample& s) { return double(s.batch_size); };
    const QList<QPointF> points = series_points(samples, 0, 9999, 400, size);
    EXPECT_LE(points.size(), 400);
    double top = 0, bottom = 1e9;
    for (const QPointF& p : points) {
        top = std::max(top, p.y());
        bottom = std::min(bottom, p.y());
    }
    EXPECT_EQ(top, 500);    // the one spike survives 25× downsampling
    EXPECT_EQ(bottom, 1);
    for (qsizetype i = 1; i < points.size(); ++i)
        EXPECT_LT(points[i - 1].x(), points[i].x());
    // Few enough to draw one by one: every sample in range, as it is.
    const QList<QPointF> zoomed = series_points(samples, 5100, 5149, 400, size);
    ASSERT_EQ(zoomed.size(), 50);
    EXPECT_EQ(zoomed[23], QPointF(5123, 500));
    // NaN (no prediction) is skipped.
    EXPECT_TRUE(series_points(samples, 0, 9999, 400, [](const WorkerSample& s) { return double(s.predicted_speed); }).isEmpty());
}

TEST(IterationWindow, FollowsTheDataUntilZoomedAndKeepsAtLeastFourIterations)
{
    IterationWindow window;
    window.set_data_range(0, 1000);
    EXPECT_TRUE(window.following());
    EXPECT_EQ(window.last(), 1000);
    window.zoom(0.5, 1000);
    EXPECT_FALSE(window.following());
    EXPECT_EQ(window.last() - window.first(), 500);
    EXPECT_EQ(window.last(), 1000);
    window.set_data_range(0, 2000); // new data does not move a zoomed view
    EXPECT_EQ(window.last(), 1000);
    window.pan(-100);
    EXPECT_EQ(window.first(), 400);
    window.zoom(0.0001, 450);
    EXPECT_EQ(window.last() - window.first(), 4);
    window.follow();
    EXPECT_EQ(window.last(), 2000);
}
