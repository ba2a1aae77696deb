#include "ui/main_window.h"

#include "ui/replay_opener.h"
#include "ui/views/cluster_map.h"
#include "ui/views/connect_dialog.h"
#include "ui/views/equilibrium_view.h"
#include "ui/views/events_view.h"
#include "ui/views/export.h"
#include "ui/views/jobs_view.h"
#include "ui/views/prediction_view.h"
#include "ui/views/replay_bar.h"
#include "ui/views/run_list_dialog.h"
#include "ui/views/scheduler_view.h"
#include "ui/views/straggler_timeline.h"
#include "ui/views/workers_view.h"

#include <QApplication>
#include <QChartView>
#include <QDialog>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QScrollBar>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

namespace fulcrum::ui {

using namespace protocol;

namespace {

const QString kStartHint = QStringLiteral("Fulcrum %1. File ▸ Connect to fulcrumd, or File ▸ Open run file.");

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
    , opener_(new ReplayOpener(client_, commands_, store_, navigator_, this))
{
    setWindowTitle(QStringLiteral("Fulcrum"));
    jobs_ = new JobsView(store_, commands_, this);
    workers_ = new WorkersView(store_, commands_, this);
    equilibrium_ = new EquilibriumView(store_, window_, this);
    // A large job's charts draw the line of the worker chosen in the table beside the worst stragglers'.
    connect(workers_->table()->selectionModel(), &QItemSelectionModel::selectionChanged, equilibrium_,
        [this] { equilibrium_->set_chosen(workers_->selected_worker()); });
    timeline_ = new StragglerTimeline(store_, window_, this);
    // ... and the timeline outlines its lane, scrolled into view.
    connect(workers_->table()->selectionModel(), &QItemSelectionModel::selectionChanged, timeline_,
        [this] { timeline_->set_chosen(workers_->selected_worker()); });
    connect(timeline_, &StragglerTimeline::workerFound, workers_, &WorkersView::select_worker);
    prediction_ = new PredictionView(store_, window_, this);
    connect(workers_->table()->selectionModel(), &QItemSelectionModel::selectionChanged, prediction_, [this] {
        if (const auto worker = workers_->selected_worker())
            prediction_->set_worker(*worker);
    });
    // Another job's workers: a reset clears the selection without saying so.
    connect(&store_.workers(), &QAbstractItemModel::modelReset, this, [this] {
        equilibrium_->set_chosen(std::nullopt);
        prediction_->forget_worker();
        timeline_->set_chosen(std::nullopt);
        timeline_->show_every_lane();
    });
    cluster_ = new ClusterMap(store_, commands_, this);
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
    auto* legend_row = new QHBoxLayout;
    legend_row->addWidget(legend, 1);
    find_worker_ = new QLineEdit(timeline_page);
    find_worker_->setObjectName(QStringLiteral("find-worker"));
    find_worker_->setPlaceholderText(QStringLiteral("Find worker (w37)"));
    find_worker_->setToolTip(QStringLiteral("Brings the worker's lane into view, readable, and selects it"));
    find_worker_->setClearButtonEnabled(true);
    find_worker_->setMaximumWidth(
        find_worker_->fontMetrics().horizontalAdvance(QStringLiteral("Find worker (w37)")) + 40);
    connect(find_worker_, &QLineEdit::returnPressed, this, [this] {
        const QString refused = timeline_->find_worker(find_worker_->text());
        details_->setText(refused.isEmpty() ? QStringLiteral("Click an iteration for its numbers.") : refused);
    });
    legend_row->addWidget(find_worker_);
    timeline_layout->addLayout(legend_row);
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
    split_ = split;
    split->addWidget(jobs_);
    split->addWidget(charts_);
    split->addWidget(tables_);
    // A taller window gives its extra height to the charts; the tables keep their rows.
    split->setStretchFactor(0, 0);
    split->setStretchFactor(1, 1);
    split->setStretchFactor(2, 0);
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
    // The connection's state has one place, the label on the right; the left side only says
    // what to do while there is no connection, and goes when one opens.
    statusBar()->showMessage(kStartHint.arg(QStringLiteral(FULCRUM_VERSION)));
    build_menus();
    resize(1280, 800);

    client_.set_subscription(Subscribe {});
    connect(&client_, &ProtocolClient::received, this, [this](const ServerMessage& m) {
        store_.ingest(m);
        navigator_.on_message(m);
        opener_->on_message(m);
    });
    connect(&client_, &ProtocolClient::stateChanged, this, [this] {
        connection_->setText(client_.status_text());
        if (client_.state() == ProtocolClient::State::Connected
            && statusBar()->currentMessage() == kStartHint.arg(QStringLiteral(FULCRUM_VERSION)))
            statusBar()->clearMessage();
        const bool bad = client_.state() == ProtocolClient::State::Failed
            || client_.state() == ProtocolClient::State::WaitingToReconnect;
        connection_->setStyleSheet(bad ? QStringLiteral("color: #b00020") : QString());
        if (client_.state() == ProtocolClient::State::Failed)
            report(QStringLiteral("Connection"), client_.status_text());
    });
    connect(&client_, &ProtocolClient::snapshotReceived, this, [this] { announce_jobs_ = !store_.replaying(); });
    connect(&store_.jobs(), &QAbstractItemModel::rowsInserted, this,
        [this](const QModelIndex&, int first, int last) { announce_jobs(first, last); });
    connect(&client_, &ProtocolClient::sessionStarted, this, [this] {
        announce_jobs_ = false; // until this session's snapshot is in
        if (opener_->wants_runs())
            commands_.list_runs();
    });
    connect(&commands_, &Commands::sent, this,
        [this](const QString& what) { statusBar()->showMessage(QStringLiteral("sent: %1").arg(what), 5000); });
    connect(&commands_, &Commands::succeeded, this,
        [this](const QString& what) { statusBar()->showMessage(QStringLiteral("done: %1").arg(what), 5000); });
    connect(&commands_, &Commands::failed, this, [this](const QString& what, const QString& why) {
        report(QStringLiteral("Command refused"), QStringLiteral("%1: %2").arg(what, why));
        opener_->on_refused();
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
    // A console that falls behind loses rows and events (protocol.md "Backpressure"): say so,
    // rather than let gaps and missing marks pass for what happened.
    connect(&store_, &ConsoleStore::fellBehind, this, [this] {
        if (store_.dropped() == 0) { // following another server: its charts have no such gaps
            if (notice_->text().contains(QStringLiteral("fell behind")))
                notice_->hide();
            return;
        }
        show_notice(
            QStringLiteral("This console fell behind the live stream: fulcrumd dropped %1 iteration, evaluation "
                           "and event messages meant for it, so the live charts have gaps and may lack marks. "
                           "The jobs' run stores hold everything: <b>File ▸ Open a recorded run of the server</b> "
                           "(Ctrl+R) shows a run whole.")
                .arg(store_.dropped()),
            true);
    });
    connect(&navigator_, &ReplayNavigator::progressed, this, [this](double fraction, const QString& what) {
        statusBar()->showMessage(QStringLiteral("%1: %2 %").arg(what).arg(100.0 * fraction, 0, 'f', 0));
    });
    connect(&navigator_, &ReplayNavigator::arrived, this, [this] {
        navigator_.set_pause_on_arrival(false);
        statusBar()->showMessage(replay_bar_->position_text(), 10000);
        opener_->on_arrived();
    });
    connect(&commands_, &Commands::replayOpened, this, [this](std::int64_t replay) {
        store_.follow(replay);
        window_.follow();
        statusBar()->showMessage(QStringLiteral("loading the replay…"));
    });
    connect(&store_, &ConsoleStore::historyChanged, this, &MainWindow::schedule_frame);
    connect(&store_, &ConsoleStore::shownJobChanged, this, [this] {
        window_.follow_anew();
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
    connect(jobs_, &JobsView::replayRequested, this,
        [this](const QString& database, RunId run) { open_server_run(database, run); });
    connect(opener_, &ReplayOpener::status, this, [this](const QString& text) { statusBar()->showMessage(text); });
    connect(opener_, &ReplayOpener::failed, this,
        [this](const QString& why) { report(QStringLiteral("Open a recorded run"), why); });
    connect(opener_, &ReplayOpener::ready, this, [this](const QString& summary) {
        statusBar()->showMessage(summary, 10000);
        refresh_views();
        emit replayReady();
    });
    opener_->set_run_chooser([this](const QString& file, const std::vector<RunListing>& runs) -> std::optional<RunId> {
        if (!dialogs_)
            return runs.front().run;
        RunListDialog dialog(
            runs, QStringLiteral("Open run file"), QStringLiteral("%1 holds several runs:").arg(file), this);
        if (dialog.exec() != QDialog::Accepted)
            return std::nullopt;
        const std::optional<RunListing> chosen = dialog.chosen();
        return chosen ? std::optional<RunId>(chosen->run) : std::nullopt;
    });
    frame_->setSingleShot(true);
    connect(frame_, &QTimer::timeout, this, [this] { redraw(false); });
}

MainWindow::~MainWindow()
{
    if (!remember_layout_ || !laid_out_)
        return;
    QSettings settings;
    settings.setValue(QStringLiteral("layout/splitter"), split_->saveState());
    settings.setValue(QStringLiteral("layout/workers_columns"), workers_->table()->horizontalHeader()->saveState());
}

void MainWindow::set_remember_layout(bool on)
{
    remember_layout_ = on;
}

void MainWindow::showEvent(QShowEvent* event)
{
    QMainWindow::showEvent(event);
    if (!laid_out_)
        lay_out_first();
}

void MainWindow::announce_jobs(int first, int last)
{
    if (!announce_jobs_ || store_.replaying())
        return;
    const std::vector<protocol::JobStatus>& jobs = store_.jobs().statuses();
    for (int row = first; row <= last && row < static_cast<int>(jobs.size()); ++row) {
        const protocol::JobStatus& s = jobs[static_cast<std::size_t>(row)];
        store_.jobs().mark_new(s.job);
        statusBar()->showMessage(
            QStringLiteral("new job %1: %2 (%3)")
                .arg(s.job)
                .arg(QString::fromStdString(s.name), QString::fromStdString(std::string(protocol::to_string(s.state)))),
            15000);
    }
    QTableView* table = jobs_->table();
    table->scrollTo(store_.jobs().index(last, 0));
    // The jobs pane grows to show up to six jobs, from the charts' room; it never shrinks.
    const int rows = std::min(store_.jobs().rowCount(), 6);
    const int wanted = table->horizontalHeader()->sizeHint().height()
        + table->verticalHeader()->defaultSectionSize() * rows + 2 * table->frameWidth() + 4;
    QList<int> sizes = split_->sizes();
    if (sizes.size() == 3 && sizes[0] < wanted) {
        const int take = std::min(wanted - sizes[0], std::max(0, sizes[1] - 120));
        sizes[0] += take;
        sizes[1] -= take;
        split_->setSizes(sizes);
    }
}

void MainWindow::lay_out_first()
{
    laid_out_ = true;
    if (remember_layout_) {
        QSettings settings;
        const QByteArray columns = settings.value(QStringLiteral("layout/workers_columns")).toByteArray();
        if (!columns.isEmpty())
            workers_->table()->horizontalHeader()->restoreState(columns);
        const QByteArray sizes = settings.value(QStringLiteral("layout/splitter")).toByteArray();
        if (!sizes.isEmpty() && split_->restoreState(sizes))
            return;
    }
    // Heights in rows of the tables' own font: two jobs, eight workers and a half (the half
    // says that there are more below), the charts the rest.
    QTableView* workers = workers_->table();
    const int row = workers->verticalHeader()->defaultSectionSize();
    const int header = workers->horizontalHeader()->sizeHint().height();
    const int frame = 2 * workers->frameWidth() + 4;
    // What the workers tab holds besides the table's rows: its buttons, the header, and a
    // horizontal scroll bar when the columns are wider than the window.
    const int around = std::max(0, workers_->sizeHint().height() - workers->sizeHint().height())
        + workers->horizontalScrollBar()->sizeHint().height();
    const int tables = tables_->tabBar()->sizeHint().height() + header + row * 17 / 2 + frame + around + 8;
    const int jobs = header + jobs_->table()->verticalHeader()->defaultSectionSize() * 2 + frame;
    const int total = split_->height() - 2 * split_->handleWidth();
    split_->setSizes({ jobs, std::max(120, total - jobs - tables), tables });
}

void MainWindow::build_menus()
{
    QMenu* file = menuBar()->addMenu(QStringLiteral("&File"));
    file->addAction(QStringLiteral("&Connect to fulcrumd…"), QKeySequence(QStringLiteral("Ctrl+K")), this, [this] {
        // The server in use, not the newest remembered one.
        ConnectDialog dialog(
            this, client_.address().url.isEmpty() ? std::nullopt : std::optional<ServerAddress>(client_.address()));
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
    QAction* live = file->addAction(
        QStringLiteral("Back to &live"), QKeySequence(QStringLiteral("Ctrl+L")), this, &MainWindow::back_to_live);
    live->setEnabled(store_.replaying()); // live already: nothing to go back to
    connect(&store_, &ConsoleStore::replayStateChanged, live, [this, live] { live->setEnabled(store_.replaying()); });
    file->addSeparator();
    file->addAction(QStringLiteral("Export chart as &PNG…"), QKeySequence(QStringLiteral("Ctrl+Shift+P")), this,
        &MainWindow::export_png);
    file->addAction(QStringLiteral("Export data as &CSV…"), QKeySequence(QStringLiteral("Ctrl+Shift+C")), this,
        &MainWindow::export_csv);
    file->addSeparator();
    file->addAction(QStringLiteral("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* jobs = menuBar()->addMenu(QStringLiteral("&Jobs"));
    jobs->addActions(jobs_->job_actions());
    jobs->addSeparator();
    jobs->addActions(cluster_->policy_actions());
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
    opener_->connecting_to(address);
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
    if (const std::optional<double> loaded = opener_->loading_fraction())
        statusBar()->showMessage(QStringLiteral("loading the replay: %1 %").arg(100.0 * *loaded, 0, 'f', 0));
}

bool MainWindow::show_view(const QString& name)
{
    const auto index = kViewNames.indexOf(name);
    if (index < 0)
        return false;
    charts_->setCurrentIndex(static_cast<int>(index));
    return true;
}

void MainWindow::on_runs(const std::vector<RunListing>& runs)
{
    if (opener_->wants_runs())
        return opener_->on_runs(runs);
    if (!dialogs_)
        return;
    // The operator asked for the server's recorded runs: let them pick one.
    RunListDialog dialog(runs, QStringLiteral("Recorded runs on the server"), {}, this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    if (const std::optional<RunListing> r = dialog.chosen())
        open_server_run(text(r->database), r->run);
}

void MainWindow::open_server_run_dialog()
{
    commands_.list_runs();
}

void MainWindow::open_server_run(const QString& database, RunId run, std::optional<std::int64_t> at)
{
    opener_->open_server_run(database, run, at);
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
    opener_->open_run_file(path, at);
}

void MainWindow::back_to_live()
{
    opener_->back_to_live();
}

void MainWindow::set_daemon_path(QString path)
{
    opener_->set_daemon_path(std::move(path));
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
