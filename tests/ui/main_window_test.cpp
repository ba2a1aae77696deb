#include "ui/main_window.h"
#include "ui/models/workers_model.h"
#include "ui/views/equilibrium_view.h"
#include "ui/views/prediction_view.h"
#include "ui/views/straggler_timeline.h"
#include "ui/views/workers_view.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QStatusBar>
#include <QTableView>
#include <QTest>
#include <gtest/gtest.h>

namespace {

// A running job of `count` workers as fulcrumd would announce it, with their states.
std::vector<fulcrum::protocol::WorkerState> show_running_job(fulcrum::ui::MainWindow& window, int count)
{
    fulcrum::protocol::JobStatus status;
    status.job = 1;
    status.name = "shown";
    status.workers = count;
    status.state = fulcrum::protocol::JobState::Running;
    window.store().ingest(fulcrum::protocol::JobUpdate { status, 0 });
    std::vector<fulcrum::protocol::WorkerState> workers;
    for (int w = 0; w < count; ++w)
        workers.push_back({ w, "w" + std::to_string(w), 32, std::nullopt, false, std::nullopt, true, 1 });
    window.store().ingest(fulcrum::protocol::WorkerUpdate { 1, workers, 0 });
    return workers;
}

// Iteration k of job 1's `count` workers, each row's times from `fill` (its job, worker,
// iteration and batch size of 32 already set), into the window's store.
template <class Fill> void ingest_iteration(fulcrum::ui::MainWindow& window, std::int64_t k, int count, Fill fill)
{
    fulcrum::protocol::IterationRows rows { 1, k, {}, 0 };
    for (int w = 0; w < count; ++w) {
        fulcrum::IterationRecord r;
        r.job = 1;
        r.worker = w;
        r.iteration = k;
        r.batch_size = 32;
        fill(r);
        rows.rows.push_back(r);
    }
    window.store().ingest(rows);
}

} // namespace

TEST(MainWindow, OpensWithTheProductNameAndRendersOffscreen)
{
    fulcrum::ui::MainWindow window;
    window.show();
    QApplication::processEvents();
    EXPECT_EQ(window.windowTitle(), QStringLiteral("Fulcrum"));
    EXPECT_TRUE(window.statusBar()->currentMessage().contains(QStringLiteral("Connect to fulcrumd")))
        << "until connected, the left side says what to do";
    const QImage image = window.grab().toImage();
    ASSERT_FALSE(image.isNull());
    EXPECT_GE(image.width(), 640);
    // Not a blank frame: the title and chart put more than one colour on screen.
    EXPECT_NE(image.pixel(20, 20), image.pixel(image.width() / 2, image.height() / 2));
}

// At an operator's usual screen sizes the workers table shows at least eight workers
// without scrolling, and the charts keep most of the height.
TEST(MainWindow, TheWorkersTableShowsEightWorkersAt1280x800And1920x1080)
{
    for (const QSize size : { QSize(1280, 800), QSize(1920, 1080) }) {
        SCOPED_TRACE(size.width());
        fulcrum::ui::MainWindow window;
        window.resize(size);
        show_running_job(window, 12);
        window.show();
        QApplication::processEvents();
        QTableView* table = window.workers_view().table();
        ASSERT_EQ(table->model()->rowCount(), 12);
        int visible = 0;
        for (int r = 0; r < table->model()->rowCount(); ++r)
            if (table->viewport()->rect().contains(table->visualRect(table->model()->index(r, 0))))
                ++visible;
        EXPECT_GE(visible, 8) << "rows fully visible in the workers table";
        EXPECT_GE(window.equilibrium_view().height(), size.height() / 3) << "the charts keep their room";
    }
}

// 64 workers are found by sorting and filtering (issue 44 item 2): "Stragglers first" puts
// the longest batch at the top, a header sorts numbers as numbers, the filter finds a worker
// by its state or id, and the operator's actions go to the worker on the row chosen, not to
// the worker that row would hold unsorted.
TEST(MainWindow, SixtyFourWorkersSortStragglersFirstAndFilterByStateOrId)
{
    using fulcrum::ui::WorkersModel;
    fulcrum::ui::MainWindow window;
    window.resize(1280, 800);
    QAbstractItemModelTester check(&window.store().workers(), QAbstractItemModelTester::FailureReportingMode::Fatal);
    std::vector<fulcrum::protocol::WorkerState> workers = show_running_job(window, 64);
    workers[5].excluded = true;
    window.store().ingest(fulcrum::protocol::WorkerUpdate { 1, workers, 0 });
    fulcrum::protocol::IterationRows rows { 1, 7, {}, 0 };
    for (int w = 0; w < 64; ++w) {
        fulcrum::IterationRecord r;
        r.job = 1;
        r.worker = w;
        r.iteration = 7;
        r.batch_size = 8 + w % 5; // 8 to 12: sorted as numbers, 9 comes before 10
        r.compute_s = w == 37 ? 0.9 : 0.01 * (1 + w % 7);
        r.wait_s = 0.9 - r.compute_s;
        r.speed = r.batch_size / r.compute_s;
        rows.rows.push_back(r);
    }
    window.store().ingest(rows);
    window.show();
    QApplication::processEvents();
    fulcrum::ui::WorkersView& view = window.workers_view();
    QTableView* table = view.table();
    const auto worker_on = [&](int row) { return table->model()->index(row, WorkersModel::Worker).data().toInt(); };
    EXPECT_EQ(worker_on(0), 0) << "in the workers' order at first";
    EXPECT_EQ(worker_on(63), 63);

    view.stragglers_first();
    EXPECT_EQ(worker_on(0), 37) << "the slowest batch leads";
    EXPECT_EQ(table->model()->index(0, WorkersModel::Wait).data().toString(), QStringLiteral("0.0 ms · 0 %"));
    table->selectRow(0);
    EXPECT_EQ(view.selected_worker(), 37) << "the row chosen, sorted";

    table->sortByColumn(WorkersModel::BatchSize, Qt::AscendingOrder);
    std::vector<int> sizes;
    for (int r = 0; r < table->model()->rowCount(); ++r)
        sizes.push_back(table->model()->index(r, WorkersModel::BatchSize).data().toInt());
    EXPECT_TRUE(std::is_sorted(sizes.begin(), sizes.end())) << "as numbers";

    view.filter()->setText(QStringLiteral("excluded"));
    ASSERT_EQ(table->model()->rowCount(), 1);
    EXPECT_EQ(worker_on(0), 5);
    table->selectRow(0);
    EXPECT_EQ(view.selected_worker(), 5);
    const std::vector<fulcrum::WorkerId> drawn = window.equilibrium_view().drawn_workers();
    EXPECT_NE(std::find(drawn.begin(), drawn.end(), 5), drawn.end())
        << "the chosen worker's lines join the 64-worker charts";
    view.filter()->setText(QStringLiteral("w42"));
    ASSERT_EQ(table->model()->rowCount(), 1);
    EXPECT_EQ(worker_on(0), 42);
    view.filter()->clear();
    EXPECT_EQ(table->model()->rowCount(), 64);

    // The table goes on sorting as rows come: worker 3 becomes the straggler.
    view.stragglers_first();
    rows.iteration = 8;
    for (fulcrum::IterationRecord& r : rows.rows) {
        r.iteration = 8;
        r.compute_s = r.worker == 3 ? 2.0 : 0.01;
    }
    window.store().ingest(rows);
    QApplication::processEvents();
    EXPECT_EQ(worker_on(0), 3);
    if (const QByteArray out = qgetenv("FULCRUM_SCREENSHOT_DIR"); !out.isEmpty())
        window.grab().save(QString::fromLocal8Bit(out) + QStringLiteral("/workers-sorted.png"));
}

// One worker chosen is the same worker in every view (issue 44 item 2, "colours only for what
// is highlighted"): a row chosen in the table brings that worker's lines forward in the
// equilibrium charts, the others faded, outlines its timeline lane and is the prediction
// view's worker; a worker found by
// name in the timeline's search box is selected in the table, even under a filter that hid
// it; a name that is no worker says so under the timeline.
TEST(MainWindow, AWorkerChosenInTheTableIsHighlightedInEveryViewAndFoundByName)
{
    fulcrum::ui::MainWindow window;
    window.resize(1280, 800);
    show_running_job(window, 8);
    for (std::int64_t k = 0; k < 5; ++k)
        ingest_iteration(window, k, 8, [k](fulcrum::IterationRecord& r) {
            r.start_s = static_cast<double>(k);
            r.compute_s = 0.1 * (1 + r.worker);
            r.end_s = r.start_s + r.compute_s;
            r.wait_s = 0.8 - r.compute_s;
        });
    window.show();
    ASSERT_TRUE(window.show_view(QStringLiteral("equilibrium")));
    window.refresh_views();
    QApplication::processEvents();
    fulcrum::ui::WorkersView& view = window.workers_view();
    const auto alpha_of = [&](const QString& name) {
        for (QAbstractSeries* series : window.equilibrium_view().batch_size_chart()->chart()->series())
            if (series->name() == name)
                return static_cast<QLineSeries*>(series)->pen().color().alpha();
        return -1;
    };
    ASSERT_EQ(alpha_of(QStringLiteral("w1")), 255);
    view.table()->selectRow(2);
    ASSERT_EQ(view.selected_worker(), 2);
    EXPECT_EQ(window.equilibrium_view().highlighted(), 2);
    EXPECT_EQ(alpha_of(QStringLiteral("w2")), 255);
    EXPECT_LT(alpha_of(QStringLiteral("w1")), 100) << "the others fade";
    EXPECT_EQ(window.timeline().chosen(), 2);
    const auto* predicted = window.prediction_view().findChild<QComboBox*>();
    ASSERT_NE(predicted, nullptr);
    EXPECT_EQ(predicted->currentText(), QStringLiteral("w2")) << "the prediction view shows the worker chosen";

    view.filter()->setText(QStringLiteral("w3"));
    auto* find = window.findChild<QLineEdit*>(QStringLiteral("find-worker"));
    ASSERT_NE(find, nullptr);
    find->setText(QStringLiteral("w6"));
    emit find->returnPressed();
    EXPECT_EQ(view.selected_worker(), 6) << "found through a filter that hid it";
    EXPECT_TRUE(view.filter()->text().isEmpty());
    EXPECT_EQ(window.timeline().chosen(), 6);
    EXPECT_EQ(window.equilibrium_view().highlighted(), 6);
    EXPECT_EQ(predicted->currentText(), QStringLiteral("w6"));

    find->setText(QStringLiteral("w9"));
    emit find->returnPressed();
    EXPECT_EQ(view.selected_worker(), 6) << "no worker 9: nothing changes";
    bool said = false;
    for (const QLabel* label : window.findChildren<QLabel*>())
        said = said || label->text().contains(QStringLiteral("There is no worker 9"));
    EXPECT_TRUE(said) << "the refusal is shown under the timeline";

    // Ctrl +/− on the timeline zoom its lanes, not the iterations (the View menu's Zoom
    // in/out shortcuts are the same keys everywhere else).
    ASSERT_TRUE(window.show_view(QStringLiteral("timeline")));
    QApplication::processEvents();
    window.timeline().setFocus();
    const auto first = window.iteration_window().first(), last = window.iteration_window().last();
    QTest::keyClick(&window.timeline(), Qt::Key_Plus, Qt::ControlModifier);
    EXPECT_LT(window.timeline().lanes().count, 8) << "Ctrl++ zoomed into fewer workers";
    const int zoomed = window.timeline().lanes().count;
    QTest::keyClick(&window.timeline(), Qt::Key_Minus, Qt::ControlModifier);
    EXPECT_GT(window.timeline().lanes().count, zoomed);
    EXPECT_EQ(window.iteration_window().first(), first) << "the iterations shown stay";
    EXPECT_EQ(window.iteration_window().last(), last);
}

// A console that falls behind is told so (issue 44 item 1, state that stays right): fulcrumd's
// `missed` with dropped frames puts a warning over the charts that counts them and says
// where everything is; a `missed` of coalesced states only (nothing lost) says nothing.
TEST(MainWindow, AConsoleThatFellBehindSaysWhatItLost)
{
    fulcrum::ui::MainWindow window;
    show_running_job(window, 4);
    window.show();
    const auto notice = [&]() -> QString {
        for (const QLabel* label : window.findChildren<QLabel*>())
            if (label->isVisible() && label->text().contains(QStringLiteral("fell behind")))
                return label->text();
        return {};
    };
    window.store().ingest(fulcrum::protocol::Missed { 0, 12 });
    QApplication::processEvents();
    EXPECT_TRUE(notice().isEmpty()) << "superseded states are no loss";
    window.store().ingest(fulcrum::protocol::Missed { 120, 37 });
    window.store().ingest(fulcrum::protocol::Missed { 30, 0 });
    QApplication::processEvents();
    EXPECT_EQ(window.store().dropped(), 150);
    EXPECT_TRUE(notice().contains(QStringLiteral("dropped 150"))) << notice().toStdString();
    EXPECT_TRUE(notice().contains(QStringLiteral("Open a recorded run"))) << "where the whole run is";
    window.store().forget_server(); // connecting to another server
    QApplication::processEvents();
    EXPECT_EQ(window.store().dropped(), 0);
    EXPECT_TRUE(notice().isEmpty()) << "the other server's losses are not this one's";
}

// The workers table shows where each worker computes and its GPU's memory and utilisation
// once a job has GPU workers, with tooltips that say what each number is; a CPU job's table
// keeps those columns hidden.
TEST(MainWindow, GpuWorkersShowTheirDeviceMemoryAndUtilisation)
{
    using fulcrum::ui::WorkersModel;
    fulcrum::ui::MainWindow window;
    window.resize(1280, 800);
    QTableView* table = window.workers_view().table();
    std::vector<fulcrum::protocol::WorkerState> workers = show_running_job(window, 3);
    EXPECT_TRUE(table->isColumnHidden(WorkersModel::Device)) << "a CPU job";
    EXPECT_TRUE(table->isColumnHidden(WorkersModel::GpuMemory));

    workers[1].device = "cuda:0";
    workers[1].sms = 64;
    workers[2].device = "cuda:1";
    window.store().ingest(fulcrum::protocol::WorkerUpdate { 1, workers, 0 });
    fulcrum::protocol::IterationRows rows { 1, 4, {}, 0 };
    for (int w = 0; w < 3; ++w) {
        fulcrum::IterationRecord r;
        r.job = 1;
        r.worker = w;
        r.iteration = 4;
        r.batch_size = 32;
        r.compute_s = 0.01;
        r.speed = 3200;
        if (w > 0)
            r.gpu = { 1.5, 0.25, w == 1 ? std::optional<double>(0.5) : std::nullopt };
        rows.rows.push_back(r);
    }
    window.store().ingest(rows);
    window.show();
    QApplication::processEvents();
    for (const int column : { WorkersModel::Device, WorkersModel::GpuMemory, WorkersModel::GpuUtilization })
        EXPECT_FALSE(table->isColumnHidden(column)) << column;
    const QAbstractItemModel& model = *table->model();
    EXPECT_EQ(model.index(0, WorkersModel::Device).data().toString(), QStringLiteral("cpu"));
    EXPECT_EQ(model.index(1, WorkersModel::Device).data().toString(), QStringLiteral("cuda:0 · 64 SMs"));
    EXPECT_EQ(model.index(2, WorkersModel::Device).data().toString(), QStringLiteral("cuda:1"));
    EXPECT_EQ(model.index(0, WorkersModel::GpuMemory).data().toString(), QString());
    EXPECT_EQ(model.index(1, WorkersModel::GpuMemory).data().toString(), QStringLiteral("1.50 GB · 25 %"));
    EXPECT_EQ(model.index(1, WorkersModel::GpuUtilization).data().toString(), QStringLiteral("50 %"));
    EXPECT_EQ(model.index(2, WorkersModel::GpuUtilization).data().toString(), QString());
    EXPECT_TRUE(model.index(2, WorkersModel::GpuUtilization)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("libnvidia-ml.so.1")));
    EXPECT_TRUE(
        model.index(1, WorkersModel::GpuMemory).data(Qt::ToolTipRole).toString().contains(QStringLiteral("95 %")));
    EXPECT_FALSE(model.headerData(WorkersModel::GpuMemory, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty());
    if (const QByteArray out = qgetenv("FULCRUM_SCREENSHOT_DIR"); !out.isEmpty())
        window.grab().save(QString::fromLocal8Bit(out) + QStringLiteral("/gpu-workers.png"));
}

// A stalled worker as an operator sees it: the workers table says since when its batch runs
// and what it was predicted to take, and the charts mark the stall in the trouble colour.
TEST(MainWindow, AStalledWorkerIsShownInTheTableAndMarkedOnTheCharts)
{
    using fulcrum::ui::WorkersModel;
    fulcrum::ui::MainWindow window;
    window.resize(1280, 800);
    std::vector<fulcrum::protocol::WorkerState> workers = show_running_job(window, 4);
    fulcrum::protocol::JobStatus status;
    status.job = 1;
    status.name = "shown";
    status.workers = 4;
    status.state = fulcrum::protocol::JobState::Running;
    status.iteration = 29;
    status.iterations = 60;
    status.time_s = 5.4;
    window.store().ingest(fulcrum::protocol::JobUpdate { status, 0 });
    for (std::int64_t k = 0; k < 30; ++k)
        ingest_iteration(window, k, 4, [k](fulcrum::IterationRecord& r) {
            r.start_s = 0.1 * static_cast<double>(k) + (k > 20 ? 2.5 : 0.0);
            r.compute_s = r.worker == 2 && k == 20 ? 2.5 : 0.05;
            r.end_s = r.start_s + r.compute_s;
            r.speed = r.batch_size / r.compute_s;
        });
    fulcrum::EventRecord stalled;
    stalled.job = 1;
    stalled.iteration = 20;
    stalled.time_s = 2.0 + 2.0; // its batch started at 2 s
    stalled.kind = "worker-stalled";
    stalled.worker = 2;
    stalled.actor = "system";
    stalled.message = "worker 2 stalled: its batch of 32 has taken 2 s, predicted 0.05 s (its limit 2 s: ...)";
    window.store().ingest(fulcrum::protocol::Event { stalled, 0 });
    workers[2].stalled_since = 2.0;
    workers[2].predicted_s = 0.05;
    window.store().ingest(fulcrum::protocol::WorkerUpdate { 1, workers, 0 });
    window.show();
    QApplication::processEvents();
    EXPECT_EQ(window.workers_view().table()->model()->index(2, WorkersModel::State).data().toString(),
        QStringLiteral("stalled since 2.0 s, predicted 0.05 s"));
    if (const QByteArray out = qgetenv("FULCRUM_SCREENSHOT_DIR"); !out.isEmpty()) {
        window.grab().save(QString::fromLocal8Bit(out) + QStringLiteral("/stalled-worker.png"));
        window.timeline().resize(1200, 300);
        QTest::qWait(300);
        window.timeline().grab().save(QString::fromLocal8Bit(out) + QStringLiteral("/stalled-timeline.png"));
    }
}

// The application must outlive every widget and die before Qt's globals: own it in main().
int main(int argc, char** argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen"); // CI has no display
    QApplication app(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
