// The console against a real fulcrumd: the in-process daemon and WebSocket server for live
// jobs, the fulcrumd binary for run files. Actions go through the real widgets and dialogs.

// Backend headers before Qt's: Qt's `emit` macro would rewrite BatchSizeManager::emit.
#include "balance/batch_size_manager.h"
#include "run/run_scenario.h"
#include "tests/ui/console_test_support.h"
#include "train/trainer.h"
#include "ui/main_window.h"
#include "ui/replay_opener.h"
#include "ui/views/cluster_map.h"
#include "ui/views/equilibrium_view.h"
#include "ui/views/events_view.h"
#include "ui/views/jobs_view.h"
#include "ui/views/replay_bar.h"
#include "ui/views/straggler_timeline.h"
#include "ui/views/workers_view.h"

#include <QAction>
#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QLegend>
#include <QLegendMarker>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTableView>
#include <QTimer>
#include <filesystem>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <numeric>
#include <unistd.h>

using namespace fulcrum;
using namespace fulcrum::protocol;
using namespace fulcrum::console_test;

TEST(ConsoleClient, AWrongTokenIsReportedAndNotRetried)
{
    LiveDaemon live;
    ui::MainWindow window;
    window.set_dialogs(false);
    QSignalSpy problems(&window, &ui::MainWindow::problemReported);
    window.connect_to(live.address("not-a-token-of-this-daemon"));
    ASSERT_TRUE(wait_until([&] { return window.client().state() == ui::ProtocolClient::State::Failed; }));
    EXPECT_TRUE(window.client().status_text().startsWith(QStringLiteral("wrong token")))
        << window.client().status_text().toStdString();
    ASSERT_GE(problems.count(), 1);
    QApplication::processEvents();
    QThread::msleep(1500); // past the first back-off: it must not have tried again
    QApplication::processEvents();
    EXPECT_EQ(window.client().state(), ui::ProtocolClient::State::Failed);
}

TEST(ConsoleClient, ARefusedConnectionIsRetriedWithGrowingBackOff)
{
    EXPECT_EQ(ui::ProtocolClient::reconnect_delay_ms(1), 1000);
    EXPECT_EQ(ui::ProtocolClient::reconnect_delay_ms(2), 2000);
    EXPECT_EQ(ui::ProtocolClient::reconnect_delay_ms(5), 16000);
    EXPECT_EQ(ui::ProtocolClient::reconnect_delay_ms(9), 30000);
    ui::ProtocolClient client;
    client.open({ QUrl(QStringLiteral("ws://127.0.0.1:1")), QStringLiteral("x"), {} }); // nothing listens on port 1
    ASSERT_TRUE(wait_until([&] { return client.state() == ui::ProtocolClient::State::WaitingToReconnect; }, 10000));
    EXPECT_TRUE(client.status_text().contains(QStringLiteral("reconnecting in 1 s (attempt 1)")))
        << client.status_text().toStdString();
    client.close();
    EXPECT_EQ(client.state(), ui::ProtocolClient::State::Disconnected);
}

TEST(ConsoleClient, PinAndExcludeInTheWorkersTableSendTheCommandsAndTheTableShowsThem)
{
    LiveDaemon live;
    ui::MainWindow window;
    window.set_dialogs(false);
    window.show();
    window.connect_to(live.address(live.operator_token));
    ASSERT_TRUE(wait_until([&] {
        return window.commands().can_command() && window.store().workers().rowCount() == 4
            && window.store().history().workers() == 4;
    }));
    EXPECT_EQ(window.store().shown_job(), live.job);
    // The status bar says one thing about the connection: the label on its right.
    const QString left = window.statusBar()->currentMessage();
    EXPECT_FALSE(left.contains(QStringLiteral("not connected"))) << left.toStdString();

    // Pin worker 3 through the dialog; it offers the size that would equalise batch times.
    select_worker(window, 3);
    std::optional<std::int32_t> suggested;
    std::optional<QString> shown, in_table;
    answer_next_dialog<ui::PinDialog>([&](ui::PinDialog& d) {
        suggested = d.batch_size();
        // The job trains on behind the dialog: its current size follows the table's (it
        // kept the size at its opening: issue 44's small things).
        // Another operator pins it at 5 meanwhile.
        const auto table = [&] { return window.store().workers().index(3, ui::WorkersModel::BatchSize).data(); };
        window.commands().pin(live.job, 3, 5);
        wait_until([&] { return table().toInt() == 5; }, 10000);
        shown = d.current_text();
        in_table = table().toString();
        d.set_batch_size(8);
    });
    action_named(window, QStringLiteral("Pin"))->trigger();
    ASSERT_TRUE(wait_until([&] {
        const WorkerState* s = window.store().worker_state(live.job, 3);
        return s && s->pinned == 8;
    }));
    ASSERT_TRUE(suggested);
    EXPECT_LT(*suggested, 16); // the slow worker (a third of the others' speed) should get less than an even 16
    ASSERT_TRUE(shown);
    EXPECT_EQ(*in_table, QStringLiteral("5"));
    EXPECT_EQ(*shown, *in_table);
    EXPECT_EQ(
        window.store().workers().index(3, ui::WorkersModel::State).data().toString(), QStringLiteral("pinned at 8"));

    // Exclude worker 2 for 30 s of run time.
    select_worker(window, 2);
    answer_next_dialog<ui::ExcludeDialog>([](ui::ExcludeDialog& d) { d.set_for_s(30.0); });
    action_named(window, QStringLiteral("Exclude"))->trigger();
    ASSERT_TRUE(wait_until([&] {
        const WorkerState* s = window.store().worker_state(live.job, 2);
        return s && s->excluded && s->excluded_until;
    }));
    // The daemon recorded both as operator actions.
    ASSERT_TRUE(wait_until([&] { return has_event(window, "pin", 3) && has_event(window, "exclude", 2); }));

    // Unpin and re-include: the keyboard shortcut path (the actions the table carries).
    select_worker(window, 3);
    action_named(window, QStringLiteral("Unpin"))->trigger();
    select_worker(window, 2);
    action_named(window, QStringLiteral("Re-include"))->trigger();
    ASSERT_TRUE(wait_until([&] {
        const WorkerState* pinned = window.store().worker_state(live.job, 3);
        const WorkerState* excluded = window.store().worker_state(live.job, 2);
        return pinned && !pinned->pinned && excluded && !excluded->excluded;
    }));
}

// An elastic job's free slot joins through "Add to job" and a worker leaves through
// "Remove from job"; each action is offered only within the job's min and max workers.
TEST(ConsoleClient, AnElasticJobGrowsAndShrinksFromTheWorkersTable)
{
    std::string elastic = kScenario;
    elastic.replace(
        elastic.rfind('}'), 1, R"(, "elastic": {"initial_workers": 3, "min_workers": 3, "max_workers": 4}})");
    LiveDaemon live(false, elastic);
    ui::MainWindow window;
    window.set_dialogs(false);
    window.show();
    window.connect_to(live.address(live.operator_token));
    ASSERT_TRUE(wait_until([&] {
        const JobStatus* s = window.store().jobs().job(live.job);
        return window.commands().can_command() && window.store().workers().rowCount() == 4 && s && s->elastic;
    }));
    QAction* add = action_named(window, QStringLiteral("Add to job"));
    QAction* remove = action_named(window, QStringLiteral("Remove from job"));
    ASSERT_TRUE(add && remove);
    select_worker(window, 2);
    EXPECT_FALSE(remove->isEnabled()) << "3 members, min_workers 3";
    EXPECT_FALSE(add->isEnabled()) << "worker 2 is a member already";
    select_worker(window, 3);
    ASSERT_TRUE(wait_until([&] { return add->isEnabled(); }));
    add->trigger();
    ASSERT_TRUE(wait_until([&] {
        const WorkerState* s = window.store().worker_state(live.job, 3);
        return s && s->member;
    }));
    select_worker(window, 0);
    ASSERT_TRUE(wait_until([&] { return remove->isEnabled(); }));
    remove->trigger();
    ASSERT_TRUE(wait_until([&] {
        const WorkerState* s = window.store().worker_state(live.job, 0);
        return s && !s->member;
    }));
    ASSERT_TRUE(
        wait_until([&] { return has_event(window, "add-worker", 3) && has_event(window, "remove-worker", 0); }));

    // Freeze size keeps the elastic scheduler off the job; the job's state says so.
    QAction* freeze = action_named(window, QStringLiteral("Freeze size"));
    ASSERT_TRUE(freeze);
    ASSERT_TRUE(wait_until([&] { return freeze->isEnabled(); }));
    EXPECT_FALSE(freeze->isChecked());
    freeze->trigger();
    ASSERT_TRUE(wait_until([&] {
        const JobStatus* s = window.store().jobs().job(live.job);
        return s && s->elastic && s->elastic->frozen && has_event(window, "job-frozen", std::nullopt);
    }));
    EXPECT_TRUE(freeze->isChecked());
    const auto state_text = [&] {
        for (int row = 0; row < window.store().jobs().rowCount(); ++row)
            if (window.store().jobs().index(row, ui::JobsModel::Job).data().toInt() == static_cast<int>(live.job))
                return window.store().jobs().index(row, ui::JobsModel::State).data().toString();
        return QString();
    };
    EXPECT_EQ(state_text(), QStringLiteral("running · frozen"));
    if (const QByteArray out = qgetenv("FULCRUM_SCREENSHOT_DIR"); !out.isEmpty())
        window.grab().save(QString::fromLocal8Bit(out) + QStringLiteral("/elastic-workers.png"));
    freeze->trigger();
    ASSERT_TRUE(wait_until([&] {
        const JobStatus* s = window.store().jobs().job(live.job);
        return s && s->elastic && !s->elastic->frozen && has_event(window, "job-unfrozen", std::nullopt);
    }));
    EXPECT_EQ(state_text(), QStringLiteral("running"));
}

// The cluster's placement and elastic policies change from the console: the cluster map's
// header and the scheduler view's summary follow the server's cluster state.
TEST(ConsoleClient, TheClusterPoliciesChangeFromTheConsole)
{
    LiveDaemon live;
    ui::MainWindow window;
    window.set_dialogs(false);
    window.connect_to(live.address(live.operator_token));
    ASSERT_TRUE(wait_until(
        [&] { return window.commands().can_command() && window.store().cluster() && window.store().capabilities(); }));
    // Each action offers, and describes, what this fulcrumd has (list-capabilities).
    for (QAction* a : window.cluster_map().policy_actions())
        EXPECT_TRUE(a->isEnabled()) << a->text().toStdString();
    const QList<QAction*> actions = window.cluster_map().policy_actions();
    EXPECT_TRUE(actions.at(0)->toolTip().contains(QStringLiteral("\nlwf-K: least workload first")))
        << actions.at(0)->toolTip().toStdString();
    EXPECT_TRUE(actions.at(1)->toolTip().contains(QStringLiteral("\nkill-restart: ")));
    EXPECT_TRUE(actions.at(2)->toolTip().contains(QStringLiteral("\nnone: no schedule")));
    EXPECT_TRUE(window.cluster_map().header_text().contains(QStringLiteral("placement lwf-1 · elastic static")))
        << window.cluster_map().header_text().toStdString();
    QSignalSpy known(&window.commands(), &ui::Commands::succeeded);
    ASSERT_TRUE(window.commands().set_cluster_policy("ff", "eps"));
    ASSERT_TRUE(wait_until([&] {
        const protocol::ClusterState* c = window.store().cluster();
        return c && c->placement == "ff" && c->elastic == "eps";
    }));
    EXPECT_TRUE(window.cluster_map().header_text().contains(QStringLiteral("placement ff · elastic eps")))
        << window.cluster_map().header_text().toStdString();
    ASSERT_TRUE(wait_until([&] { return known.count() >= 1; }));
    EXPECT_EQ(known.at(0).at(0).toString(), QStringLiteral("set the cluster's placement ff and elastic eps"));

    ASSERT_TRUE(window.commands().set_cluster_policy(std::nullopt, std::nullopt, "srsf-1"));
    ASSERT_TRUE(wait_until([&] {
        const protocol::ClusterState* c = window.store().cluster();
        return c && c->comm == "srsf-1";
    }));
    EXPECT_TRUE(window.cluster_map().header_text().contains(QStringLiteral("elastic eps · comm srsf-1")))
        << window.cluster_map().header_text().toStdString();
    ASSERT_TRUE(wait_until([&] { return known.count() >= 2; }));
    EXPECT_EQ(known.at(1).at(0).toString(), QStringLiteral("set the cluster's communication srsf-1"));
    QSignalSpy failed(&window.commands(), &ui::Commands::failed);
    ASSERT_TRUE(window.commands().set_cluster_policy(std::nullopt, std::nullopt, "srsf-0"));
    ASSERT_TRUE(wait_until([&] { return failed.count() >= 1; }));
    EXPECT_EQ(failed.at(0).at(0).toString(), QStringLiteral("set the cluster's communication srsf-0"));
    EXPECT_TRUE(failed.at(0).at(1).toString().contains(QStringLiteral("srsf-N with N >= 1")))
        << failed.at(0).at(1).toString().toStdString();
    EXPECT_EQ(window.store().cluster()->comm, "srsf-1") << "a refused policy changes nothing";
}

TEST(ConsoleClient, ACommandInFlightWhenTheConnectionDropsIsReportedThenItsFateOnceReconnected)
{
    LiveDaemon live;
    ui::MainWindow window;
    window.set_dialogs(false);
    window.connect_to(live.address(live.operator_token));
    ASSERT_TRUE(
        wait_until([&] { return window.commands().can_command() && window.store().workers().rowCount() == 4; }));
    QSignalSpy unknown(&window.commands(), &ui::Commands::fateUnknown);
    QSignalSpy known(&window.commands(), &ui::Commands::fateKnown);

    const unsigned short port = live.server->port();
    ASSERT_TRUE(window.commands().pin(live.job, 1, 12));
    live.server.reset(); // the daemon's port closes before the reply can come back
    ASSERT_TRUE(wait_until([&] { return unknown.count() == 1; }));
    EXPECT_EQ(unknown.at(0).at(0).toString(), QStringLiteral("pin worker 1 of job %1 at 12 samples").arg(live.job));
    EXPECT_EQ(window.client().state(), ui::ProtocolClient::State::WaitingToReconnect);

    live.serve(port);
    ASSERT_TRUE(wait_until([&] { return known.count() == 1; }, 60000));
    const QString fate = known.at(0).at(1).toString();
    const WorkerState* state = window.store().worker_state(live.job, 1);
    ASSERT_NE(state, nullptr);
    // Whichever it was, the console says what the server shows.
    if (state->pinned == 12)
        EXPECT_TRUE(fate.startsWith(QStringLiteral("applied"))) << fate.toStdString();
    else
        EXPECT_TRUE(fate.startsWith(QStringLiteral("not applied"))) << fate.toStdString();
}

class RunFileTest : public ::testing::Test {
protected:
    std::filesystem::path dir
        = std::filesystem::temp_directory_path() / ("fulcrum-console-file-" + std::to_string(::getpid()));
    void SetUp() override { std::filesystem::create_directories(dir); }
    void TearDown() override { std::filesystem::remove_all(dir); }

    QString problem_opening(const std::filesystem::path& file)
    {
        ui::MainWindow window;
        window.set_dialogs(false);
        window.set_daemon_path(QStringLiteral(FULCRUM_DAEMON_BINARY));
        QSignalSpy problems(&window, &ui::MainWindow::problemReported);
        window.open_run_file(QString::fromStdString(file.string()));
        EXPECT_TRUE(wait_until([&] { return problems.count() > 0; }));
        return problems.isEmpty() ? QString() : problems.at(0).at(0).toString();
    }
};

TEST_F(RunFileTest, ASeekShowsTheRunAsOfThatIterationInEveryView)
{
    const scenario::Scenario s = scenario::parse_scenario(R"({"name": "console-replay", "seed": 3,
        "data": {"source": "synthetic", "train_size": 400, "test_size": 100, "dim": 8, "classes": 3},
        "model": {"type": "softmax"}, "training": {"total_batch": 64, "iterations": 40, "eval_interval": 10},
        "policy": {"type": "lbbsp-cpu", "predictor": {"type": "ema"}},
        "workers": [{"speed": 3000, "count": 3}, {"speed": 1000}]})",
        "console-test");
    run::RunOptions options;
    options.database = dir / "recorded.db";
    // An operator's pin during iteration 12: an event in the middle of the run to jump to.
    balance::BatchSizeManager* manager = nullptr;
    options.on_trainer = [&manager](train::Trainer* t) {
        if (t)
            manager = &t->manager();
    };
    options.on_rows = [&manager](std::span<const IterationRecord> rows) {
        if (manager && !rows.empty() && rows.front().iteration == 12)
            manager->pin(1, 10, EventActor::person("operator", "test"));
    };
    run::run_scenario(s, options);

    ui::MainWindow window;
    window.set_dialogs(false);
    window.set_daemon_path(QStringLiteral(FULCRUM_DAEMON_BINARY));
    window.show();
    QSignalSpy ready(&window, &ui::MainWindow::replayReady);
    window.open_run_file(QString::fromStdString(options.database->string()), 17);
    ASSERT_TRUE(wait_until([&] { return ready.count() == 1; }, 60000));

    ui::ConsoleStore& store = window.store();
    ASSERT_TRUE(store.replaying());
    EXPECT_EQ(store.replay_state()->iteration, 17);
    EXPECT_EQ(*store.history().last_iteration(), 17);
    EXPECT_EQ(*store.history().first_iteration(), 0); // loaded from the start, not just the snapshot
    EXPECT_EQ(store.jobs().index(0, ui::JobsModel::Iteration).data().toString(), QStringLiteral("18 / 40"));
    EXPECT_EQ(store.workers().last_row(3)->iteration, 17);
    EXPECT_EQ(window.iteration_window().last(), 17);
    for (const QString& view :
        { QStringLiteral("equilibrium"), QStringLiteral("timeline"), QStringLiteral("prediction") }) {
        ASSERT_TRUE(window.show_view(view));
        window.refresh_views();
    }
    EXPECT_TRUE(
        ui::StragglerTimeline::describe(store.history(), 3, 17).startsWith(QStringLiteral("iteration 17 of worker 3")));
    // The operator's pin at iteration 12 is marked on the charts, its actor in the tooltip;
    // hovering a worker's legend entry brings its lines forward.
    ASSERT_TRUE(window.show_view(QStringLiteral("equilibrium")));
    window.refresh_views();
    const auto& marks = window.equilibrium_view().marks();
    const auto pin = std::find_if(
        marks.begin(), marks.end(), [](const ui::EventMark& m) { return m.kind == ui::EventMark::Kind::Operator; });
    ASSERT_NE(pin, marks.end());
    EXPECT_EQ(pin->label, QStringLiteral("pin w1"));
    EXPECT_TRUE(pin->tooltip.contains(QStringLiteral("operator:test")));
    const auto legend = window.equilibrium_view().batch_size_chart()->chart()->legend()->markers();
    const auto w2 = std::find_if(
        legend.begin(), legend.end(), [](const QLegendMarker* m) { return m->label() == QStringLiteral("w2"); });
    ASSERT_NE(w2, legend.end());
    emit(*w2)->hovered(true);
    EXPECT_EQ(window.equilibrium_view().highlighted(), 2);
    emit(*w2)->hovered(false);
    EXPECT_EQ(window.equilibrium_view().highlighted(), -1);
    EXPECT_TRUE(window.replay_bar().position_text().startsWith(QStringLiteral("iteration 17 of job 0")))
        << window.replay_bar().position_text().toStdString();
    // What is left is the run's end less the position, not an extrapolation (issue 44 item 3).
    const protocol::ReplayState& at = *store.replay_state();
    EXPECT_TRUE(window.replay_bar().position_text().contains(
        QStringLiteral(" · %1 s of the run left").arg(at.end_time_s - at.time_s, 0, 'f', 1)))
        << window.replay_bar().position_text().toStdString();

    EXPECT_EQ(store.replay_state()->state, ReplayPhase::Paused);
    EXPECT_EQ(store.replay_state()->speed, 1.0);

    // Scrub back: the views drop what came after.
    QSignalSpy arrived(&window.navigator(), &ui::ReplayNavigator::arrived);
    window.replay_bar().seek_iteration(5);
    ASSERT_TRUE(wait_until([&] { return arrived.count() == 1; }));
    EXPECT_EQ(store.replay_state()->iteration, 5);
    EXPECT_EQ(*store.history().last_iteration(), 5);
    const auto iterations = [&] {
        std::vector<std::int64_t> seen;
        for (std::size_t i = 0; i < store.history().iterations().size(); ++i)
            seen.push_back(store.history().iterations()[i].iteration);
        return seen;
    };
    std::vector<std::int64_t> expected(6);
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(iterations(), expected);

    // Scrub forward past what was ever loaded: every iteration in between reaches the views,
    // and the replay stands paused at ×1 as it was.
    window.replay_bar().seek_iteration(33);
    ASSERT_TRUE(wait_until([&] { return arrived.count() == 2; }));
    EXPECT_FALSE(window.navigator().moving());
    EXPECT_EQ(store.replay_state()->iteration, 33);
    expected.resize(34);
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(iterations(), expected);
    for (int w = 0; w < 4; ++w)
        EXPECT_EQ(store.history().worker(w).size(), 34u) << "worker " << w;
    ASSERT_TRUE(wait_until([&] { return store.replay_state()->speed == 1.0; }));
    EXPECT_EQ(store.replay_state()->state, ReplayPhase::Paused);
    EXPECT_EQ(store.workers().last_row(3)->iteration, 33);

    // Back to 5 again, then forward to a moment of the run (how an event is jumped to) while
    // playing: iterations up to that moment arrive, and it plays on at its speed after.
    const double barrier_20 = store.history().iterations()[20].barrier_s;
    window.replay_bar().seek_iteration(5);
    ASSERT_TRUE(wait_until([&] { return arrived.count() == 3; }));
    ReplayCommand play;
    play.replay = store.source();
    play.action = ReplayAction::Play;
    ASSERT_TRUE(window.commands().replay(play));
    ASSERT_TRUE(wait_until([&] { return store.replay_state()->state == ReplayPhase::Playing; }));
    window.navigator().go_to_time(barrier_20);
    ASSERT_TRUE(wait_until([&] { return arrived.count() == 4; }));
    // At the moment, or past it: it plays on, and the position follows the rows delivered.
    EXPECT_GE(store.replay_state()->iteration, 20);
    expected.resize(21);
    std::iota(expected.begin(), expected.end(), 0);
    const std::vector<std::int64_t> at_arrival = iterations();
    ASSERT_GE(at_arrival.size(), 21u);
    EXPECT_TRUE(std::equal(expected.begin(), expected.end(), at_arrival.begin())); // it may have played on since
    ASSERT_TRUE(wait_until(
        [&] { return store.replay_state()->state != ReplayPhase::Paused && store.replay_state()->speed == 1.0; }));

    // Activating an event in the events table jumps the replay to its moment (paused first,
    // so nothing plays on past it before the check).
    ReplayCommand pause;
    pause.replay = store.source();
    pause.action = ReplayAction::Pause;
    ASSERT_TRUE(window.commands().replay(pause));
    ASSERT_TRUE(wait_until([&] { return store.replay_state()->state != ReplayPhase::Playing; }));
    QTableView* events = window.events_view().table();
    int row = -1;
    for (int r = 0; r < events->model()->rowCount() && row < 0; ++r)
        if (store.events().at(r).time_s > 0 && store.events().at(r).time_s < barrier_20)
            row = r;
    ASSERT_GE(row, 0) << "no event before iteration 20 to jump to";
    EXPECT_EQ(store.events().at(row).kind, "pin");
    const double event_time = store.events().at(row).time_s;
    emit events->activated(events->model()->index(row, 0));
    ASSERT_TRUE(wait_until([&] { return arrived.count() == 5; }));
    EXPECT_LE(store.replay_state()->time_s, event_time + 1e-9);
    EXPECT_LE(store.history().iterations()[store.history().iterations().size() - 1].barrier_s, event_time + 1e-9);
}

TEST_F(RunFileTest, ACorruptForeignOrMissingFileGivesAClearMessage)
{
    const auto junk = dir / "junk.db";
    std::ofstream(junk) << "this is not a database, just text pretending to be one\n";
    QString problem = problem_opening(junk);
    EXPECT_TRUE(problem.contains(QStringLiteral("junk.db cannot be replayed"))) << problem.toStdString();

    // A real SQLite file of another program.
    const auto foreign = dir / "foreign.db";
    {
        std::ofstream out(foreign, std::ios::binary);
        out << std::string("SQLite format 3\0", 16) << std::string(84, '\0');
    }
    problem = problem_opening(foreign);
    EXPECT_TRUE(problem.contains(QStringLiteral("foreign.db cannot be replayed"))) << problem.toStdString();

    problem = problem_opening(dir / "missing.db");
    EXPECT_TRUE(problem.contains(QStringLiteral("missing.db: no such file"))) << problem.toStdString();
}

// A file holding two runs: the opener asks which one (the window's RunListDialog; here a
// chooser that records what it was offered) and replays the one chosen.
TEST_F(RunFileTest, AFileWithSeveralRunsReplaysTheOneChosen)
{
    const scenario::Scenario s = scenario::parse_scenario(R"({"name": "twice", "seed": 3,
        "data": {"source": "synthetic", "train_size": 400, "test_size": 100, "dim": 8, "classes": 3},
        "model": {"type": "softmax"}, "training": {"total_batch": 64, "iterations": 12, "eval_interval": 6},
        "workers": [{"speed": 3000, "count": 2}]})",
        "console-test");
    run::RunOptions options;
    options.database = dir / "twice.db";
    run::run_scenario(s, options);
    const RunId second = run::run_scenario(s, options).run;

    ui::MainWindow window;
    window.set_dialogs(false);
    window.set_daemon_path(QStringLiteral(FULCRUM_DAEMON_BINARY));
    std::vector<RunListing> offered;
    window.replay_opener().set_run_chooser([&](const QString&, const std::vector<RunListing>& runs) {
        offered = runs;
        return std::optional<RunId>(runs.back().run);
    });
    QSignalSpy ready(&window, &ui::MainWindow::replayReady);
    window.open_run_file(QString::fromStdString(options.database->string()));
    ASSERT_TRUE(wait_until([&] { return ready.count() == 1; }, 60000));
    ASSERT_EQ(offered.size(), 2u);
    EXPECT_EQ(offered.back().run, second);
    EXPECT_EQ(window.store().replay_state()->run, second);
    EXPECT_EQ(window.store().replay_state()->length, 12);
}

// Issue 47: an admin's console lists every tenant's jobs with a tenant column; a tenant's
// viewer sees its own tenant's job only, with no column to spend width on, and the status
// bar says whose each console is.
TEST(ConsoleClient, EachConsoleListsTheJobsOfTheTenantsItsTokenReaches)
{
    LiveDaemon live;
    const JobId research = live.daemon->submit(kScenario, "console test", daemon::Daemon::Origin::Local, "research");
    ui::MainWindow admin;
    admin.set_dialogs(false);
    admin.connect_to(live.address("admin-token-for-the-console-test"));
    ASSERT_TRUE(wait_until([&] { return admin.store().jobs().rowCount() == 2; }));
    QApplication::processEvents();
    EXPECT_FALSE(admin.jobs_view().table()->isColumnHidden(ui::JobsModel::Tenant));
    EXPECT_EQ(admin.store().jobs().job(research)->tenant, "research");
    EXPECT_EQ(admin.store().jobs().job(live.job)->tenant, "default");
    EXPECT_TRUE(admin.client().status_text().endsWith(QStringLiteral("as admin (every tenant)")))
        << admin.client().status_text().toStdString();
    // The tenant filter: one tenant's jobs only, then every job again.
    EXPECT_TRUE(admin.jobs_view().tenant_filter_shown());
    EXPECT_EQ(admin.jobs_view().tenant_filter()->count(), 3) << "all tenants, default, research";
    const auto row_of = [&](JobId job) {
        const auto& statuses = admin.store().jobs().statuses();
        return static_cast<int>(std::find_if(statuses.begin(), statuses.end(), [&](const protocol::JobStatus& s) {
            return s.job == job;
        }) - statuses.begin());
    };
    admin.jobs_view().show_tenant(QStringLiteral("research"));
    EXPECT_TRUE(admin.jobs_view().table()->isRowHidden(row_of(live.job)));
    EXPECT_FALSE(admin.jobs_view().table()->isRowHidden(row_of(research)));
    if (const QByteArray out = qgetenv("FULCRUM_SCREENSHOT_DIR"); !out.isEmpty())
        admin.grab().save(QString::fromUtf8(out) + QStringLiteral("/tenants-filter.png"));
    admin.jobs_view().show_tenant(QStringLiteral("All tenants"));
    EXPECT_FALSE(admin.jobs_view().table()->isRowHidden(row_of(live.job)));

    ui::MainWindow viewer;
    viewer.set_dialogs(false);
    viewer.connect_to(live.address("research-viewer-token-for-the-console"));
    ASSERT_TRUE(wait_until([&] { return viewer.store().jobs().rowCount() == 1; }));
    QApplication::processEvents();
    EXPECT_NE(viewer.store().jobs().job(research), nullptr);
    EXPECT_EQ(viewer.store().jobs().job(live.job), nullptr) << "the default tenant's job is not research's";
    EXPECT_TRUE(viewer.jobs_view().table()->isColumnHidden(ui::JobsModel::Tenant));
    EXPECT_FALSE(viewer.jobs_view().tenant_filter_shown()) << "one tenant: no filter";
    EXPECT_TRUE(viewer.client().status_text().endsWith(QStringLiteral("as viewer of tenant research")))
        << viewer.client().status_text().toStdString();
    if (const QByteArray out = qgetenv("FULCRUM_SCREENSHOT_DIR"); !out.isEmpty())
        admin.grab().save(QString::fromUtf8(out) + QStringLiteral("/tenants-admin.png"));
}
