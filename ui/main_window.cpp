#include "ui/main_window.h"

#include "ui/local_replay.h"
#include "ui/views/cluster_map.h"
#include "ui/views/connect_dialog.h"
#include "ui/views/equilibrium_view.h"
#include "ui/views/events_view.h"
#include "ui/views/export.h"
#include "ui/views/jobs_view.h"
#include "ui/views/prediction_view.h"
#include "ui/views/replay_bar.h"
#include "ui/views/scheduler_view.h"
#include "ui/views/straggler_timeline.h"
#include "ui/views/workers_view.h"

#include <QApplication>
#include <QChartView>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

namespace fulcrum::ui {

using namespace protocol;

namespace {

QString text(const std::string& s)
{
    return QString::fromStdString(s);
}

const QStringList kViewNames { QStringLiteral("equilibrium"), QStringLiteral("timeline"), QStringLiteral("prediction"),
    QStringLiteral("cluster"), QStringLiteral("scheduler") };

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent)
    , commands_(client_, store_)
    , navigator_(store_, commands_)
    , notice_(new QLabel(this))
    , connection_(new QLabel(this))
    , details_(new QLabel(this))
    , frame_(new QTimer(this))
{
    setWindowTitle(QStringLiteral("Fulcrum"));
    jobs_ = new JobsView(store_, commands_, this);
    workers_ = new WorkersView(store_, commands_, this);
    equilibrium_ = new EquilibriumView(store_, window_, this);
    timeline_ = new StragglerTimeline(store_, window_, this);
    prediction_ = new PredictionView(store_, window_, this);
    cluster_ = new ClusterMap(store_, this);
    scheduler_ = new SchedulerView(store_, this);
    events_ = new EventsView(store_, this);
    replay_bar_ = new ReplayBar(store_, commands_, navigator_, this);

    auto* timeline_page = new QWidget(this);
    auto* timeline_layout = new QVBoxLayout(timeline_page);
    timeline_layout->setContentsMargins(0, 0, 0, 0);
    auto* legend = new QLabel(
        QStringLiteral(
            "<span style='color:#3b7dd8'>■</span> compute &nbsp; <span style='color:#f2a53a'>■</span> communication "
            "&nbsp; <span style='color:#b0b0b0'>■</span> wait at the barrier &nbsp; <span "
            "style='color:#d62728'>▬</span> "
            "the iteration's straggler &nbsp; heat strip: lateness per worker"),
        timeline_page);
    timeline_layout->addWidget(legend);
    timeline_layout->addWidget(timeline_, 1);
    details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    details_->setText(QStringLiteral("Click an iteration for its numbers."));
    timeline_layout->addWidget(details_);

    charts_ = new QTabWidget(this);
    charts_->addTab(equilibrium_, QStringLiteral("Equilibrium"));
    charts_->addTab(timeline_page, QStringLiteral("Straggler timeline"));
    charts_->addTab(prediction_, QStringLiteral("Prediction"));
    charts_->addTab(cluster_, QStringLiteral("Cluster"));
    charts_->addTab(scheduler_, QStringLiteral("Scheduler"));
    tables_ = new QTabWidget(this);
    tables_->addTab(workers_, QStringLiteral("Workers"));
    tables_->addTab(events_, QStringLiteral("Events"));

    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(jobs_);
    split->addWidget(charts_);
    split->addWidget(tables_);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 4);
    split->setStretchFactor(2, 2);
    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(4, 4, 4, 0);
    notice_->setWordWrap(true);
    notice_->hide();
    layout->addWidget(notice_);
    layout->addWidget(split, 1);
    layout->addWidget(replay_bar_);
    setCentralWidget(central);
    statusBar()->addPermanentWidget(connection_);
    connection_->setText(QStringLiteral("not connected"));
    statusBar()->showMessage(
        QStringLiteral("Fulcrum %1 — not connected. File ▸ Connect to fulcrumd, or File ▸ Open run file.")
            .arg(QStringLiteral(FULCRUM_VERSION)));
    build_menus();
    resize(1280, 900);

    client_.set_subscription(Subscribe {});
    connect(&client_, &ProtocolClient::received, this, [this](const ServerMessage& m) {
        store_.ingest(m);
        on_message(m);
    });
    connect(&client_, &ProtocolClient::stateChanged, this, [this] {
        connection_->setText(client_.status_text());
        const bool bad = client_.state() == ProtocolClient::State::Failed
            || client_.state() == ProtocolClient::State::WaitingToReconnect;
        connection_->setStyleSheet(bad ? QStringLiteral("color: #b00020") : QString());
        if (client_.state() == ProtocolClient::State::Failed)
            report(QStringLiteral("Connection"), client_.status_text());
    });
    connect(&client_, &ProtocolClient::sessionStarted, this, [this] {
        if (opening_ == Opening::ListingFile)
            commands_.list_runs();
    });
    connect(&commands_, &Commands::sent, this,
        [this](const QString& what) { statusBar()->showMessage(QStringLiteral("sent: %1").arg(what), 5000); });
    connect(&commands_, &Commands::succeeded, this,
        [this](const QString& what) { statusBar()->showMessage(QStringLiteral("done: %1").arg(what), 5000); });
    connect(&commands_, &Commands::failed, this, [this](const QString& what, const QString& why) {
        report(QStringLiteral("Command refused"), QStringLiteral("%1: %2").arg(what, why));
        if (opening_ != Opening::None && opening_ != Opening::Ready)
            opening_ = Opening::None;
    });
    connect(&commands_, &Commands::fateUnknown, this, [this](const QString& what, const QString& why) {
        show_notice(QStringLiteral("The connection dropped (%1) while this command was in flight: <b>%2</b>. Its fate "
                                   "is unknown until the console "
                                   "reconnects.")
                        .arg(why.toHtmlEscaped(), what.toHtmlEscaped()),
            true);
    });
    connect(&commands_, &Commands::fateKnown, this, [this](const QString& what, const QString& fate) {
        show_notice(
            QStringLiteral("Reconnected. <b>%1</b>: %2.").arg(what.toHtmlEscaped(), fate.toHtmlEscaped()), false);
    });
    connect(&commands_, &Commands::runsListed, this, &MainWindow::on_runs);
    connect(&navigator_, &ReplayNavigator::progressed, this, [this](double fraction, const QString& what) {
        statusBar()->showMessage(QStringLiteral("%1: %2 %").arg(what).arg(100.0 * fraction, 0, 'f', 0));
    });
    connect(&navigator_, &ReplayNavigator::arrived, this, [this] {
        navigator_.set_pause_on_arrival(false);
        statusBar()->showMessage(replay_bar_->position_text(), 10000);
        if (opening_ == Opening::Positioning) {
            opening_ = Opening::Ready;
            refresh_views();
            emit replayReady();
        }
    });
    connect(&commands_, &Commands::replayOpened, this, [this](std::int64_t replay) {
        store_.follow(replay);
        window_.follow();
        statusBar()->showMessage(QStringLiteral("loading the replay…"));
    });
    connect(&store_, &ConsoleStore::historyChanged, this, &MainWindow::schedule_frame);
    connect(&store_, &ConsoleStore::shownJobChanged, this, [this] {
        window_.follow();
        schedule_frame();
    });
    connect(&store_, &ConsoleStore::replayStateChanged, this, &MainWindow::schedule_frame);
    connect(&window_, &IterationWindow::changed, this, &MainWindow::schedule_frame);
    connect(charts_, &QTabWidget::currentChanged, this, &MainWindow::schedule_frame);
    connect(timeline_, &StragglerTimeline::iterationClicked, this, [this](WorkerId worker, std::int64_t iteration) {
        details_->setText(StragglerTimeline::describe(store_.history(), worker, iteration));
    });
    connect(events_, &EventsView::jumpRequested, this, &MainWindow::jump_to);
    connect(replay_bar_, &ReplayBar::closeRequested, this, &MainWindow::back_to_live);
    frame_->setSingleShot(true);
    connect(frame_, &QTimer::timeout, this, [this] { redraw(false); });
}

MainWindow::~MainWindow() = default;

void MainWindow::build_menus()
{
    QMenu* file = menuBar()->addMenu(QStringLiteral("&File"));
    file->addAction(QStringLiteral("&Connect to fulcrumd…"), QKeySequence(QStringLiteral("Ctrl+K")), this, [this] {
        ConnectDialog dialog(this);
        if (dialog.exec() != QDialog::Accepted)
            return;
        dialog.remember(dialog.address());
        connect_to(dialog.address());
    });
    file->addAction(QStringLiteral("&Disconnect"), this, [this] { client_.close(); });
    file->addSeparator();
    file->addAction(QStringLiteral("Open a &recorded run of the server…"), QKeySequence(QStringLiteral("Ctrl+R")), this,
        &MainWindow::open_server_run_dialog);
    file->addAction(QStringLiteral("&Open run file…"), QKeySequence::Open, this, &MainWindow::open_run_file_dialog);
    file->addAction(
        QStringLiteral("Back to &live"), QKeySequence(QStringLiteral("Ctrl+L")), this, &MainWindow::back_to_live);
    file->addSeparator();
    file->addAction(QStringLiteral("Export chart as &PNG…"), QKeySequence(QStringLiteral("Ctrl+Shift+P")), this,
        &MainWindow::export_png);
    file->addAction(QStringLiteral("Export data as &CSV…"), QKeySequence(QStringLiteral("Ctrl+Shift+C")), this,
        &MainWindow::export_csv);
    file->addSeparator();
    file->addAction(QStringLiteral("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* jobs = menuBar()->addMenu(QStringLiteral("&Jobs"));
    jobs->addActions(jobs_->job_actions());
    QMenu* workers = menuBar()->addMenu(QStringLiteral("&Workers"));
    workers->addActions(workers_->worker_actions());
    QMenu* view = menuBar()->addMenu(QStringLiteral("&View"));
    view->addAction(
        QStringLiteral("Follow the newest iterations"), QKeySequence(Qt::Key_End), this, [this] { window_.follow(); });
    view->addAction(QStringLiteral("Zoom in"), QKeySequence::ZoomIn, this,
        [this] { window_.zoom(0.8, (window_.first() + window_.last()) / 2); });
    view->addAction(QStringLiteral("Zoom out"), QKeySequence::ZoomOut, this,
        [this] { window_.zoom(1.25, (window_.first() + window_.last()) / 2); });
}

void MainWindow::report(const QString& title, const QString& text)
{
    statusBar()->showMessage(text, 15000);
    emit problemReported(text);
    if (!dialogs_)
        return;
    auto* box = new QMessageBox(QMessageBox::Warning, title, text, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void MainWindow::show_notice(const QString& text, bool warning)
{
    notice_->setText(text);
    notice_->setStyleSheet(warning
            ? QStringLiteral("background: #fff3c4; color: #5a4300; padding: 6px; border: 1px solid #e0c060;")
            : QStringLiteral("background: #e3f4e1; color: #1d4d1a; padding: 6px; border: 1px solid #9ccc96;"));
    notice_->show();
}

void MainWindow::connect_to(const ServerAddress& address)
{
    if (store_.replaying())
        store_.follow(0);
    local_.reset();
    opening_ = Opening::None;
    live_address_ = address;
    client_.open(address);
}

void MainWindow::schedule_frame()
{
    dirty_ = true;
    if (!frame_->isActive())
        frame_->start(kFrameMs);
}

void MainWindow::refresh_views()
{
    redraw(true);
}

void MainWindow::redraw(bool complete)
{
    dirty_ = false;
    const JobHistory& h = store_.history();
    window_.blockSignals(true);
    window_.set_data_range(h.first_iteration().value_or(0), h.last_iteration().value_or(0));
    window_.blockSignals(false);
    // Only what is on screen is redrawn; a tab brought forward redraws then.
    QWidget* current = charts_->currentWidget();
    if (current == equilibrium_ && complete)
        equilibrium_->refresh_complete();
    else if (current == equilibrium_)
        equilibrium_->refresh();
    else if (current == prediction_)
        prediction_->refresh();
    else if (current == scheduler_)
        scheduler_->refresh();
    timeline_->update();
    cluster_->update();
    if (const ReplayState* s = store_.replay_state();
        s && opening_ == Opening::Loading && !open_at_ && s->end_time_s > 0)
        statusBar()->showMessage(
            QStringLiteral("loading the replay: %1 %")
                .arg(100.0 * std::min(1.0, navigator_.delivered_time_s() / s->end_time_s), 0, 'f', 0));
}

bool MainWindow::show_view(const QString& name)
{
    const auto index = kViewNames.indexOf(name);
    if (index < 0)
        return false;
    charts_->setCurrentIndex(static_cast<int>(index));
    return true;
}

void MainWindow::on_message(const ServerMessage& message)
{
    navigator_.on_message(message);
    if (opening_ != Opening::Loading)
        return;
    if (open_at_) {
        // Opened paused at the start: once its opening snapshot is in, move to the iteration.
        if (std::holds_alternative<SnapshotEnd>(message) && store_.replay_state() && store_.replay_state()->seeked) {
            opening_ = Opening::Positioning;
            navigator_.set_pause_on_arrival(true);
            navigator_.go_to_iteration(*open_at_);
        }
        return;
    }
    if (const auto* state = std::get_if<ReplayState>(&message);
        state && state->replay == store_.source() && state->state == ReplayPhase::Finished) {
        opening_ = Opening::Ready;
        // Loaded as fast as it could be read; played again, it goes at the run's own pace.
        ReplayCommand speed;
        speed.replay = state->replay;
        speed.action = ReplayAction::SetSpeed;
        speed.speed = 1;
        commands_.replay(speed);
        statusBar()->showMessage(
            QStringLiteral("replay loaded: %1 iterations of %2").arg(state->length).arg(text(state->database)), 10000);
        refresh_views();
        emit replayReady();
    }
}

void MainWindow::on_runs(const std::vector<RunListing>& runs)
{
    if (opening_ == Opening::ListingFile && local_) {
        std::vector<RunListing> mine;
        for (const RunListing& r : runs)
            if (text(r.database) == local_->database_name())
                mine.push_back(r);
        const QString file = local_->database_path();
        if (mine.empty()) {
            opening_ = Opening::None;
            return report(QStringLiteral("Open run file"),
                QStringLiteral("%1 cannot be replayed: fulcrumd does not list it as a run store").arg(file));
        }
        if (mine.front().status.rfind("unreadable", 0) == 0) {
            opening_ = Opening::None;
            return report(QStringLiteral("Open run file"),
                QStringLiteral("%1 cannot be replayed: it is not a Fulcrum run store, or it is damaged (%2)")
                    .arg(file, text(mine.front().status)));
        }
        RunId run = mine.front().run;
        if (mine.size() > 1 && dialogs_) {
            QStringList items;
            for (const RunListing& r : mine)
                items << QStringLiteral("run %1: %2 (%3, %4 iterations)")
                             .arg(r.run)
                             .arg(text(r.name), text(r.status))
                             .arg(r.iterations);
            bool ok = false;
            const QString chosen = QInputDialog::getItem(this, QStringLiteral("Open run file"),
                QStringLiteral("%1 holds several runs:").arg(file), items, 0, false, &ok);
            if (!ok) {
                opening_ = Opening::None;
                return;
            }
            run = mine[static_cast<std::size_t>(items.indexOf(chosen))].run;
        }
        pending_database_ = local_->database_name();
        pending_run_ = run;
        open_server_run(pending_database_, run, open_at_);
        return;
    }
    if (opening_ != Opening::None || !dialogs_)
        return;
    // The operator asked for the server's recorded runs: let them pick one.
    QDialog dialog(this);
    dialog.setWindowTitle(QStringLiteral("Recorded runs on the server"));
    auto* table = new QTableWidget(static_cast<int>(runs.size()), 6, &dialog);
    table->setHorizontalHeaderLabels({ QStringLiteral("File"), QStringLiteral("Run"), QStringLiteral("Name"),
        QStringLiteral("Status"), QStringLiteral("Iterations"), QStringLiteral("Started") });
    for (int i = 0; i < static_cast<int>(runs.size()); ++i) {
        const RunListing& r = runs[static_cast<std::size_t>(i)];
        const QStringList cells { text(r.database), QString::number(r.run), text(r.name), text(r.status),
            QString::number(r.iterations), text(r.started_at) };
        for (int c = 0; c < cells.size(); ++c)
            table->setItem(i, c, new QTableWidgetItem(cells[c]));
    }
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setSelectionMode(QAbstractItemView::SingleSelection);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->horizontalHeader()->setStretchLastSection(true);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Open | QDialogButtonBox::Cancel, &dialog);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    connect(table, &QTableWidget::cellDoubleClicked, &dialog, &QDialog::accept);
    auto* layout = new QVBoxLayout(&dialog);
    layout->addWidget(table);
    layout->addWidget(buttons);
    dialog.resize(760, 400);
    if (dialog.exec() != QDialog::Accepted || table->currentRow() < 0)
        return;
    const RunListing& r = runs[static_cast<std::size_t>(table->currentRow())];
    if (r.status.rfind("unreadable", 0) == 0)
        return report(QStringLiteral("Replay"),
            QStringLiteral("%1 cannot be replayed: %2").arg(text(r.database), text(r.status)));
    open_server_run(text(r.database), r.run);
}

void MainWindow::open_server_run_dialog()
{
    opening_ = Opening::None;
    commands_.list_runs();
}

void MainWindow::open_server_run(const QString& database, RunId run, std::optional<std::int64_t> at)
{
    open_at_ = at;
    OpenReplay open;
    open.database = database.toStdString();
    open.run = run;
    // Without an iteration to stand at, load it all as fast as it can be read; with one,
    // open paused and let the navigator fast-forward there.
    open.speed = open_at_ ? 1 : 0;
    open.paused = open_at_.has_value();
    if (commands_.open_replay(open))
        opening_ = Opening::Loading;
}

void MainWindow::open_run_file_dialog()
{
    const QString file = QFileDialog::getOpenFileName(
        this, QStringLiteral("Open a recorded run"), {}, QStringLiteral("Run stores (*.db);;All files (*)"));
    if (!file.isEmpty())
        open_run_file(file);
}

void MainWindow::open_run_file(const QString& path, std::optional<std::int64_t> at)
{
    if (client_.state() == ProtocolClient::State::Connected && !local_)
        live_address_ = client_.address();
    open_at_ = at;
    opening_ = Opening::ListingFile;
    local_ = std::make_unique<LocalReplayHost>();
    if (!daemon_path_.isEmpty())
        local_->set_daemon(daemon_path_);
    connect(
        local_.get(), &LocalReplayHost::ready, this, [this](const ServerAddress& address) { client_.open(address); });
    connect(local_.get(), &LocalReplayHost::failed, this, [this](const QString& why) {
        opening_ = Opening::None;
        report(QStringLiteral("Open run file"), why);
    });
    statusBar()->showMessage(QStringLiteral("opening %1…").arg(path));
    local_->start(path);
}

void MainWindow::back_to_live()
{
    if (store_.replaying() && client_.state() == ProtocolClient::State::Connected) {
        ReplayCommand close;
        close.replay = store_.source();
        close.action = ReplayAction::Close;
        commands_.replay(close);
    }
    store_.follow(0);
    opening_ = Opening::None;
    open_at_.reset();
    if (local_) {
        local_.reset();
        if (live_address_)
            client_.open(*live_address_);
        else
            client_.close();
    } else {
        client_.set_subscription(Subscribe {}); // a fresh snapshot of the live state
    }
}

void MainWindow::jump_to(const EventRecord& event)
{
    if (store_.replaying()) {
        replay_bar_->seek_time(event.time_s);
        return;
    }
    if (store_.shown_job() != event.job)
        store_.show_job(event.job);
    window_.centre_on(event.iteration);
    charts_->setCurrentWidget(equilibrium_);
}

void MainWindow::export_png()
{
    const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Export chart as PNG"),
        QStringLiteral("fulcrum-chart.png"), QStringLiteral("PNG (*.png)"));
    QString error;
    if (!path.isEmpty() && !export_png_to(path, &error))
        report(QStringLiteral("Export"), error);
}

bool MainWindow::export_png_to(const QString& path, QString* error)
{
    refresh_views(); // every series drawn, not just a first frame's
    QWidget* target = charts_->currentWidget();
    return save_png(*target, path, error);
}

const QStringList& MainWindow::csv_exports()
{
    static const QStringList choices { QStringLiteral("Jobs table"), QStringLiteral("Workers table"),
        QStringLiteral("Events table"), QStringLiteral("Equilibrium chart data"),
        QStringLiteral("Prediction chart data"), QStringLiteral("Straggler timeline data") };
    return choices;
}

void MainWindow::export_csv()
{
    bool ok = false;
    const QString what = QInputDialog::getItem(
        this, QStringLiteral("Export as CSV"), QStringLiteral("What to export:"), csv_exports(), 0, false, &ok);
    if (!ok)
        return;
    const QString path = QFileDialog::getSaveFileName(
        this, QStringLiteral("Export as CSV"), QStringLiteral("fulcrum.csv"), QStringLiteral("CSV (*.csv)"));
    QString error;
    if (!path.isEmpty() && !export_csv_to(what, path, &error))
        report(QStringLiteral("Export"), error);
}

bool MainWindow::export_csv_to(const QString& what, const QString& path, QString* error)
{
    const auto index = csv_exports().indexOf(what);
    if (index < 0) {
        if (error)
            *error = QStringLiteral("nothing to export is called \"%1\" (expected one of: %2)")
                         .arg(what, csv_exports().join(QStringLiteral(", ")));
        return false;
    }
    const QString csv = index == 0 ? table_csv(store_.jobs())
        : index == 1               ? table_csv(store_.workers())
        : index == 2               ? table_csv(store_.events())
        : index == 3               ? equilibrium_->visible_csv()
        : index == 4               ? prediction_->visible_csv()
                                   : timeline_->visible_csv();
    return write_text(path, csv, error);
}

} // namespace fulcrum::ui
