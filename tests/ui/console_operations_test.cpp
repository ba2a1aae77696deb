// The console's operator surfaces against a real fulcrumd: wss with a CA file, a server of
// another protocol version, the jobs actions through the jobs table and its dialogs, the
// cluster map's hover text, the scheduler view, and File ▸ Export.

#include "protocol/codec.h"
#include "tests/ui/console_test_support.h"
#include "ui/views/cluster_map.h"
#include "ui/views/connect_dialog.h"
#include "ui/views/job_dialogs.h"
#include "ui/views/jobs_view.h"
#include "ui/views/scheduler_view.h"
#include "ui/views/straggler_timeline.h"

#include <QComboBox>
#include <QFile>
#include <QFont>
#include <QHeaderView>
#include <QHelpEvent>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QToolTip>
#include <QWebSocket>
#include <QWebSocketServer>

using namespace fulcrum;
using namespace fulcrum::protocol;
using namespace fulcrum::console_test;

namespace {

QAction* job_action(ui::MainWindow& window, const QString& prefix)
{
    for (QAction* a : window.jobs_view().job_actions())
        if (a->text().startsWith(prefix))
            return a;
    return nullptr;
}

void select_job(ui::MainWindow& window, JobId job)
{
    QTableView* table = window.jobs_view().table();
    for (int row = 0; row < table->model()->rowCount(); ++row)
        if (table->model()->index(row, ui::JobsModel::Job).data().toInt() == job) {
            table->selectRow(row);
            break;
        }
    ASSERT_EQ(window.jobs_view().selected_job(), job);
}

// The console on screen (offscreen), connected to the live daemon with the operator token.
void open_as_operator(ui::MainWindow& window, const LiveDaemon& live)
{
    window.set_dialogs(false);
    window.resize(1280, 900);
    window.show();
    window.connect_to(live.address(live.operator_token));
}

// Jobs > Submit job…, the form answered as an operator would: a softmax job on the virtual clock.
void submit_through_the_form(
    ui::MainWindow& window, const char* name, int workers, int slow, int total_batch, int iterations)
{
    answer_next_dialog<ui::SubmitJobDialog>([=](ui::SubmitJobDialog& d) {
        d.set_name(QString::fromLatin1(name));
        d.set_model(QStringLiteral("softmax"));
        d.set_mode(QStringLiteral("virtual"));
        d.set_workers(workers, slow);
        d.set_total_batch(total_batch);
        d.set_iterations(iterations);
    });
    // The form offers the server's models and policies: it waits for list-capabilities.
    EXPECT_TRUE(wait_until([&] { return job_action(window, QStringLiteral("Submit job"))->isEnabled(); }));
    job_action(window, QStringLiteral("Submit job"))->trigger();
}

const JobStatus* status_of(ui::MainWindow& window, JobId job)
{
    return window.store().jobs().job(job);
}

std::optional<JobId> job_named(ui::MainWindow& window, const std::string& name)
{
    for (int row = 0; row < window.store().jobs().rowCount(); ++row) {
        const auto id = static_cast<JobId>(window.store().jobs().index(row, ui::JobsModel::Job).data().toInt());
        if (const JobStatus* s = status_of(window, id); s && s->name == name)
            return id;
    }
    return std::nullopt;
}

QString read_file(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

} // namespace

TEST(ConsoleConnect, AWssServerIsTrustedThroughTheCaFileAndRefusedWithoutIt)
{
    LiveDaemon live(true);
    ui::MainWindow window;
    window.set_dialogs(false);
    ui::ServerAddress address = live.address(live.operator_token);
    address.ca_file = QString::fromStdString((LiveDaemon::tls_directory() / "server.crt").string());
    window.connect_to(address);
    ASSERT_TRUE(wait_until([&] { return window.commands().can_command() && window.store().history().workers() == 4; }))
        << window.client().status_text().toStdString();
    EXPECT_TRUE(window.client().status_text().contains(QStringLiteral("wss://127.0.0.1")))
        << window.client().status_text().toStdString();

    // Without the CA file the self-signed certificate is refused, said so, and not retried.
    ui::ProtocolClient untrusting;
    untrusting.open(live.address(live.operator_token));
    ASSERT_TRUE(wait_until([&] { return untrusting.state() == ui::ProtocolClient::State::Failed; }, 15000))
        << untrusting.status_text().toStdString();
    EXPECT_TRUE(untrusting.status_text().startsWith(QStringLiteral("TLS certificate of 127.0.0.1 refused")))
        << untrusting.status_text().toStdString();
    QThread::msleep(1500);
    QApplication::processEvents();
    EXPECT_EQ(untrusting.state(), ui::ProtocolClient::State::Failed);

    // A CA file that holds no certificate is named.
    const auto junk
        = std::filesystem::temp_directory_path() / ("fulcrum-not-a-ca-" + std::to_string(::getpid()) + ".pem");
    std::ofstream(junk) << "not a certificate\n";
    ui::ProtocolClient misconfigured;
    address.ca_file = QString::fromStdString(junk.string());
    misconfigured.open(address);
    ASSERT_TRUE(wait_until([&] { return misconfigured.state() == ui::ProtocolClient::State::Failed; }, 5000));
    EXPECT_EQ(misconfigured.status_text(), QStringLiteral("CA file %1: no PEM certificate in it").arg(address.ca_file));
    std::filesystem::remove(junk);
}

// Issue 45 item 3: the console names a server as every Fulcrum program does. The Connect
// dialog and --server take ws://HOST:PORT, wss://HOST:PORT and HOST:PORT (which a browser's
// QUrl::fromUserInput made http://), offer $FULCRUM_SERVER first, and refuse anything else
// with the forms, staying open.
TEST(ConsoleConnect, TheServerIsNamedInEveryFormAndABadOneIsRefusedWithTheForms)
{
    EXPECT_EQ(ui::server_url(QStringLiteral("127.0.0.1:7555")), QUrl(QStringLiteral("ws://127.0.0.1:7555")));
    EXPECT_EQ(ui::server_url(QStringLiteral(" wss://head:7481/ ")), QUrl(QStringLiteral("wss://head:7481")));
    EXPECT_EQ(ui::server_url(QStringLiteral("head")), QUrl(QStringLiteral("ws://head:7480")));
    QString problem;
    EXPECT_EQ(ui::server_url(QStringLiteral("http://head:80"), &problem), std::nullopt);
    EXPECT_TRUE(problem.contains(QStringLiteral("expected ws://HOST:PORT, wss://HOST:PORT (TLS) or HOST:PORT")))
        << problem.toStdString();

    QSettings().remove(QStringLiteral("recent-servers"));
    qputenv("FULCRUM_SERVER", "10.9.8.7:7600");
    ui::ConnectDialog dialog;
    EXPECT_EQ(dialog.address().url, QUrl(QStringLiteral("ws://10.9.8.7:7600"))) << "$FULCRUM_SERVER first";
    qunsetenv("FULCRUM_SERVER");
    dialog.set_address({ QUrl(), QStringLiteral("t"), {} });
    dialog.findChild<QComboBox*>()->setCurrentText(QStringLiteral("ftp://nowhere"));
    dialog.show();
    dialog.accept();
    EXPECT_TRUE(dialog.isVisible()) << "a bad server keeps the dialog open";
    EXPECT_EQ(dialog.result(), QDialog::Rejected);
    bool said = false;
    for (const QLabel* label : dialog.findChildren<QLabel*>())
        said = said || (label->isVisibleTo(&dialog) && label->text().contains(QStringLiteral("HOST:PORT")));
    EXPECT_TRUE(said) << "the forms are said in the dialog";
    dialog.findChild<QComboBox*>()->setCurrentText(QStringLiteral("127.0.0.1:7600"));
    dialog.accept();
    EXPECT_EQ(dialog.result(), QDialog::Accepted);
    EXPECT_EQ(dialog.address().url, QUrl(QStringLiteral("ws://127.0.0.1:7600")));
}

// Issue 44's small things in the Connect dialog: it opens on the server in use, not the
// newest remembered one; its labels' mnemonics work (a row of a layout showed a literal
// "&CA file:"); and a token comes from fulcrumd's token file, the operator's first, with the
// reason shown when the file has none.
TEST(ConsoleConnect, TheConnectDialogOpensOnTheServerInUseAndReadsATokenFile)
{
    const ui::ServerAddress current { QUrl(QStringLiteral("ws://10.1.2.3:7555")), QStringLiteral("a-token"), {} };
    ui::ConnectDialog dialog(nullptr, current);
    EXPECT_EQ(dialog.address().url, current.url);
    EXPECT_EQ(dialog.address().token, current.token);
    for (const QLabel* label : dialog.findChildren<QLabel*>())
        if (label->text().contains(QLatin1Char('&'))) {
            EXPECT_NE(label->buddy(), nullptr) << label->text().toStdString() << " shows its '&'";
        }

    const auto dir = std::filesystem::temp_directory_path() / ("fulcrum-connect-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "tokens") << "# fulcrumd tokens\nviewer 0123456789abcdef0123456789abcdef\n"
                                  << "operator alice fedcba9876543210fedcba9876543210\n";
    EXPECT_TRUE(dialog.take_token_file(QString::fromStdString((dir / "tokens").string())));
    EXPECT_EQ(dialog.address().token, QStringLiteral("fedcba9876543210fedcba9876543210"));
    std::ofstream(dir / "workers") << "worker 0123456789abcdef0123456789abcdef\n";
    EXPECT_FALSE(dialog.take_token_file(QString::fromStdString((dir / "workers").string())));
    EXPECT_EQ(dialog.address().token, QStringLiteral("fedcba9876543210fedcba9876543210")) << "kept";
    bool reason_shown = false;
    for (const QLabel* label : dialog.findChildren<QLabel*>())
        reason_shown = reason_shown
            || (label->isVisibleTo(&dialog) && label->text().contains(QStringLiteral("no operator or viewer")));
    EXPECT_TRUE(reason_shown);
    if (const QByteArray out = qgetenv("FULCRUM_SCREENSHOT_DIR"); !out.isEmpty()) {
        dialog.show();
        dialog.grab().save(QString::fromUtf8(out) + QStringLiteral("/connect-dialog.png"));
    }
    std::filesystem::remove_all(dir);
}

// Issue 44 item 1: connecting to another server starts a clean store. Both servers have a
// job 1, the first a job 2 too: the old server's jobs stayed listed, and the new server's
// job 1 showed the old one's status.
TEST(ConsoleConnect, AnotherServerStartsACleanStoreAndItsJobsAreItsOwn)
{
    LiveDaemon first;
    const JobId first_only = first.daemon->submit(kScenario, "console test"); // job 2: the second server has none
    std::string other = kScenario;
    other.replace(other.find("console-live"), 12, "second-server");
    LiveDaemon second(false, other, "second");
    ASSERT_EQ(first.job, second.job) << "the case: the same id on both servers";
    ui::MainWindow window;
    window.set_dialogs(false);
    window.connect_to(first.address(first.operator_token));
    const auto name_of = [&](JobId job) {
        const JobStatus* s = window.store().jobs().job(job);
        return s ? s->name : std::string();
    };
    ASSERT_TRUE(wait_until([&] {
        return name_of(first.job) == "console-live" && name_of(first_only) == "console-live"
            && window.store().cluster();
    }));

    window.connect_to(second.address(second.operator_token));
    ASSERT_TRUE(wait_until([&] { return name_of(second.job) == "second-server"; }));
    EXPECT_EQ(window.store().jobs().rowCount(), 1) << "the first server's job 2 is not listed";
    EXPECT_EQ(window.store().jobs().job(first_only), nullptr);
    ASSERT_TRUE(wait_until([&] { return window.store().history().workers() == 4; }));
    EXPECT_TRUE(window.client().status_text().contains(QStringLiteral("127.0.0.1:%1").arg(second.server->port())))
        << window.client().status_text().toStdString();
}

// Issue 44 item 4: a job submitted elsewhere (fulcrumctl, another console) while the
// operator watches is said in the status bar, shown in bold until chosen, and the jobs pane
// grows to show it; the jobs of the first snapshot are not news.
TEST(ConsoleJobs, AJobSubmittedElsewhereIsAnnouncedAndStandsOutUntilChosen)
{
    LiveDaemon live;
    ui::MainWindow window;
    window.set_dialogs(false);
    window.resize(1280, 800);
    window.show();
    window.connect_to(live.address(live.operator_token));
    ASSERT_TRUE(wait_until([&] { return window.store().jobs().rowCount() == 1 && window.commands().can_command(); }));
    QApplication::processEvents();
    EXPECT_FALSE(window.store().jobs().is_new(live.job)) << "in the snapshot: not news";
    const int pane_before = window.jobs_view().table()->height();

    const JobId submitted = live.daemon->submit(kScenario, "fulcrumctl");
    ASSERT_TRUE(wait_until([&] { return window.store().jobs().rowCount() == 2; }));
    EXPECT_TRUE(window.store().jobs().is_new(submitted));
    EXPECT_TRUE(
        window.statusBar()->currentMessage().startsWith(QStringLiteral("new job %1: console-live").arg(submitted)))
        << window.statusBar()->currentMessage().toStdString();
    const QModelIndex row = window.store().jobs().index(1, ui::JobsModel::Job);
    EXPECT_TRUE(row.data(Qt::FontRole).value<QFont>().bold());
    QApplication::processEvents();
    EXPECT_GE(window.jobs_view().table()->height(), pane_before) << "the pane never shrinks";
    const QTableView* table = window.jobs_view().table();
    EXPECT_GE(table->viewport()->height(), 2 * table->verticalHeader()->defaultSectionSize()) << "both jobs show";

    if (const QByteArray out = qgetenv("FULCRUM_SCREENSHOT_DIR"); !out.isEmpty())
        window.grab().save(QString::fromUtf8(out) + QStringLiteral("/new-job-announced.png"));
    window.store().show_job(submitted);
    EXPECT_FALSE(window.store().jobs().is_new(submitted)) << "chosen: no longer news";
    EXPECT_FALSE(row.data(Qt::FontRole).value<QFont>().bold());
}

// fulcrumd answers a hello of another version with version-mismatch and closes (daemon.cpp);
// here a server of protocol version 2 does so, as the console will meet one after an upgrade.
TEST(ConsoleConnect, AServerOfAnotherProtocolVersionIsReportedAndNotRetried)
{
    QWebSocketServer server(QStringLiteral("fulcrumd 2.0"), QWebSocketServer::NonSecureMode);
    ASSERT_TRUE(server.listen(QHostAddress::LocalHost, 0));
    int connections = 0;
    std::string hello;
    QObject::connect(&server, &QWebSocketServer::newConnection, [&] {
        QWebSocket* socket = server.nextPendingConnection();
        ++connections;
        QObject::connect(socket, &QWebSocket::textMessageReceived, socket, [&, socket](const QString& text) {
            hello = text.toStdString();
            const ServerMessage refusal = ProtocolError { { "version-mismatch",
                "this server speaks protocol version 2, the client 1", "version" } };
            socket->sendTextMessage(QString::fromStdString(encode(refusal)));
            socket->close();
        });
    });

    ui::MainWindow window;
    window.set_dialogs(false);
    QSignalSpy problems(&window, &ui::MainWindow::problemReported);
    window.connect_to(
        { QUrl(QStringLiteral("ws://127.0.0.1:%1").arg(server.serverPort())), QStringLiteral("any"), {} });
    ASSERT_TRUE(wait_until([&] { return window.client().state() == ui::ProtocolClient::State::Failed; }, 10000));
    const auto decoded = decode_client(hello);
    ASSERT_TRUE(decoded.message);
    ASSERT_TRUE(std::holds_alternative<Hello>(*decoded.message));
    EXPECT_EQ(std::get<Hello>(*decoded.message).version, kProtocolVersion);
    EXPECT_EQ(window.client().status_text(),
        QStringLiteral("version mismatch: this server speaks protocol version 2, the client 1. Use a console of the "
                       "server's version."));
    ASSERT_GE(problems.count(), 1);
    EXPECT_TRUE(problems.at(0).at(0).toString().startsWith(QStringLiteral("version mismatch")));
    wait_until([] { return false; }, 2500); // past the first two back-offs
    EXPECT_EQ(connections, 1);
    EXPECT_EQ(window.client().state(), ui::ProtocolClient::State::Failed);
}

TEST(ConsoleJobs, SubmitPauseResumeChangePolicyAndCancelGoThroughTheJobsTable)
{
    LiveDaemon live; // 8 GPUs, the live job on 4 of them
    ui::MainWindow window;
    open_as_operator(window, live);
    ASSERT_TRUE(wait_until([&] {
        return window.commands().can_command() && window.store().jobs().rowCount() == 1 && window.store().cluster();
    }));

    // Submit from the form a job of 5 workers: 4 GPUs are free, so it waits in the queue.
    submit_through_the_form(window, "form-job", 5, 1, 100, 40);
    ASSERT_TRUE(wait_until([&] { return job_named(window, "form-job").has_value(); }));
    const JobId queued = *job_named(window, "form-job");
    ASSERT_TRUE(wait_until(
        [&] { return window.store().cluster() && window.store().cluster()->queue == std::vector<JobId> { queued }; },
        5000))
        << "state " << to_string(status_of(window, queued)->state) << ", message " << status_of(window, queued)->message
        << ", queue of " << window.store().cluster()->queue.size() << ", placement "
        << status_of(window, queued)->placement.size();
    EXPECT_EQ(status_of(window, queued)->state, JobState::Queued);
    EXPECT_EQ(status_of(window, queued)->workers, 5);
    EXPECT_EQ(status_of(window, queued)->model.rfind("softmax", 0), 0u) << status_of(window, queued)->model;
    ASSERT_TRUE(window.show_view(QStringLiteral("scheduler")));
    window.refresh_views();
    auto* queue = window.scheduler_view().findChild<QListWidget*>();
    ASSERT_NE(queue, nullptr);
    ASSERT_EQ(queue->count(), 1);
    EXPECT_TRUE(queue->item(0)->text().startsWith(QStringLiteral("job %1 form-job").arg(queued)))
        << queue->item(0)->text().toStdString();

    // Pause and resume the live job.
    select_job(window, live.job);
    job_action(window, QStringLiteral("Pause job"))->trigger();
    ASSERT_TRUE(wait_until([&] { return status_of(window, live.job)->state == JobState::Paused; }));
    EXPECT_FALSE(job_action(window, QStringLiteral("Pause job"))->isEnabled());
    EXPECT_TRUE(job_action(window, QStringLiteral("Resume job"))->isEnabled());
    job_action(window, QStringLiteral("Resume job"))->trigger();
    ASSERT_TRUE(wait_until([&] { return status_of(window, live.job)->state == JobState::Running; }));

    // The dialogs offer what this fulcrumd has: the console asked it at connecting.
    ASSERT_TRUE(wait_until([&] { return window.store().capabilities() != nullptr; }));
    EXPECT_EQ(window.store().capabilities()->sync_models.size(), 5u);

    // Change its policy to LB-BSP and its sync model to one backup worker.
    answer_next_dialog<ui::ChangePolicyDialog>([](ui::ChangePolicyDialog& d) {
        d.set_policy(QStringLiteral("lbbsp-cpu"));
        d.set_sync(QStringLiteral("backup"), 1);
    });
    job_action(window, QStringLiteral("Change policy"))->trigger();
    ASSERT_TRUE(wait_until([&] {
        const JobStatus* s = status_of(window, live.job);
        return s->policy.rfind("lbbsp-cpu", 0) == 0 && s->sync_model.find("backup") != std::string::npos;
    })) << status_of(window, live.job)->policy
        << " / " << status_of(window, live.job)->sync_model;

    // Cancel the queued job, answering the confirmation.
    select_job(window, queued);
    QTimer::singleShot(50, [] {
        auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
        ASSERT_NE(box, nullptr) << "no confirmation asked";
        EXPECT_TRUE(box->text().contains(QStringLiteral("Cancel job")));
        box->button(QMessageBox::Yes)->click();
    });
    job_action(window, QStringLiteral("Cancel job"))->trigger();
    ASSERT_TRUE(wait_until([&] { return status_of(window, queued)->state == JobState::Stopped; }));
    ASSERT_TRUE(wait_until([&] { return window.store().cluster()->queue.empty(); }));

    // A short job on the free GPUs runs to its end: the scheduler's JCT histogram counts it.
    submit_through_the_form(window, "short-job", 2, 0, 64, 20);
    ASSERT_TRUE(wait_until(
        [&] {
            const auto id = job_named(window, "short-job");
            return id && status_of(window, *id)->state == JobState::Finished;
        },
        60000));
    window.refresh_views();
    double bin_width = 0;
    const std::vector<int> bins = window.scheduler_view().jct_histogram(&bin_width);
    int finished = 0;
    for (const int b : bins)
        finished += b;
    EXPECT_EQ(finished, 1);
    EXPECT_GT(bin_width, 0);
    EXPECT_GE(window.store().cluster_timeline().size(), 2u);
}

TEST(ConsoleCluster, HoveringAGpuTellsItsJobWorkerBatchSizeAndState)
{
    LiveDaemon live;
    ui::MainWindow window;
    open_as_operator(window, live);
    ASSERT_TRUE(wait_until([&] {
        const JobStatus* s = window.store().jobs().job(live.job);
        return window.commands().can_command() && window.store().cluster() && s && s->placement.size() == 4
            && window.store().worker_state(live.job, 3);
    }));
    ASSERT_TRUE(window.commands().pin(live.job, 3, 8));
    ASSERT_TRUE(wait_until([&] { return window.store().worker_state(live.job, 3)->pinned == 8; }));
    const int gpu = window.store().jobs().job(live.job)->placement[3];

    ASSERT_TRUE(window.show_view(QStringLiteral("cluster")));
    ui::ClusterMap& map = window.cluster_map();
    QApplication::processEvents();
    EXPECT_TRUE(map.header_text().startsWith(QStringLiteral("2 servers × 4 GPUs"))) << map.header_text().toStdString();
    std::optional<QPoint> over;
    for (int y = 0; y < map.height() && !over; y += 3)
        for (int x = 0; x < map.width() && !over; x += 3)
            if (map.gpu_at({ x, y }) == gpu)
                over = QPoint(x, y);
    ASSERT_TRUE(over) << "GPU " << gpu << " is not drawn";

    QHelpEvent hover(QEvent::ToolTip, *over, map.mapToGlobal(*over));
    QApplication::sendEvent(&map, &hover);
    const QString tip = QToolTip::text();
    EXPECT_TRUE(tip.startsWith(QStringLiteral("GPU %1 on server").arg(gpu))) << tip.toStdString();
    EXPECT_TRUE(tip.contains(QStringLiteral("job %1 console-live (running)").arg(live.job))) << tip.toStdString();
    EXPECT_TRUE(tip.contains(QStringLiteral("worker 3: batch "))) << tip.toStdString();
    EXPECT_TRUE(tip.contains(QStringLiteral("pinned at 8"))) << tip.toStdString();
}

TEST(ConsoleExport, ChartsTablesAndTimelineSamplesAreWrittenWhole)
{
    LiveDaemon live;
    ui::MainWindow window;
    open_as_operator(window, live);
    ASSERT_TRUE(wait_until([&] { return window.store().history().iterations().size() >= 5; }));
    select_job(window, live.job);
    ASSERT_TRUE(window.commands().job_action(live.job, JobAction::Pause)); // a still picture
    ASSERT_TRUE(wait_until([&] { return status_of(window, live.job)->state == JobState::Paused; }));
    window.refresh_views();

    const auto dir = std::filesystem::temp_directory_path() / ("fulcrum-export-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto path = [&](const char* name) { return QString::fromStdString((dir / name).string()); };
    QString error;

    ASSERT_TRUE(window.show_view(QStringLiteral("equilibrium")));
    window.refresh_views();
    ASSERT_TRUE(window.export_png_to(path("equilibrium.png"), &error)) << error.toStdString();
    const QImage png(path("equilibrium.png"));
    ASSERT_FALSE(png.isNull());
    EXPECT_GT(png.width(), 600);

    ASSERT_TRUE(window.export_csv_to(QStringLiteral("Workers table"), path("workers.csv"), &error))
        << error.toStdString();
    const QStringList workers = read_file(path("workers.csv")).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    ASSERT_EQ(workers.size(), 5); // the header and four workers
    EXPECT_TRUE(workers[0].startsWith(QStringLiteral("Worker,"))) << workers[0].toStdString();
    EXPECT_TRUE(workers[4].startsWith(QStringLiteral("3,"))) << workers[4].toStdString();

    ASSERT_TRUE(window.export_csv_to(QStringLiteral("Straggler timeline data"), path("timeline.csv"), &error))
        << error.toStdString();
    const QStringList samples = read_file(path("timeline.csv")).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    const auto held = window.store().history().worker(0).size();
    EXPECT_EQ(samples.size(), 1 + 4 * static_cast<qsizetype>(held)); // every shown sample of every worker
    EXPECT_EQ(samples[0], QStringLiteral("worker,iteration,start_s,compute_s,comm_s,wait_s,batch_size,straggler"));

    ASSERT_TRUE(window.export_csv_to(QStringLiteral("Equilibrium chart data"), path("equilibrium.csv"), &error))
        << error.toStdString();
    EXPECT_GT(read_file(path("equilibrium.csv")).count(QLatin1Char('\n')), 4);

    // What cannot be written is named, and nothing half-written is left.
    EXPECT_FALSE(window.export_csv_to(QStringLiteral("Workers table"), path("no-such-folder/workers.csv"), &error));
    EXPECT_TRUE(error.startsWith(path("no-such-folder/workers.csv"))) << error.toStdString();
    EXPECT_FALSE(std::filesystem::exists(dir / "no-such-folder"));
    EXPECT_FALSE(window.export_csv_to(QStringLiteral("Pie chart"), path("pie.csv"), &error));
    EXPECT_TRUE(error.contains(QStringLiteral("expected one of: Jobs table"))) << error.toStdString();
    std::filesystem::remove_all(dir);
}

TEST(JobDialogs, OfferOnlyWhatTheServerHasWithItsDescriptions)
{
    // A server without lbbsp-gpu, without backup workers and without an svm, with a policy of
    // its own that the console has never heard of and one that needs a field the forms cannot
    // fill.
    Capabilities offered;
    offered.policies = { { "uniform", "X / n each", "", {} }, { "lbbsp-cpu", "Algorithm 1", "", {} },
        { "fixed", "given sizes", "", { "batch_sizes" } }, { "sticky", "a site's own policy", "", {} } };
    offered.sync_models
        = { { "bsp", "a barrier every iteration", "barrier", {} }, { "asp", "no barrier", "free-running", {} },
              { "ssp", "bounded staleness", "free-running", {}, { "staleness" } } };
    offered.models = { { "softmax", "regression", "", {} }, { "mlp", "a perceptron", "", {}, { "hidden" } } };
    const auto items = [](const QComboBox* box) {
        QStringList out;
        for (int i = 0; i < box->count(); ++i)
            out << box->itemText(i);
        return out;
    };
    ui::SubmitJobDialog submit(offered);
    const auto boxes_of_submit = submit.findChildren<QComboBox*>(); // name is a line edit; model, policy, mode
    EXPECT_EQ(items(boxes_of_submit.at(0)), (QStringList { QStringLiteral("softmax"), QStringLiteral("mlp") }));
    EXPECT_EQ(boxes_of_submit.at(0)->currentText(), QStringLiteral("mlp")) << "the form's job is an mlp by default";
    const auto* policy = boxes_of_submit.at(1);
    const QStringList settable { QStringLiteral("uniform"), QStringLiteral("lbbsp-cpu"), QStringLiteral("sticky") };
    EXPECT_EQ(items(policy), settable) << "fixed needs batch sizes the form cannot give";
    EXPECT_EQ(policy->currentText(), QStringLiteral("lbbsp-cpu"));
    EXPECT_EQ(policy->itemData(1, Qt::ToolTipRole).toString(), QStringLiteral("Algorithm 1"));
    // The fields the server lists for a kind are the ones the form fills: hidden for the mlp only.
    EXPECT_TRUE(submit.scenario_json().contains(QStringLiteral("\"hidden\"")));
    submit.set_model(QStringLiteral("softmax"));
    EXPECT_FALSE(submit.scenario_json().contains(QStringLiteral("\"hidden\"")));
    // A server from before the models were listed: the scenario names none, the server's default runs.
    Capabilities older = offered;
    older.models.clear();
    EXPECT_TRUE(ui::SubmitJobDialog(older).scenario_json().contains(QStringLiteral("\"model\":{}")));

    JobStatus status;
    status.workers = 4;
    status.sync_model = "bsp";
    ui::ChangePolicyDialog change(3, &status, offered);
    const auto boxes = change.findChildren<QComboBox*>();
    ASSERT_EQ(boxes.size(), 2);
    EXPECT_EQ(items(boxes[0]), settable);
    EXPECT_EQ(items(boxes[1]), (QStringList { QStringLiteral("(unchanged)"), QStringLiteral("bsp") }));
    // A free-running job switches within its family, as the server names it, and gives the
    // fields the server lists for the chosen model.
    status.sync_model = "ssp(s=5)";
    ui::ChangePolicyDialog free_running(3, &status, offered);
    EXPECT_EQ(items(free_running.findChildren<QComboBox*>().at(1)),
        (QStringList { QStringLiteral("(unchanged)"), QStringLiteral("asp"), QStringLiteral("ssp") }));
    free_running.set_sync(QStringLiteral("ssp"), 1, 7);
    EXPECT_EQ(free_running.sync_json(), QStringLiteral(R"({"staleness":7,"type":"ssp"})"));
    free_running.set_sync(QStringLiteral("asp"));
    EXPECT_EQ(free_running.sync_json(), QStringLiteral(R"({"type":"asp"})"));
}

// A job that ended stays in fulcrumd's table; "Replay job" opens its recorded run at once.
TEST(ConsoleJobs, AFinishedJobIsReplayedWithOneClick)
{
    LiveDaemon live;
    std::string quick = kScenario;
    quick.replace(quick.find("\"mode\": \"paced\""), 15, "\"mode\": \"virtual\"");
    quick.replace(quick.find("\"iterations\": 3000"), 18, "\"iterations\": 60");
    const JobId done = live.daemon->submit(quick, "console test");
    ui::MainWindow window;
    window.set_dialogs(false);
    window.show();
    window.connect_to(live.address(live.operator_token));
    const auto finished = [&] {
        const JobStatus* s = window.store().jobs().job(done);
        return s && s->state == JobState::Finished;
    };
    ASSERT_TRUE(wait_until(finished, 60000));
    QTableView* table = window.jobs_view().table();
    for (int row = 0; row < table->model()->rowCount(); ++row)
        if (table->model()->index(row, ui::JobsModel::Job).data().toInt() == done)
            table->selectRow(row);
    QAction* replay = nullptr;
    for (QAction* a : window.jobs_view().job_actions())
        if (a->text() == QStringLiteral("Replay job"))
            replay = a;
    ASSERT_NE(replay, nullptr);
    ASSERT_TRUE(replay->isEnabled()) << "enabled for a finished job";
    QAction* back_to_live = nullptr;
    for (QAction* a : window.findChildren<QAction*>())
        if (a->text() == QStringLiteral("Back to &live"))
            back_to_live = a;
    ASSERT_NE(back_to_live, nullptr);
    EXPECT_FALSE(back_to_live->isEnabled()) << "live already (issue 44's small things)";
    // The live views as they stand, to find them again after the replay (issue 44 item 2:
    // the finished job's chart and its events came back empty).
    window.store().show_job(done);
    ASSERT_TRUE(wait_until([&] { return window.store().history().last_iteration() == 59; }));
    struct LiveViews {
        int jobs = 0, events = 0;
        std::optional<std::int64_t> first, last;
        int workers = 0;
    };
    const auto live_views = [&] {
        return LiveViews { window.store().jobs().rowCount(), window.store().events().rowCount(),
            window.store().history().first_iteration(), window.store().history().last_iteration(),
            window.store().history().workers() };
    };
    ASSERT_TRUE(window.commands().pin(live.job, 3, 5)); // an event in the live list
    ASSERT_TRUE(wait_until([&] { return window.store().events().rowCount() > 0; }));
    const LiveViews before = live_views();
    QSignalSpy ready(&window, &ui::MainWindow::replayReady);
    replay->trigger();
    ASSERT_TRUE(wait_until([&] { return ready.count() == 1; }, 60000));
    ASSERT_TRUE(window.store().replaying());
    EXPECT_EQ(window.store().replay_state()->length, 60);
    EXPECT_TRUE(back_to_live->isEnabled());
    back_to_live->trigger();
    ASSERT_TRUE(wait_until([&] { return !window.store().replaying(); }, 10000));
    EXPECT_FALSE(back_to_live->isEnabled());
    EXPECT_EQ(window.store().shown_job(), done);
    const LiveViews after = live_views();
    EXPECT_EQ(after.jobs, before.jobs);
    EXPECT_GE(after.events, before.events) << "none lost (the live job may have added some meanwhile)";
    EXPECT_EQ(after.first, before.first);
    EXPECT_EQ(after.last, before.last);
    EXPECT_EQ(after.workers, before.workers);
}
