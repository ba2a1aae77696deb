// The console's models fed the way the console is fed: the messages of a recorded run,
// replayed by the backend's ReplaySource (the test may use the backend; the console does
// not link it).

#include "db/run_reader.h"
#include "replay/replay_source.h"
#include "run/run_scenario.h"
#include "train/trainer.h"
#include "ui/client/commands.h"
#include "ui/client/protocol_client.h"
#include "ui/console_store.h"
#include "ui/models/runs_model.h"
#include "ui/views/cluster_map.h"
#include "ui/views/event_marks.h"
#include "ui/views/palette.h"
#include "ui/views/run_list_dialog.h"
#include "ui/views/scheduler_view.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <cmath>
#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace fulcrum;
using namespace fulcrum::protocol;

namespace {

constexpr int kIterations = 30;

// Four workers, one slow; worker 1 is pinned at 20 before the run starts.
struct RecordedRun {
    std::filesystem::path dir = std::filesystem::temp_directory_path() / ("fulcrum-ui-" + std::to_string(::getpid()));
    std::filesystem::path database = dir / "run.db";
    RunId run = 0;

    RecordedRun()
    {
        std::filesystem::create_directories(dir);
        const scenario::Scenario s = scenario::parse_scenario(R"({"name": "console", "seed": 3,
            "data": {"source": "synthetic", "train_size": 400, "test_size": 100, "dim": 8, "classes": 3},
            "model": {"type": "softmax"}, "training": {"total_batch": 64, "iterations": 30, "eval_interval": 10},
            "policy": {"type": "lbbsp-cpu", "predictor": {"type": "ema"}},
            "workers": [{"speed": 3000, "count": 3}, {"speed": 1000}]})",
            "console-test");
        run::RunOptions options;
        options.database = database;
        options.on_trainer = [](train::Trainer* t) {
            if (t)
                t->control().pin(1, 20, EventActor::person("operator", "test"));
        };
        run = run::run_scenario(s, options).run;
    }
    ~RecordedRun() { std::filesystem::remove_all(dir); }
};

} // namespace

TEST(ConsoleStore, AReplayedRunFillsTheJobsWorkersAndEventsModels)
{
    RecordedRun recorded;
    replay::ReplaySource source(recorded.database, recorded.run, 7, "run.db");
    ui::ConsoleStore store;
    // Qt's model checker watches every signal the models emit while they fill (rows
    // inserted in range, data changed inside the model, consistent parents and counts).
    QAbstractItemModelTester jobs_check(&store.jobs(), QAbstractItemModelTester::FailureReportingMode::Fatal);
    QAbstractItemModelTester workers_check(&store.workers(), QAbstractItemModelTester::FailureReportingMode::Fatal);
    QAbstractItemModelTester events_check(&store.events(), QAbstractItemModelTester::FailureReportingMode::Fatal);
    store.follow(7);
    store.ingest(IterationRows { 0, 3, { IterationRecord {} }, 0 }); // a live message: not this source
    for (std::int64_t k = 0; k < source.length(); ++k)
        for (const ServerMessage& m : source.step(k))
            store.ingest(m);
    for (const ServerMessage& m : source.finish())
        store.ingest(m);

    ui::JobsModel& jobs = store.jobs();
    ASSERT_EQ(jobs.rowCount(), 1);
    EXPECT_EQ(jobs.data(jobs.index(0, ui::JobsModel::State)).toString(), QStringLiteral("finished"));
    EXPECT_EQ(jobs.data(jobs.index(0, ui::JobsModel::Iteration)).toString(), QStringLiteral("30 / 30"));
    EXPECT_EQ(jobs.data(jobs.index(0, ui::JobsModel::Progress), ui::JobsModel::kFractionRole).toDouble(), 1.0);
    EXPECT_TRUE(jobs.data(jobs.index(0, ui::JobsModel::Policy)).toString().startsWith(QStringLiteral("lbbsp-cpu")));
    EXPECT_FALSE(jobs.data(jobs.index(0, ui::JobsModel::Accuracy)).toString().isEmpty());
    // The run clock beside the wall's elapsed time (issue 44 item 3): the run's own end.
    db::RunReader run_clock(recorded.database);
    const auto end_row = run_clock.iterations(recorded.run, 0, kIterations - 1, kIterations - 1);
    double end_s = 0;
    for (const IterationRecord& r : end_row)
        end_s = std::max(end_s, r.end_s);
    EXPECT_EQ(
        jobs.data(jobs.index(0, ui::JobsModel::RunClock)).toString(), QStringLiteral("%1 s").arg(end_s, 0, 'f', 1));
    EXPECT_EQ(jobs.headerData(ui::JobsModel::RunClock, Qt::Horizontal).toString(), QStringLiteral("Run clock"));
    EXPECT_TRUE(jobs.headerData(ui::JobsModel::RunClock, Qt::Horizontal, Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("excluded until")));

    // The workers table holds the last iteration's rows as recorded.
    db::RunReader reader(recorded.database);
    const auto last = reader.iterations(recorded.run, 0, kIterations - 1, kIterations - 1);
    ui::WorkersModel& workers = store.workers();
    ASSERT_EQ(workers.rowCount(), 4);
    for (const IterationRecord& r : last) {
        ASSERT_NE(workers.last_row(r.worker), nullptr);
        EXPECT_EQ(*workers.last_row(r.worker), r);
        EXPECT_EQ(workers.data(workers.index(r.worker, ui::WorkersModel::BatchSize)).toInt(), r.batch_size);
        // Its wait at the barrier, as fulcrumctl watch shows it (issue 44's small things).
        const double share = 100 * r.wait_s / (r.compute_s + r.comm_s + r.wait_s);
        EXPECT_EQ(workers.data(workers.index(r.worker, ui::WorkersModel::Wait)).toString(),
            QStringLiteral("%1 ms · %2 %").arg(1000 * r.wait_s, 0, 'f', 1).arg(share, 0, 'f', 0));
    }
    EXPECT_EQ(workers.data(workers.index(1, ui::WorkersModel::State)).toString(), QStringLiteral("pinned at 20"));
    EXPECT_EQ(workers.data(workers.index(3, ui::WorkersModel::State)).toString(), QString());

    // Every recorded event, in order, with who caused it.
    const auto recorded_events = reader.events(recorded.run);
    ui::EventsModel& events = store.events();
    ASSERT_EQ(events.rowCount(), static_cast<int>(recorded_events.size()));
    bool pin = false;
    for (int row = 0; row < events.rowCount(); ++row) {
        EXPECT_EQ(events.at(row), recorded_events[static_cast<std::size_t>(row)]);
        pin = pin || (events.at(row).kind == "pin" && events.at(row).actor == "operator:test");
    }
    EXPECT_TRUE(pin);
}

// Played, then sought back to its start and played again (a replay opened and played from
// the start, say): every event is listed once, those at time 0 (the job's start, a pin made
// before it) included (issue 44 item 1: job-queued, job-placed and job-started were listed twice).
TEST(ConsoleStore, AReplayPlayedAgainFromItsStartListsEachEventOnce)
{
    RecordedRun recorded;
    replay::ReplaySource source(recorded.database, recorded.run, 8, "run.db");
    ui::ConsoleStore store;
    store.follow(8);
    for (std::int64_t k = 0; k < 5; ++k)
        for (const ServerMessage& m : source.step(k))
            store.ingest(m);
    store.ingest(source.state(0, ReplayPhase::Playing, 1, true));
    for (const ServerMessage& m : source.snapshot(0))
        store.ingest(m);
    for (std::int64_t k = 0; k < source.length(); ++k)
        for (const ServerMessage& m : source.step(k))
            store.ingest(m);
    for (const ServerMessage& m : source.finish())
        store.ingest(m);
    const auto recorded_events = db::RunReader(recorded.database).events(recorded.run);
    ASSERT_TRUE(std::any_of(recorded_events.begin(), recorded_events.end(), [](const EventRecord& e) {
        return e.time_s == 0;
    })) << "the run has events at time 0, which the test is about";
    ASSERT_EQ(store.events().rowCount(), static_cast<int>(recorded_events.size()));
    for (int row = 0; row < store.events().rowCount(); ++row)
        EXPECT_EQ(store.events().at(row), recorded_events[static_cast<std::size_t>(row)]) << "row " << row;
}

TEST(ConsoleStore, ASeekShowsTheRunAsOfThatIteration)
{
    RecordedRun recorded;
    replay::ReplaySource source(recorded.database, recorded.run, 9, "run.db");
    ui::ConsoleStore store;
    QAbstractItemModelTester workers_check(&store.workers(), QAbstractItemModelTester::FailureReportingMode::Fatal);
    store.follow(9);
    const std::int64_t position = *source.position_after(source.first_job(), 11);
    store.ingest(source.state(position, ReplayPhase::Paused, 1, true));
    for (const ServerMessage& m : source.snapshot(position))
        store.ingest(m);

    ASSERT_NE(store.replay_state(), nullptr);
    EXPECT_EQ(store.replay_state()->iteration, 11);
    EXPECT_EQ(store.jobs().data(store.jobs().index(0, ui::JobsModel::Iteration)).toString(), QStringLiteral("12 / 30"));
    db::RunReader reader(recorded.database);
    for (const IterationRecord& r : reader.iterations(recorded.run, 0, 11, 11)) {
        ASSERT_NE(store.workers().last_row(r.worker), nullptr);
        EXPECT_EQ(*store.workers().last_row(r.worker), r) << "worker " << r.worker;
    }
    EXPECT_EQ(store.events().rowCount(), 0) << "a snapshot carries state, not the event history";
}

// A replay fast-forwarding to a moment: what comes after it is not taken in on the way.
TEST(ConsoleStore, RowsAndEventsPastAHeldMomentAreNotTakenIn)
{
    RecordedRun recorded;
    replay::ReplaySource source(recorded.database, recorded.run, 5, "run.db");
    ui::ConsoleStore store;
    store.follow(5);
    const double held = source.mark(9).end_s; // the barrier of iteration 9
    store.hold_after(held);
    for (std::int64_t k = 0; k < source.length(); ++k)
        for (const ServerMessage& m : source.step(k))
            store.ingest(m);
    EXPECT_EQ(*store.history().last_iteration(), 9);
    for (int row = 0; row < store.events().rowCount(); ++row)
        EXPECT_LE(store.events().at(row).time_s, held + 1e-9);
    store.hold_after(std::nullopt);
    for (const ServerMessage& m : source.step(source.length() - 1))
        store.ingest(m);
    EXPECT_EQ(*store.history().last_iteration(), kIterations - 1);
}

TEST(EventsModel, KeepsTheNewestEventsUpToItsLimit)
{
    ui::EventsModel events(3);
    QAbstractItemModelTester check(&events, QAbstractItemModelTester::FailureReportingMode::Fatal);
    for (int k = 0; k < 5; ++k) {
        EventRecord e;
        e.iteration = k;
        e.kind = "warning";
        events.append(e);
    }
    ASSERT_EQ(events.rowCount(), 3);
    EXPECT_EQ(events.at(0).iteration, 2);
    EXPECT_EQ(events.at(2).iteration, 4);
}

// The run-list dialog's model: one row per run; a store that cannot be read shows why and
// cannot be chosen.
TEST(RunsModel, ListsRunsAndAnUnreadableStoreCannotBeChosen)
{
    RunListing good { "job-1.db", 1, "demo", "paced", "finished", "2026-11-23T10:00:00Z", "" };
    good.jobs = 1;
    good.iterations = 300;
    RunListing bad;
    bad.database = "broken.db";
    bad.status = "unreadable: file is not a database";
    ui::RunListDialog dialog({ bad, good }, QStringLiteral("Runs"), {});
    ui::RunsModel& model = dialog.model();
    QAbstractItemModelTester check(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    ASSERT_EQ(model.rowCount(), 2);
    EXPECT_EQ(model.index(1, ui::RunsModel::Iterations).data().toLongLong(), 300);
    EXPECT_EQ(
        model.index(0, ui::RunsModel::Status).data().toString(), QStringLiteral("unreadable: file is not a database"));
    EXPECT_FALSE(model.index(0, ui::RunsModel::File).data(ui::RunsModel::kReplayableRole).toBool());
    EXPECT_FALSE(model.index(0, ui::RunsModel::Iterations).data().isValid()) << "no count for an unreadable store";
    ASSERT_TRUE(dialog.chosen()) << "the first replayable run is selected when shown";
    EXPECT_EQ(dialog.chosen()->database, "job-1.db");
    dialog.select(0);
    EXPECT_FALSE(dialog.chosen());
    model.set_runs({});
    EXPECT_EQ(model.rowCount(), 0);
}

// The time views mark the policy's phase changes and every change an operator (or the
// scenario) made, labelled shortly, with who made it in the tooltip; other events are not
// marked, nor another job's.
TEST(EventMarks, PhaseChangesAndOperatorActionsAreMarkedWithTheirActor)
{
    ui::EventsModel events(100);
    const auto add = [&](JobId job, std::int64_t iteration, const char* kind, const char* message,
                         std::optional<WorkerId> worker, const char* actor) {
        EventRecord e;
        e.job = job;
        e.iteration = iteration;
        e.time_s = static_cast<double>(iteration) / 10;
        e.kind = kind;
        e.message = message;
        e.worker = worker;
        e.actor = actor;
        events.append(e);
    };
    add(1, 0, "job-started", "4 workers", std::nullopt, "system");
    add(1, 37, "phase-change", "fast-approach -> fine-tune: spread under 10 %", std::nullopt, "system");
    add(1, 50, "pin", "worker 2 pinned to 96", 2, "operator:alice (fulcrum@10.0.0.7:5000) at 2026-11-23T17:00:00Z");
    add(2, 55, "pin", "worker 1 pinned to 8", 1, "operator:bob");
    add(1, 60, "policy-change", "uniform -> lbbsp-cpu", std::nullopt, "scenario");
    add(1, 70, "exclude", "worker 3 excluded", 3, "operator:alice");
    add(1, 80, "worker-stalled", "worker 0 stalled: its batch of 64 has taken 2 s, predicted 0.04 s", 0, "system");
    add(1, 81, "worker-recovered", "worker 0 recovered: its batch of 64 took 9 s, predicted 0.04 s", 0, "system");
    const std::vector<ui::EventMark> marks = ui::event_marks(events, 1);
    ASSERT_EQ(marks.size(), 6u);
    EXPECT_EQ(marks[0].kind, ui::EventMark::Kind::Phase);
    EXPECT_EQ(marks[0].label, QStringLiteral("fast-approach -> fine-tune"));
    EXPECT_EQ(marks[1].kind, ui::EventMark::Kind::Operator);
    EXPECT_EQ(marks[1].label, QStringLiteral("pin w2"));
    EXPECT_EQ(marks[1].time_s, 5.0);
    EXPECT_TRUE(marks[1].tooltip.contains(QStringLiteral("operator:alice"))) << marks[1].tooltip.toStdString();
    EXPECT_EQ(marks[2].label, QStringLiteral("policy: lbbsp-cpu"));
    EXPECT_TRUE(marks[2].tooltip.contains(QStringLiteral("scenario")));
    EXPECT_EQ(marks[3].label, QStringLiteral("exclude w3"));
    // A worker's trouble is marked too, in its own colour.
    EXPECT_EQ(marks[4].kind, ui::EventMark::Kind::Trouble);
    EXPECT_EQ(marks[4].label, QStringLiteral("stalled w0"));
    EXPECT_EQ(marks[5].label, QStringLiteral("recovered w0"));
    EXPECT_NE(ui::mark_colour(ui::EventMark::Kind::Trouble), ui::mark_colour(ui::EventMark::Kind::Operator));
}

// A stalled worker's state in the workers table: since when its batch runs, and its prediction.
TEST(WorkersModel, AStalledWorkerSaysSinceWhenAndWhatWasPredicted)
{
    protocol::WorkerState w;
    EXPECT_EQ(ui::WorkersModel::state_text(w), QString());
    w.stalled_since = 12.34;
    w.predicted_s = 0.0412;
    EXPECT_EQ(ui::WorkersModel::state_text(w), QStringLiteral("stalled since 12.3 s, predicted 0.0412 s"));
}

// Sixteen workers' colours stay apart: no two of the first sixteen closer than 56 in RGB.
TEST(Palette, SixteenWorkersHaveColoursFarApart)
{
    double closest = 1e9;
    for (int a = 0; a < 16; ++a)
        for (int b = a + 1; b < 16; ++b) {
            const QColor x = ui::series_colour(a), y = ui::series_colour(b);
            closest = std::min(
                closest, std::hypot(std::hypot(x.red() - y.red(), x.green() - y.green()), x.blue() - y.blue()));
        }
    EXPECT_GE(closest, 56.0);
}

// The cluster map as fulcrumd's cluster-state and job-status messages leave it: a GPU two
// jobs time-share says so, each server's label counts the live jobs on its link, and a job
// whose transfers a communication scheduler decided tells how many were held and how long.
TEST(ConsoleCluster, SharedGpusLinkLoadAndHeldTransfersAreShown)
{
    ui::ConsoleStore store;
    ui::ProtocolClient client;
    ui::Commands commands(client, store);
    ui::ClusterMap map(store, commands);
    ClusterState cluster { "ff", "static", "ada-srsf", 2, 2, 16,
        { { 0, 0, 8, 10, { 1, 2 } }, { 1, 0, 16, 5, { 3 } }, { 2, 1, 16, 0, {} }, { 3, 1, 16, 0, {} } }, {}, {} };
    store.ingest(ClusterUpdate { cluster });
    JobStatus job;
    job.job = 1;
    job.name = "large";
    job.state = JobState::Running;
    job.placement = { 0 };
    job.link = JobStatus::LinkUse { 120, 31, 4.125 };
    store.ingest(JobUpdate { job });

    EXPECT_EQ(map.server_text(0), QStringLiteral("server 0 · link: 3 jobs"));
    EXPECT_EQ(map.server_text(1), QStringLiteral("server 1")) << "no live job crosses an idle server's link";
    const QString tip = map.gpu_text(0);
    EXPECT_TRUE(tip.contains(QStringLiteral("time-shared by 2 jobs: each one's batches take 2x longer")))
        << tip.toStdString();
    EXPECT_TRUE(tip.contains(QStringLiteral("job 1 large (running); link: 31 of 120 transfers held, 4.1 s waiting")))
        << tip.toStdString();
    EXPECT_FALSE(map.gpu_text(1).contains(QStringLiteral("time-shared"))) << map.gpu_text(1).toStdString();
    EXPECT_TRUE(map.header_text().contains(QStringLiteral("comm ada-srsf"))) << map.header_text().toStdString();
    EXPECT_FALSE(map.header_text().contains(QStringLiteral("pool"))) << "no fulcrum-worker --pool has joined";
    cluster.pool = { { "node-a", 1, 0 }, { "node-b", -1, -1 }, { "node-c", -1, -1 } };
    store.ingest(ClusterUpdate { cluster });
    EXPECT_TRUE(map.header_text().endsWith(QStringLiteral(" · pool: 2 of 3 workers idle")))
        << map.header_text().toStdString();
}

// The scheduler view's contention line: the most live jobs on one server's link, a step per
// cluster change, beside the GPU utilization.
TEST(ConsoleScheduler, LinkContentionOverTimeFollowsTheJobsOnTheBusiestLink)
{
    ui::ConsoleStore store;
    ui::SchedulerView view(store);
    ClusterState cluster { "ff", "static", "srsf-1", 2, 2, 16,
        { { 0, 0, 8, 10, { 1, 2 } }, { 1, 0, 16, 5, { 3 } }, { 2, 1, 16, 0, { 4 } }, { 3, 1, 16, 0, {} } }, {}, {} };
    EXPECT_EQ(ui::SchedulerView::busiest_link(cluster), 3) << "jobs 1, 2 and 3 cross server 0's link";
    store.ingest(ClusterUpdate { cluster });
    cluster.gpus[0].jobs = { 1 };
    cluster.gpus[1].jobs = {};
    EXPECT_EQ(ui::SchedulerView::busiest_link(cluster), 1);
    store.ingest(ClusterUpdate { cluster });
    const QList<QPointF> load = view.link_load();
    ASSERT_EQ(load.size(), 3) << "a point, then a step: the old level up to the change and the new one";
    EXPECT_EQ(load[0].y(), 3);
    EXPECT_EQ(load[1].y(), 3);
    EXPECT_EQ(load[2].y(), 1);
    EXPECT_EQ(load[1].x(), load[2].x());
    EXPECT_EQ(ui::SchedulerView::busiest_link(ClusterState {}), 0) << "no cluster, no load";
}

// In a replay the scheduler view shows the cluster the run's job ran on, on the run's clock:
// the live cluster does not leak in, a seek back drops the later states, and following the
// live stream again shows fulcrumd's cluster as it stands.
TEST(ConsoleScheduler, AReplayShowsItsRecordedClusterOnTheRunsClock)
{
    ui::ConsoleStore store;
    ui::SchedulerView view(store);
    const ClusterState live { "ff", "static", "none", 1, 2, 16, { { 0, 0, 16, 0, { 8 } }, { 1, 0, 16, 0, {} } }, {},
        {} };
    store.ingest(ClusterUpdate { live });
    store.follow(4);
    EXPECT_EQ(store.cluster(), nullptr) << "a replay shows no cluster before its first recorded state";
    EXPECT_TRUE(store.cluster_timeline().empty());
    ClusterState recorded = live;
    recorded.gpus[0].jobs = { 0 };
    store.ingest(ClusterUpdate { recorded, 4, 0.0 });
    recorded.gpus[1].jobs = { 0, 3 };
    store.ingest(ClusterUpdate { recorded, 4, 30.0 });
    store.ingest(ClusterUpdate { live }); // fulcrumd's live cluster meanwhile
    ASSERT_EQ(store.cluster_timeline().size(), 2u);
    EXPECT_EQ(store.cluster_timeline()[1].seconds, 30.0);
    EXPECT_EQ(*store.cluster(), recorded);
    QList<QPointF> load = view.link_load();
    ASSERT_EQ(load.size(), 3);
    EXPECT_EQ(load[0], QPointF(0, 1));
    EXPECT_EQ(load[1], QPointF(30, 1));
    EXPECT_EQ(load[2], QPointF(30, 2)) << "job 3 shares the link from 30 s of the run's clock";

    ReplayState seek;
    seek.replay = 4;
    seek.position = 5; // past the run's start, at 12 s of its clock
    seek.time_s = 12;
    seek.seeked = true;
    store.ingest(seek);
    ASSERT_EQ(store.cluster_timeline().size(), 1u);
    EXPECT_EQ(store.cluster()->gpus[1].jobs, std::vector<JobId> {});
    load = view.link_load();
    ASSERT_EQ(load.size(), 2);
    EXPECT_EQ(load[1], QPointF(12, 1)) << "the state before the seek point holds until the replay's position";
    ClusterState first = recorded;
    first.gpus[1].jobs = {};
    store.ingest(ClusterUpdate { first, 4, 0.0 }); // the seek's snapshot repeats it
    EXPECT_EQ(store.cluster_timeline().size(), 1u);

    store.follow(0);
    ASSERT_NE(store.cluster(), nullptr);
    EXPECT_EQ(*store.cluster(), live);
    EXPECT_EQ(store.cluster_timeline().size(), 1u);
}

// Issue 44's small things in the tables and the status bar: a queued job's iteration cell is
// empty (it read "0 / 0"), the Predicted and CPU headers explain themselves, and a job
// command is described in words ("done: cancel job 3", not "cancel-job job 3").
TEST(ConsoleModels, QueuedJobsPredictedAndCpuHeadersAndJobCommandsReadAsWords)
{
    ui::JobsModel jobs;
    protocol::JobStatus queued;
    queued.job = 7;
    queued.state = protocol::JobState::Queued;
    jobs.apply(queued);
    EXPECT_EQ(jobs.data(jobs.index(0, ui::JobsModel::Iteration)).toString(), QString());
    protocol::JobStatus running = queued;
    running.state = protocol::JobState::Running;
    running.iteration = 4;
    running.iterations = 40;
    jobs.apply(running);
    EXPECT_EQ(jobs.data(jobs.index(0, ui::JobsModel::Iteration)).toString(), QStringLiteral("4 / 40"));

    ui::WorkersModel workers;
    for (const int column : { ui::WorkersModel::Wait, ui::WorkersModel::PredictedSpeed, ui::WorkersModel::Cpu })
        EXPECT_FALSE(workers.headerData(column, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty()) << column;

    EXPECT_EQ(ui::Commands::describe(protocol::JobCommand { "c", protocol::JobAction::Cancel, 3 }),
        QStringLiteral("cancel job 3"));
    EXPECT_EQ(ui::Commands::describe(protocol::JobCommand { "p", protocol::JobAction::Pause, 3 }),
        QStringLiteral("pause job 3"));
}

// Issue 44 item 3: between two replay states (the server sends one when the phase changes)
// the replay's position follows the rows delivered, so the bar and its slider move.
TEST(ConsoleStore, AReplaysPositionFollowsTheRowsItDelivers)
{
    ui::ConsoleStore store;
    store.follow(7);
    protocol::ReplayState state;
    state.replay = 7;
    state.state = protocol::ReplayPhase::Playing;
    state.speed = 2;
    state.length = 10;
    state.end_time_s = 20;
    store.ingest(state);
    ASSERT_EQ(store.replay_state()->iteration, -1);
    protocol::IterationRows rows;
    rows.replay = 7;
    rows.job = 1;
    rows.iteration = 3;
    IterationRecord r;
    r.job = 1;
    r.iteration = 3;
    r.batch_size = 8;
    r.end_s = 5.5;
    r.wait_s = 0.5;
    rows.rows = { r };
    QSignalSpy moved(&store, &ui::ConsoleStore::replayStateChanged);
    store.ingest(rows);
    EXPECT_EQ(moved.count(), 1);
    EXPECT_EQ(store.replay_state()->job, 1);
    EXPECT_EQ(store.replay_state()->iteration, 3);
    EXPECT_DOUBLE_EQ(store.replay_state()->time_s, 6.0);
    EXPECT_EQ(store.replay_state()->position, 1);
    rows.replay = 0; // the live stream's rows move nothing of the replay
    store.ingest(rows);
    EXPECT_EQ(store.replay_state()->position, 1);
}

// With tenants' quotas the cluster map colours each GPU by its jobs' tenant, not by job, and
// its header shows each quota's use; its tooltip names each job's tenant.
TEST(ConsoleCluster, WithTenantsGpusAreColouredByTenantAndEachQuotasUseIsShown)
{
    ui::ConsoleStore store;
    ui::ProtocolClient client;
    ui::Commands commands(client, store);
    ui::ClusterMap map(store, commands);
    ClusterState cluster { "ff", "eps", "none", 1, 4, 16,
        { { 0, 0, 8, 10, { 1 }, { "vision" } }, { 1, 0, 8, 10, { 1 }, { "vision" } },
            { 2, 0, 8, 10, { 2 }, { "vision" } }, { 3, 0, 16, 0, { 3 }, { "nlp" } } },
        {}, {} };
    store.ingest(ClusterUpdate { cluster });
    EXPECT_TRUE(map.by_tenant()) << "two tenants' jobs";
    EXPECT_EQ(map.tenant_colour("vision"), map.tenant_colour("vision"));
    EXPECT_NE(map.tenant_colour("vision"), map.tenant_colour("nlp"));
    EXPECT_TRUE(map.gpu_text(3).contains(QStringLiteral("job 3 of tenant nlp"))) << map.gpu_text(3).toStdString();
    EXPECT_FALSE(map.header_text().contains(QStringLiteral("vision:"))) << "no quotas: no quota's use";

    cluster.tenants = { { "nlp", 2, false, 1, true, 1, 0, 1, 0 }, { "vision", 2, true, 2, true, 3, 1, 2, 1 } };
    cluster.rigid_borrowers = "wait";
    store.ingest(ClusterUpdate { cluster });
    EXPECT_TRUE(map.header_text().endsWith(QStringLiteral(" · nlp: 1 of 2 · vision: 3 of 2 (1 borrowed)")))
        << map.header_text().toStdString();
    cluster.gpus[3] = { 3, 0, 16, 0, {}, {} };
    cluster.tenants[0].held_gpus = 0;
    store.ingest(ClusterUpdate { cluster });
    EXPECT_TRUE(map.by_tenant()) << "one tenant's jobs, but quotas: still by tenant";
    EXPECT_EQ(map.tenants_shown(), (std::vector<std::string> { "nlp", "vision" }));
}

// Events name the tenant of the job (beside its id, unless it is the default tenant's) and of
// the actor (its line, ROLE@TENANT:WHO).
TEST(ConsoleStore, AnEventNamesItsJobsTenantAndItsActorsTenant)
{
    ui::ConsoleStore store;
    JobStatus vision;
    vision.job = 7;
    vision.tenant = "vision";
    store.ingest(JobUpdate { vision });
    JobStatus plain;
    plain.job = 3;
    store.ingest(JobUpdate { plain });
    EventRecord pinned;
    pinned.job = 7;
    pinned.kind = "pin";
    pinned.actor = "operator@vision:alice (fulcrum) at T";
    store.ingest(Event { pinned });
    EventRecord other = pinned;
    other.job = 3;
    other.actor = "operator:bob at T";
    store.ingest(Event { other });
    const ui::EventsModel& events = store.events();
    ASSERT_EQ(events.rowCount(), 2);
    EXPECT_EQ(events.data(events.index(0, ui::EventsModel::Job)).toString(), QStringLiteral("7 · vision"));
    EXPECT_EQ(events.data(events.index(0, ui::EventsModel::Actor)).toString(),
        QStringLiteral("operator@vision:alice (fulcrum) at T"));
    EXPECT_EQ(events.data(events.index(1, ui::EventsModel::Job)).toString(), QStringLiteral("3"))
        << "the default tenant's job, as before tenants";
}
