// The console's bounded histories and what the charts draw from them.

#include "ui/console_store.h"
#include "ui/models/iteration_history.h"
#include "ui/models/ring_buffer.h"
#include "ui/views/chart_axes.h"
#include "ui/views/equilibrium_view.h"
#include "ui/views/iteration_window.h"
#include "ui/views/lane_raster.h"
#include "ui/views/palette.h"
#include "ui/views/series_points.h"
#include "ui/views/straggler_timeline.h"

#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QKeyEvent>
#include <QLegendMarker>
#include <QLineSeries>
#include <QSignalSpy>
#include <QValueAxis>
#include <QWheelEvent>
#include <cmath>
#include <gtest/gtest.h>
#include <memory>
#include <set>
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

// Iteration k of `workers` workers, each row's numbers from `fill` (its worker and
// iteration set already); a row `fill` returns false for is left out (the worker sat out).
template <class Fill> protocol::IterationRows rows_of(std::int64_t k, int workers, Fill fill)
{
    protocol::IterationRows rows;
    rows.iteration = k;
    for (WorkerId w = 0; w < workers; ++w) {
        IterationRecord r;
        r.worker = w;
        r.iteration = k;
        if (fill(r))
            rows.rows.push_back(r);
    }
    return rows;
}

// 30 iterations of `workers` workers, 0.2 s apart, in a store showing them: each worker
// computes compute(worker) s of a 0.15 s batch and waits the rest at the barrier.
template <class Compute> void fill_timeline(ConsoleStore& store, int workers, Compute compute)
{
    for (std::int64_t k = 0; k < 30; ++k)
        store.ingest(rows_of(k, workers, [k, &compute](IterationRecord& r) {
            r.batch_size = 16;
            r.compute_s = compute(r.worker);
            r.start_s = 0.2 * static_cast<double>(k);
            r.end_s = r.start_s + r.compute_s;
            r.wait_s = 0.15 - r.compute_s;
            return true;
        }));
    store.show_job(0);
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
    EXPECT_EQ(top, 500); // the one spike survives 25× downsampling
    EXPECT_EQ(bottom, 1);
    for (qsizetype i = 1; i < points.size(); ++i)
        EXPECT_LT(points[i - 1].x(), points[i].x());
    // Few enough to draw one by one: every sample in range, as it is.
    const QList<QPointF> zoomed = series_points(samples, 5100, 5149, 400, size);
    ASSERT_EQ(zoomed.size(), 50);
    EXPECT_EQ(zoomed[23], QPointF(5123, 500));
    // NaN (no prediction) is skipped.
    EXPECT_TRUE(series_points(samples, 0, 9999, 400, [](const WorkerSample& s) {
        return double(s.predicted_speed);
    }).isEmpty());
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

TEST(IterationWindow, AFollowingAxisKeepsItsScaleUntilTheDataFillIt)
{
    AxisSpan shown = follow_span({}, 0, 100);
    EXPECT_EQ(shown, (AxisSpan { 0, 105 })); // a twentieth of room past the newest
    EXPECT_EQ(follow_span(shown, 0, 104), shown);
    EXPECT_EQ(follow_span(shown, 5, 105), shown); // the oldest moved in by no more than the room
    EXPECT_EQ(follow_span(shown, 0, 106), (AxisSpan { 0, 106 + 0.05 * 106 }));
    EXPECT_EQ(follow_span(shown, 6, 104), (AxisSpan { 6, 104 + 0.05 * 98 }));
}

namespace {

// Two workers over `iterations` iterations; worker 1 is the straggler in every one, by more
// in every third.
JobHistory striped_history(std::int64_t iterations, std::size_t capacity = 10000)
{
    JobHistory history(capacity);
    double t = 0;
    for (std::int64_t k = 0; k < iterations; ++k) {
        const auto rows = iteration(k, k % 3 == 0 ? 1.5 : 1.2, t);
        t = barrier_s(rows);
        history.append(rows);
    }
    return history;
}

std::vector<double> exact_lateness(const JobHistory& h)
{
    std::vector<double> out;
    for (int w = 0; w < h.workers(); ++w) {
        double sum = 0;
        for (std::size_t i = 0; i < h.worker(w).size(); ++i)
            sum += lateness_of(h.worker(w)[i], h.iterations()[i]);
        out.push_back(sum / static_cast<double>(h.worker(w).size()));
    }
    return out;
}

} // namespace

TEST(LaneRaster, ExtendingItIterationByIterationDrawsWhatOneBuildDraws)
{
    JobHistory whole = striped_history(3000);
    LaneRaster built;
    const LaneRaster::Key key { &whole, whole.generation(), 0, whole.iterations().back().barrier_s * 1.05, 600, 80, 0 };
    built.update(key, 2999);

    // The same key as the iterations arrive, as a following timeline does frame by frame.
    JobHistory growing(10000);
    LaneRaster extended;
    double t = 0;
    for (std::int64_t k = 0; k < 3000; ++k) {
        const auto rows = iteration(k, k % 3 == 0 ? 1.5 : 1.2, t);
        t = barrier_s(rows);
        growing.append(rows);
        if (k % 7 == 0 || k == 2999)
            extended.update({ &growing, growing.generation(), key.t0, key.t1, key.width, key.height, 0 }, k);
    }
    EXPECT_EQ(extended.image(), built.image());
    ASSERT_EQ(extended.lateness().size(), 2u);
    for (std::size_t w = 0; w < 2; ++w)
        EXPECT_NEAR(extended.lateness()[w], built.lateness()[w], 1e-12);
    const std::vector<double> exact = exact_lateness(whole);
    EXPECT_NEAR(built.lateness()[0], exact[0], 1e-9);
    EXPECT_NEAR(built.lateness()[1], exact[1], 1e-9);
    EXPECT_EQ(built.lateness()[0], 0.0); // the fastest is never late
    EXPECT_GT(built.lateness()[1], 0.1);

    // 3000 iterations in 600 pixels: five to a column, summed. Worker 1's lane carries the
    // straggler mark along its top in every column, worker 0's in none.
    const int lane1 = built.lane_top(1);
    int marked0 = 0, marked1 = 0;
    for (int x = 0; x < 560; ++x) {
        marked0 += built.image().pixel(x, built.lane_top(0)) == straggler_colour().rgba();
        marked1 += built.image().pixel(x, lane1) == straggler_colour().rgba();
    }
    EXPECT_EQ(marked0, 0);
    EXPECT_GT(marked1, 500);
    // Compute sits at the bottom of each lane.
    EXPECT_EQ(built.image().pixel(300, lane1 + built.lane_height() - 1), compute_colour().rgba());
}

TEST(LaneRaster, WideIterationsAreDrawnAsTheirThreeSegments)
{
    JobHistory h = striped_history(4);
    LaneRaster raster;
    raster.update({ &h, h.generation(), 0, h.iterations().back().barrier_s, 400, 40, 0 }, 3);
    // Iteration 1: worker 0 computes 0.1 s, communicates 0.02 s, then waits 0.02 s for worker
    // 1 (0.12 + 0.02 s); about 690 pixels a second.
    const IterationSummary& it = h.iterations()[1];
    const double px = 400 / h.iterations().back().barrier_s;
    const int y = raster.lane_top(0) + raster.lane_height() / 2;
    EXPECT_EQ(raster.image().pixel(static_cast<int>((it.start_s + 0.05) * px), y), compute_colour().rgba());
    EXPECT_EQ(raster.image().pixel(static_cast<int>((it.start_s + 0.11) * px), y), comm_colour().rgba());
    EXPECT_EQ(raster.image().pixel(static_cast<int>((it.start_s + 0.13) * px), y), wait_colour().rgba());
    // Worker 1, the straggler, has the red mark along the top of the whole iteration.
    EXPECT_EQ(raster.image().pixel(static_cast<int>((it.start_s + 0.07) * px), raster.lane_top(1)),
        straggler_colour().rgba());
}

TEST(SeriesDownsampler, KeptBucketsGiveWhatAFreshPassGives)
{
    RingBuffer<WorkerSample> samples(2000);
    SeriesDownsampler kept([](const WorkerSample& s) { return double(s.batch_size); });
    const auto size = [](const WorkerSample& s) { return double(s.batch_size); };
    for (std::int64_t k = 0; k < 5000; ++k) {
        WorkerSample s;
        s.iteration = k;
        s.batch_size = static_cast<std::int32_t>((k * 7919) % 97);
        samples.push_back(s);
        if (k % 13 != 0)
            continue;
        // Following (the ring wraps at 2000) and, now and then, a zoomed window.
        const std::int64_t first = k % 39 == 0 ? k / 2 : samples.front().iteration;
        EXPECT_EQ(kept.points(samples, { 1, 0 }, first, k, 300), series_points(samples, first, k, 300, size))
            << "at iteration " << k;
    }
    // Aligned buckets: a complete bucket's points do not move as the range grows.
    const QList<QPointF> before = series_points(samples, 3000, 4999, 300, size);
    const QList<QPointF> after = series_points(samples, 3000, 5100, 300, size);
    EXPECT_EQ(QList<QPointF>(after.begin(), after.begin() + 20), QList<QPointF>(before.begin(), before.begin() + 20));
}

// A job's first frames add its workers' series a few at a time; a complete refresh (a
// screenshot, an export) draws every worker at once.
TEST(EquilibriumView, AddsManyWorkersSeriesOverFramesAndAllAtOnceWhenAsked)
{
    const auto store_of = [](int workers) {
        auto store = std::make_unique<ConsoleStore>();
        double t = 0;
        for (std::int64_t k = 0; k < 5; ++k) {
            store->ingest(rows_of(k, workers, [t](IterationRecord& r) {
                r.batch_size = 10 + r.worker;
                r.compute_s = 0.1;
                r.start_s = t;
                r.end_s = t + 0.1;
                return true;
            }));
            t += 0.1;
        }
        store->show_job(0);
        return store;
    };
    const auto drawn_workers = [](const EquilibriumView& view) {
        std::set<QString> workers;
        for (const QString& line : view.visible_csv().split(QLatin1Char('\n')))
            if (line.startsWith(QStringLiteral("batch_size_w")))
                workers.insert(line.section(QLatin1Char(','), 0, 0));
        return workers.size();
    };
    const auto store = store_of(EquilibriumView::kMostLines);
    IterationWindow window;
    EquilibriumView view(*store, window);
    view.refresh();
    EXPECT_EQ(drawn_workers(view), static_cast<std::size_t>(EquilibriumView::kWorkersAddedPerFrame));
    QApplication::processEvents(); // the next frame brings the next few
    EXPECT_EQ(drawn_workers(view), static_cast<std::size_t>(2 * EquilibriumView::kWorkersAddedPerFrame));
    EquilibriumView at_once(*store, window);
    at_once.refresh_complete();
    EXPECT_EQ(drawn_workers(at_once), static_cast<std::size_t>(EquilibriumView::kMostLines));
    EXPECT_FALSE(at_once.draws_distribution());
}

// Issue 44 item 2: a 256-worker job's charts draw the workers' distribution (a band from the
// least to the greatest and the median) and the lines of the worst stragglers and of the
// worker the operator chose, each named in the legend, rather than 256 lines in repeating
// colours. A straggler that stops straggling leaves the legend.
TEST(EquilibriumView, ALargeJobDrawsTheDistributionAndTheWorstStragglersLines)
{
    ConsoleStore store;
    const auto add = [&](std::int64_t from, std::int64_t to, WorkerId slow) {
        for (std::int64_t k = from; k < to; ++k)
            store.ingest(rows_of(k, 256, [k, slow](IterationRecord& r) {
                r.batch_size = 10 + r.worker % 7;
                r.compute_s = r.worker == slow ? 0.5 : 0.1 + 0.001 * (r.worker % 11);
                r.start_s = 0.5 * static_cast<double>(k);
                r.end_s = r.start_s + r.compute_s;
                return true;
            }));
    };
    add(0, 40, 200);
    store.show_job(0);
    IterationWindow window;
    window.set_data_range(0, 39);
    EquilibriumView view(store, window);
    view.resize(1000, 600);
    view.show();
    view.refresh_complete();
    QApplication::processEvents();
    EXPECT_TRUE(view.draws_distribution());
    const std::vector<WorkerId> drawn = view.drawn_workers();
    EXPECT_LE(drawn.size(), static_cast<std::size_t>(EquilibriumView::kStragglersDrawn + 1));
    EXPECT_NE(std::find(drawn.begin(), drawn.end(), 200), drawn.end()) << "the straggler's line";
    const QString csv = view.visible_csv();
    EXPECT_TRUE(csv.contains(QStringLiteral("batch_time_s_median,39,0.1")));
    EXPECT_TRUE(csv.contains(QStringLiteral("batch_time_s_greatest,39,0.5")));
    EXPECT_TRUE(csv.contains(QStringLiteral("batch_size_least,39,10")));
    EXPECT_TRUE(csv.contains(QStringLiteral("batch_size_greatest,39,16")));
    const auto legend_names = [&] {
        QStringList names;
        for (const QLegendMarker* m : view.batch_size_chart()->chart()->legend()->markers())
            if (m->isVisible())
                names << m->label();
        return names;
    };
    EXPECT_TRUE(legend_names().contains(QStringLiteral("w200")));
    EXPECT_TRUE(legend_names().contains(QStringLiteral("median worker")));

    view.set_chosen(17); // chosen in the workers table
    EXPECT_NE(std::find(view.drawn_workers().begin(), view.drawn_workers().end(), 17), view.drawn_workers().end());
    view.set_chosen(std::nullopt);
    add(40, 400, 90); // worker 90 straggles from now on; the window shows only its time
    window.set_data_range(0, 399);
    window.zoom(0.1, 399);
    view.refresh_complete();
    QApplication::processEvents();
    EXPECT_NE(std::find(view.drawn_workers().begin(), view.drawn_workers().end(), 90), view.drawn_workers().end());
    EXPECT_FALSE(legend_names().contains(QStringLiteral("w17"))) << "no longer chosen";
    if (const QByteArray out = qgetenv("FULCRUM_SCREENSHOT_DIR"); !out.isEmpty())
        view.grab().save(QString::fromLocal8Bit(out) + QStringLiteral("/equilibrium-256.png"));
}

// The scheduler view's time axis (issue 44 item 3, nice tick values): its ticks were the
// range in four, 26.1, 52.2 and 78.4 s over 104.5 s; now round seconds from 0, the range
// exactly the time shown, and decimals only where the step needs them.
TEST(ChartAxes, ATimeAxisTicksAtRoundSecondsOverExactlyItsRange)
{
    QValueAxis axis;
    set_time_axis(axis, 0, 104.5);
    EXPECT_EQ(axis.min(), 0);
    EXPECT_EQ(axis.max(), 104.5);
    EXPECT_EQ(axis.tickType(), QValueAxis::TicksDynamic);
    EXPECT_EQ(axis.tickAnchor(), 0);
    EXPECT_EQ(axis.tickInterval(), 20);
    EXPECT_EQ(axis.labelFormat(), QStringLiteral("%.0f"));
    set_time_axis(axis, 0, 0.37);
    EXPECT_DOUBLE_EQ(axis.tickInterval(), 0.05);
    EXPECT_EQ(axis.labelFormat(), QStringLiteral("%.2f"));
}

// An axis rescaled by a factor of 10^4 or more (a first frame's empty 1e-6 s batch-time axis,
// then 0.1 s batches; an iteration axis from 10 iterations to a replay's 100,000) keeps a
// handful of ticks at every step: Qt Charts lays out one item per tick as soon as the range
// or the interval changes, and the old interval over the new range froze the console of a
// 256-worker job (console_frames never got past its first view).
TEST(ChartAxes, ARescaledAxisNeverLaysOutMoreThanAFewTicks)
{
    auto* chart = new QChart; // the view's
    auto* series = new QLineSeries;
    chart->addSeries(series);
    auto* y = new QValueAxis;
    auto* x = new QValueAxis;
    chart->addAxis(y, Qt::AlignLeft);
    chart->addAxis(x, Qt::AlignBottom);
    series->attachAxis(x);
    series->attachAxis(y);
    QChartView view(chart);
    view.resize(800, 400);
    view.show();
    QApplication::processEvents();
    const auto items = [&] { return view.scene()->items().size(); };
    const qsizetype settled = items();
    // Ratios of 10^4: the old order laid out tens of thousands of ticks here (and a million for
    // the 10^6 of a live job's first frames), so a regression fails in seconds, not hangs.
    for (const double max : { 1e-3, 10.0, 1e-3, 20.0, 0.5 }) {
        set_value_axis(*y, max, false);
        ASSERT_LT(items(), settled + 100) << "after an axis to " << max;
    }
    for (const double to : { 10.0, 20000.0, 20.0, 50000.0 }) {
        set_iteration_axis(*x, { 0, to });
        ASSERT_LT(items(), settled + 100) << "after an iteration axis to " << to;
    }
}

// Issue 44 item 3: an excluded worker's line is broken at the iterations it sat out, not drawn
// as a diagonal across them, both when every iteration is a point and when the chart shows
// thousands of iterations as bucketed points; a worker that never left stays one line.
TEST(EquilibriumView, AnExcludedWorkersLineIsBrokenAtItsGap)
{
    for (const std::int64_t iterations : { std::int64_t { 60 }, std::int64_t { 6000 } }) {
        SCOPED_TRACE(iterations);
        const std::int64_t gap_from = iterations / 3, gap_to = 2 * iterations / 3; // worker 2 sits out
        ConsoleStore store;
        for (std::int64_t k = 0; k < iterations; ++k)
            store.ingest(rows_of(k, 3, [k, gap_from, gap_to](IterationRecord& r) {
                if (r.worker == 2 && k >= gap_from && k < gap_to)
                    return false;
                r.batch_size = r.worker == 2 ? 8 : 20 + static_cast<std::int32_t>(k % 3);
                r.compute_s = 0.05;
                r.start_s = 0.1 * static_cast<double>(k);
                r.end_s = r.start_s + 0.05;
                return true;
            }));
        store.show_job(0);
        IterationWindow window;
        window.set_data_range(*store.history().first_iteration(), *store.history().last_iteration());
        EquilibriumView view(store, window);
        view.resize(1000, 600);
        view.refresh_complete();
        EXPECT_EQ(view.line_stretches(0), std::make_pair(1, 1)) << "a worker that never left is one line";
        EXPECT_EQ(view.line_stretches(2), std::make_pair(2, 2)) << "broken once, in both charts";
        for (const QString& line : view.visible_csv().split(QLatin1Char('\n')))
            if (line.startsWith(QStringLiteral("batch_size_w2,"))) {
                const qint64 at = line.section(QLatin1Char(','), 1, 1).toLongLong();
                EXPECT_TRUE(at < gap_from || at >= gap_to) << "a point of worker 2 at " << at;
            }
        view.highlight(2); // its pen reaches every stretch
        view.highlight(-1);
        if (const QByteArray out = qgetenv("FULCRUM_SCREENSHOT_DIR"); !out.isEmpty())
            view.grab().save(QString::fromLocal8Bit(out) + QStringLiteral("/excluded-gap-%1.png").arg(iterations));
    }
}

// Issue 44 item 2: a large noisy job reaches equilibrium. Each of 64 workers' batch times
// varies by ±8 % around the same mean, and one worker at a time runs 18 % over: the whole
// range over the mean stays above 20 % (never an equilibrium), while the interdecile range
// and the slowest's excess over the median, which a large job is judged on, stay under it.
// Eight workers with the same noise are still judged on their whole range, and a real
// straggler (one worker at twice the others' time) still keeps 64 workers out of it.
TEST(JobHistory, ALargeNoisyJobReachesEquilibriumOnItsInterdecileSpread)
{
    struct Case {
        int workers;
        double over; // the slow worker's excess
        bool equilibrium;
    };
    for (const Case c : { Case { 8, 0.18, false }, Case { 64, 0.18, true }, Case { 64, 1.0, false } }) {
        SCOPED_TRACE(std::to_string(c.workers) + " workers, one " + std::to_string(c.over) + " over");
        JobHistory history;
        for (std::int64_t k = 0; k < 40; ++k)
            history.append(rows_of(k, c.workers, [k, c](IterationRecord& r) {
                r.batch_size = 16;
                const double noise
                    = 0.08 * std::sin(1.7 * static_cast<double>(r.worker) + 0.9 * static_cast<double>(k));
                r.compute_s = 0.1 * (1 + (r.worker == k % c.workers ? c.over : noise));
                r.start_s = 0.2 * static_cast<double>(k);
                r.end_s = r.start_s + r.compute_s;
                return true;
            }));
        const auto found = equilibria(history, 0.2);
        EXPECT_EQ(history.iterations().back().robust_spread, c.workers > 16);
        if (c.equilibrium) {
            ASSERT_EQ(found.size(), 1u);
            EXPECT_EQ(found[0].first, 0);
            EXPECT_LT(history.iterations().back().spread, 0.2);
        } else {
            EXPECT_TRUE(found.empty());
            EXPECT_GT(history.iterations().back().spread, 0.2);
        }
    }
}

// Issue 44 item 2: a 256-worker timeline in 300 pixels (lanes of about one pixel) labels
// every 20th lane, so its labels stay readable instead of vanishing; 8 workers label each.
TEST(StragglerTimeline, LabelsLanesAtAReadableDensity)
{
    for (const int workers : { 8, 256 }) {
        SCOPED_TRACE(workers);
        ConsoleStore store;
        fill_timeline(store, workers, [](WorkerId w) { return 0.1 + (w % 17 == 3 ? 0.05 : 0.0); });
        IterationWindow window;
        window.set_data_range(0, 29);
        StragglerTimeline timeline(store, window);
        timeline.resize(900, 320);
        const double text = timeline.fontMetrics().height();
        const int every = timeline.label_every();
        EXPECT_GE(every * (300.0 / workers), text * 0.8) << "labels do not overlap";
        if (workers == 8)
            EXPECT_EQ(every, 1);
        else
            EXPECT_GE(every, 10);
        if (const QByteArray out = qgetenv("FULCRUM_SCREENSHOT_DIR"); !out.isEmpty())
            timeline.grab().save(QString::fromLocal8Bit(out) + QStringLiteral("/timeline-%1.png").arg(workers));
    }
}

// Issue 44 item 2: a 256-worker timeline is read lane by lane. Finding w200 zooms the lanes
// to a readable height around it and outlines it; the raster draws each worker in its own
// lane (w200 waits where its neighbours compute); Ctrl+wheel zooms the lanes about the one
// under the cursor, Page Up scrolls, Home shows every worker again, and a name that is no
// worker is refused with a sentence, changing nothing.
TEST(StragglerTimeline, AWorkerIsFoundInAReadableLaneAndTheLanesZoomAndScroll)
{
    constexpr int kWorkers = 256, kFound = 200;
    ConsoleStore store;
    fill_timeline(store, kWorkers, [](WorkerId w) { return w == kFound ? 0.01 : 0.14; });
    IterationWindow window;
    window.set_data_range(0, 29);
    StragglerTimeline timeline(store, window);
    timeline.resize(900, 320);
    using Lanes = StragglerTimeline::Lanes;
    EXPECT_EQ(timeline.lanes(), (Lanes { 0, kWorkers }));

    const QString refused = timeline.find_worker(QStringLiteral("w256"));
    EXPECT_TRUE(refused.contains(QStringLiteral("no worker 256"))) << refused.toStdString();
    EXPECT_TRUE(refused.contains(QStringLiteral("w0–w255"))) << refused.toStdString();
    EXPECT_TRUE(timeline.find_worker(QStringLiteral("slowest")).contains(QStringLiteral("not a worker")));
    EXPECT_EQ(timeline.lanes(), (Lanes { 0, kWorkers })) << "a refusal changes nothing";
    EXPECT_EQ(timeline.chosen(), std::nullopt);

    QSignalSpy found(&timeline, &StragglerTimeline::workerFound);
    EXPECT_EQ(timeline.find_worker(QStringLiteral(" W200 ")), QString());
    ASSERT_EQ(found.count(), 1);
    EXPECT_EQ(found.at(0).at(0).toInt(), kFound);
    EXPECT_EQ(timeline.chosen(), kFound);
    const Lanes zoomed = timeline.lanes();
    EXPECT_LT(zoomed.count, 30);
    EXPECT_GE(300.0 / zoomed.count, timeline.fontMetrics().height() * 1.2) << "a lane a line of text high";
    EXPECT_GE(kFound, zoomed.first);
    EXPECT_LT(kFound, zoomed.first + zoomed.count);
    EXPECT_EQ(timeline.label_every(), 1) << "every lane shown is labelled";

    // Each lane's pixels: how many are the compute colour and how many the wait colour.
    const QImage shot = timeline.grab().toImage();
    const auto colours_of = [&](fulcrum::WorkerId worker) {
        std::pair<int, int> compute_wait;
        for (int y = 0; y < shot.height(); ++y)
            for (int x = 90; x < shot.width() - 8; ++x) {
                const auto at = timeline.hit(QPoint(x, y));
                if (!at || at->first != worker)
                    continue;
                const QRgb c = shot.pixel(x, y) & 0xffffff;
                compute_wait.first += c == (compute_colour().rgb() & 0xffffff);
                compute_wait.second += c == (wait_colour().rgb() & 0xffffff);
            }
        return compute_wait;
    };
    const auto [found_compute, found_wait] = colours_of(kFound);
    EXPECT_GT(found_wait, 5 * found_compute) << "w200's lane is w200's: it waits";
    const auto [next_compute, next_wait] = colours_of(kFound + 1);
    EXPECT_GT(next_compute, 5 * next_wait) << "w201 computes";
    if (const QByteArray out = qgetenv("FULCRUM_SCREENSHOT_DIR"); !out.isEmpty())
        shot.save(QString::fromLocal8Bit(out) + QStringLiteral("/timeline-found-w200.png"));
    // The chosen lane is outlined in the highlight colour: a line of it just above the lane.
    int top_of_found = -1;
    for (int y = 0; y < shot.height() && top_of_found < 0; ++y)
        if (const auto at = timeline.hit(QPoint(400, y)); at && at->first == kFound)
            top_of_found = y;
    ASSERT_GT(top_of_found, 1);
    const QRgb highlight = timeline.palette().color(QPalette::Highlight).rgb() & 0xffffff;
    int outlined = 0;
    for (int y = top_of_found - 2; y <= top_of_found; ++y)
        for (int x = 0; x < shot.width(); ++x)
            outlined += (shot.pixel(x, y) & 0xffffff) == highlight ? 1 : 0;
    EXPECT_GT(outlined, shot.width() / 2) << "an outline across the lane's top";

    // Ctrl+wheel towards the user: more lanes, the one under the cursor held in place.
    int y_found = 0;
    for (int y = 0; y < 300 && !y_found; ++y)
        if (const auto at = timeline.hit(QPoint(400, y)); at && at->first == kFound)
            y_found = y + 2;
    ASSERT_GT(y_found, 0);
    QWheelEvent out_wheel(QPointF(400, y_found), timeline.mapToGlobal(QPointF(400, y_found)), {}, QPoint(0, -120),
        Qt::NoButton, Qt::ControlModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(&timeline, &out_wheel);
    const Lanes wider = timeline.lanes();
    EXPECT_GT(wider.count, zoomed.count);
    const auto still = timeline.hit(QPoint(400, y_found));
    ASSERT_TRUE(still);
    EXPECT_LE(std::abs(still->first - kFound), 1) << "the lane under the cursor stays under it";
    EXPECT_EQ(timeline.chosen(), kFound);

    QKeyEvent page_up(QEvent::KeyPress, Qt::Key_PageUp, Qt::NoModifier);
    QApplication::sendEvent(&timeline, &page_up);
    EXPECT_EQ(timeline.lanes().first, std::max(0, wider.first - wider.count));
    timeline.scroll_lanes(-10000);
    EXPECT_EQ(timeline.lanes().first, 0);
    timeline.scroll_lanes(10000);
    EXPECT_EQ(timeline.lanes().first + timeline.lanes().count, kWorkers) << "never past the last worker";
    timeline.set_chosen(3);
    EXPECT_LE(timeline.lanes().first, 3) << "the chosen worker is scrolled into view";
    QKeyEvent home(QEvent::KeyPress, Qt::Key_Home, Qt::NoModifier);
    QApplication::sendEvent(&timeline, &home);
    EXPECT_EQ(timeline.lanes(), (Lanes { 0, kWorkers }));
}

// Issue 44 item 3: the two equilibrium charts' x-axes line up. The lower chart's spread axis
// on the right and either chart's wider tick labels on the left made iteration 2238 sit at
// x = 1067 in one and 915 in the other; now one iteration is at one x in both, at any width.
TEST(EquilibriumView, TheTwoChartsPutAnIterationAtTheSameX)
{
    ConsoleStore store;
    for (std::int64_t k = 0; k < 3000; ++k)
        store.ingest(rows_of(k, 4, [k](IterationRecord& r) {
            r.batch_size = 100000 + r.worker; // wide labels on the batch axis
            r.compute_s = 0.0373 * (1 + 0.1 * r.worker);
            r.start_s = 0.2 * static_cast<double>(k);
            r.end_s = r.start_s + r.compute_s;
            return true;
        }));
    store.show_job(0);
    IterationWindow window;
    window.set_data_range(0, 2999);
    EquilibriumView view(store, window);
    view.show();
    for (const int width : { 1280, 900 }) {
        SCOPED_TRACE(width);
        view.resize(width, 600);
        view.refresh_complete();
        QApplication::processEvents();
        QApplication::processEvents();
        const auto x_of = [](QChartView* chart_view, double iteration) {
            QChart* chart = chart_view->chart();
            const QPointF at = chart->mapToPosition(QPointF(iteration, 0), chart->series().front());
            return chart_view->mapFromScene(at).x();
        };
        for (const double iteration : { 0.0, 2238.0, 2999.0 })
            EXPECT_NEAR(x_of(view.batch_size_chart(), iteration), x_of(view.batch_time_chart(), iteration), 1.0)
                << "iteration " << iteration;
    }
}

// Issue 44 item 3: a spread that hovers at the threshold leaves equilibrium for a couple of
// iterations and comes back; the chart marks the stretch once (its tooltip counts the
// interruptions) rather than once per equilibrium, while the summary stays exact.
TEST(EquilibriumView, AnEquilibriumBrieflyLeftIsMarkedOnce)
{
    ConsoleStore store;
    IterationWindow window;
    EquilibriumView view(store, window);
    double t = 0;
    std::int64_t k = 0;
    const auto add = [&](int count, double slow) {
        for (int i = 0; i < count; ++i, ++k, t += 0.5)
            store.ingest(iteration(k, slow, t));
    };
    add(12, 1);
    add(2, 3); // out for two iterations
    add(12, 1);
    add(2, 3);
    add(12, 1);
    add(30, 3); // out for good
    add(12, 1); // a new equilibrium, far from the first stretch
    store.show_job(0);
    window.set_data_range(0, k - 1);
    view.refresh_complete();
    std::vector<EventMark> marks;
    for (const EventMark& m : view.marks())
        if (m.kind == EventMark::Kind::Equilibrium)
            marks.push_back(m);
    ASSERT_EQ(marks.size(), 2u);
    EXPECT_EQ(marks[0].iteration, 0);
    EXPECT_TRUE(marks[0].tooltip.contains(QStringLiteral("left 2 times"))) << marks[0].tooltip.toStdString();
    EXPECT_EQ(marks[1].iteration, 70);
    EXPECT_EQ(view.equilibrium(), 70);
}

// Out of equilibrium, the summary says how many iterations in a row the spread has been
// under the threshold, of the ones an equilibrium needs, and when the last one ended.
TEST(EquilibriumView, SaysHowNearTheNextEquilibriumIs)
{
    ConsoleStore store;
    IterationWindow window;
    EquilibriumView view(store, window);
    double t = 0;
    const auto add = [&](std::int64_t k, double slow) {
        store.ingest(iteration(k, slow, t));
        t += 0.5;
    };
    for (std::int64_t k = 0; k < 15; ++k)
        add(k, 1);
    add(15, 3); // the spread jumps to (0.32 - 0.12) / 0.22 = 90.9 %
    for (std::int64_t k = 16; k < 20; ++k)
        add(k, 1);
    store.show_job(0);
    view.refresh_complete();
    EXPECT_FALSE(view.equilibrium());
    EXPECT_EQ(view.summary().toStdString(),
        std::string("Not in equilibrium at iteration 19: spread 0.0 %, under 20 % for 4 of the 10 iterations in a "
                    "row an equilibrium needs; the last one ended at iteration 15."));

    add(20, 3);
    view.refresh_complete();
    EXPECT_EQ(view.summary().toStdString(),
        std::string(
            "Not in equilibrium at iteration 20: spread 90.9 %, over 20 %; the last one ended at iteration 15."));

    for (std::int64_t k = 21; k < 31; ++k)
        add(k, 1);
    view.refresh_complete();
    EXPECT_EQ(view.equilibrium(), 21);
    EXPECT_EQ(
        view.summary(), QStringLiteral("Equilibrium since iteration 21 (spread under 20 %); newest iteration 30."));
}

// Issue 44 item 4: a newly chosen job's charts fit its own iterations. Following, a chart
// holds its scale while the iterations grow into it; a 600-iteration job chosen after a
// 4,000-iteration one kept the 0-4,000 axis.
TEST(EquilibriumView, ANewlyChosenJobsAxisFitsItsOwnIterations)
{
    ConsoleStore store;
    const auto add_job = [&](JobId job, std::int64_t iterations) {
        for (std::int64_t k = 0; k < iterations; ++k) {
            protocol::IterationRows rows;
            rows.job = job;
            rows.iteration = k;
            for (WorkerId w = 0; w < 2; ++w) {
                IterationRecord r;
                r.job = job;
                r.worker = w;
                r.iteration = k;
                r.batch_size = 16;
                r.compute_s = 0.01;
                r.start_s = 0.01 * static_cast<double>(k);
                r.end_s = r.start_s + 0.01;
                rows.rows.push_back(r);
            }
            store.ingest(rows);
        }
    };
    add_job(1, 4000);
    add_job(2, 600);
    IterationWindow window;
    EquilibriumView view(store, window);
    const auto axis_end = [&] {
        const auto axes = view.batch_size_chart()->chart()->axes(Qt::Horizontal);
        return qobject_cast<QValueAxis*>(axes.first())->max();
    };
    store.show_job(1);
    window.set_data_range(*store.history().first_iteration(), *store.history().last_iteration());
    view.refresh_complete();
    EXPECT_GE(axis_end(), 3999);
    store.show_job(2);
    window.follow_anew(); // as the main window does when the shown job changes
    window.set_data_range(*store.history().first_iteration(), *store.history().last_iteration());
    view.refresh_complete();
    EXPECT_LT(axis_end(), 1000) << "job 2's 600 iterations, not job 1's scale";
    EXPECT_GE(axis_end(), 599);
}

// Issue 44 item 3, readable charts: batch ticks are whole and round, time ticks round with
// the decimals their step needs; every action has a mark, automatic ones included (a timed
// exclusion's readmission), two at one iteration share one label, and no label runs past the
// plot into the legend.
TEST(EquilibriumView, TicksAreRoundAndEveryActionHasALabelThatStaysInThePlot)
{
    ConsoleStore store;
    for (std::int64_t k = 0; k < 60; ++k) {
        protocol::IterationRows rows;
        rows.job = 1;
        rows.iteration = k;
        for (WorkerId w = 0; w < 4; ++w) {
            IterationRecord r;
            r.job = 1;
            r.worker = w;
            r.iteration = k;
            r.batch_size = w == 3 ? 4 : 37;
            r.compute_s = w == 3 ? 0.0373 : 0.03;
            r.start_s = 0.04 * static_cast<double>(k);
            r.end_s = r.start_s + r.compute_s;
            rows.rows.push_back(r);
        }
        store.ingest(rows);
    }
    const auto event = [&](std::int64_t k, const char* kind, WorkerId w, const char* actor) {
        EventRecord e;
        e.job = 1;
        e.iteration = k;
        e.time_s = 0.04 * static_cast<double>(k);
        e.kind = kind;
        e.worker = w;
        e.message = std::string(kind) + " worker " + std::to_string(w);
        e.actor = actor;
        store.ingest(protocol::Event { e });
    };
    event(20, "pin", 1, "operator:ann");
    event(20, "exclude", 2, "operator:ann");
    event(40, "readmit", 2, "system: exclusion limit");
    event(59, "exclude", 3, "operator:ann");
    store.show_job(1);
    IterationWindow window;
    window.set_data_range(0, 59);
    EquilibriumView view(store, window);
    view.resize(1280, 800);
    view.show();
    QApplication::processEvents();
    view.refresh_complete();
    QApplication::processEvents();

    const auto axis
        = [](QChartView* chart) { return qobject_cast<QValueAxis*>(chart->chart()->axes(Qt::Vertical).first()); };
    QValueAxis* sizes = axis(view.batch_size_chart());
    EXPECT_EQ(sizes->labelFormat(), QStringLiteral("%.0f"));
    EXPECT_GE(sizes->tickInterval(), 1.0);
    EXPECT_EQ(std::fmod(sizes->tickInterval(), 1.0), 0.0) << "whole batch steps";
    EXPECT_EQ(std::fmod(sizes->max(), sizes->tickInterval()), 0.0) << "the axis ends on a tick";
    EXPECT_GE(sizes->max(), 37);
    QValueAxis* times = axis(view.batch_time_chart());
    EXPECT_NEAR(times->max(), 0.04, 1e-12) << "0.0373 s rounds up to the next tick";
    EXPECT_EQ(times->labelFormat(), QStringLiteral("%.2f"));

    std::vector<QString> labels;
    for (const EventMark& m : view.marks())
        if (m.kind == EventMark::Kind::Operator)
            labels.push_back(QStringLiteral("%1@%2").arg(m.label).arg(m.iteration));
    EXPECT_EQ(labels,
        (std::vector<QString> { QStringLiteral("pin w1, exclude w2@20"), QStringLiteral("readmit w2@40"),
            QStringLiteral("exclude w3@59") }));
    const auto drawn = view.drawn_labels();
    ASSERT_FALSE(drawn.empty());
    bool at_the_edge = false;
    for (const QGraphicsSimpleTextItem* text : drawn) {
        const QRectF plot = static_cast<const QChart*>(text->parentItem())->plotArea();
        const QRectF rect = text->mapRectToParent(text->boundingRect());
        EXPECT_LE(rect.right(), plot.right() + 0.5) << text->text().toStdString() << " runs into the legend";
        EXPECT_GE(rect.left(), plot.left() - 0.5) << text->text().toStdString();
        at_the_edge = at_the_edge || text->text() == QStringLiteral("exclude w3");
    }
    EXPECT_TRUE(at_the_edge) << "the last iteration's action is labelled too, left of its line";
    if (const QByteArray out = qgetenv("FULCRUM_SCREENSHOT_DIR"); !out.isEmpty())
        view.grab().save(QString::fromUtf8(out) + QStringLiteral("/equilibrium-marks.png"));
}
