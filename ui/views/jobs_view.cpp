#include "ui/views/jobs_view.h"

#include "ui/client/commands.h"
#include "ui/console_store.h"
#include "ui/views/job_dialogs.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QHeaderView>
#include <QMessageBox>
#include <QPainter>
#include <QSignalBlocker>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QToolBar>
#include <QVBoxLayout>
#include <set>
#include <string>

namespace fulcrum::ui {

namespace {

// The Progress column as a bar with the "42 / 400" text on it.
class ProgressDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override
    {
        QStyleOptionProgressBar bar;
        bar.rect = option.rect.adjusted(2, 3, -2, -3);
        bar.minimum = 0;
        bar.maximum = 1000;
        bar.progress = static_cast<int>(index.data(JobsModel::kFractionRole).toDouble() * 1000);
        bar.text = index.data().toString();
        bar.textVisible = true;
        bar.state = option.state | QStyle::State_Horizontal;
        QApplication::style()->drawControl(QStyle::CE_ProgressBar, &bar, painter);
    }
};

} // namespace

JobsView::JobsView(ConsoleStore& store, Commands& commands, QWidget* parent)
    : QWidget(parent)
    , store_(store)
    , commands_(commands)
    , table_(new QTableView(this))
{
    table_->setModel(&store_.jobs());
    table_->setItemDelegateForColumn(JobsModel::Progress, new ProgressDelegate(table_));
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->verticalHeader()->hide();
    // One line a job, rows as tall as the text: the charts below keep the height.
    table_->setWordWrap(false);
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 8);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->horizontalHeader()->setSectionResizeMode(JobsModel::Progress, QHeaderView::Fixed);
    table_->setColumnWidth(JobsModel::Progress, 140);
    // Narrow columns for short values, so that every column fits 1280 px without scrolling.
    for (const int narrow : { JobsModel::Job, JobsModel::Workers, JobsModel::SyncModel })
        table_->setColumnWidth(narrow, 64);
    // The tenant column and filter once the jobs shown are of two tenants or more (an admin's
    // view): a tenant's own console, and a cluster of one tenant, keep the width for the rest.
    tenant_filter_ = new QComboBox(this);
    tenant_filter_->setToolTip(QStringLiteral("Show the jobs of one tenant only"));
    tenant_filter_->addItem(QStringLiteral("All tenants"));
    connect(&store_.jobs(), &QAbstractItemModel::rowsInserted, this, &JobsView::follow_tenants);
    connect(&store_.jobs(), &QAbstractItemModel::modelReset, this, &JobsView::follow_tenants);
    connect(tenant_filter_, &QComboBox::currentIndexChanged, this, &JobsView::follow_tenants);
    table_->setContextMenuPolicy(Qt::ActionsContextMenu);

    submit_file_ = new QAction(QStringLiteral("Submit scenario file…"), this);
    submit_form_ = new QAction(QStringLiteral("Submit job…"), this);
    cancel_ = new QAction(QStringLiteral("Cancel job"), this);
    pause_ = new QAction(QStringLiteral("Pause job"), this);
    resume_ = new QAction(QStringLiteral("Resume job"), this);
    change_policy_ = new QAction(QStringLiteral("Change policy…"), this);
    freeze_ = new QAction(QStringLiteral("Freeze size"), this);
    freeze_->setCheckable(true);
    freeze_->setToolTip(
        QStringLiteral("While frozen, the elastic scheduler (fulcrumd --elastic eps) neither grows this "
                       "elastic job nor takes its workers for newcomers; resizes from here still apply"));
    replay_ = new QAction(QStringLiteral("Replay job"), this);
    replay_->setToolTip(QStringLiteral("Replay the selected job's recorded run from its start"));
    submit_form_->setShortcut(QKeySequence(QStringLiteral("Ctrl+N")));
    connect(submit_file_, &QAction::triggered, this, &JobsView::submit_from_file);
    connect(submit_form_, &QAction::triggered, this, &JobsView::submit_from_form);
    connect(cancel_, &QAction::triggered, this, [this] {
        const auto job = selected_job();
        if (job
            && QMessageBox::question(
                   this, QStringLiteral("Cancel job"), QStringLiteral("Cancel job %1 at its next barrier?").arg(*job))
                == QMessageBox::Yes)
            commands_.job_action(*job, protocol::JobAction::Cancel);
    });
    connect(pause_, &QAction::triggered, this, [this] {
        if (const auto job = selected_job())
            commands_.job_action(*job, protocol::JobAction::Pause);
    });
    connect(resume_, &QAction::triggered, this, [this] {
        if (const auto job = selected_job())
            commands_.job_action(*job, protocol::JobAction::Resume);
    });
    connect(freeze_, &QAction::triggered, this, [this](bool checked) {
        if (const auto job = selected_job())
            commands_.job_action(*job, checked ? protocol::JobAction::Freeze : protocol::JobAction::Unfreeze);
    });
    connect(change_policy_, &QAction::triggered, this, &JobsView::change_policy);
    connect(replay_, &QAction::triggered, this, [this] {
        const auto job = selected_job();
        if (const protocol::JobStatus* s = job ? store_.jobs().job(*job) : nullptr; s && !s->database.empty())
            emit replayRequested(QString::fromStdString(s->database), s->run);
    });
    for (QAction* a : { cancel_, pause_, resume_, freeze_, change_policy_, replay_ })
        table_->addAction(a);

    auto* tools = new QToolBar(this);
    tools->setToolButtonStyle(Qt::ToolButtonTextOnly);
    tools->addActions({ submit_form_, submit_file_ });
    tools->addSeparator();
    tools->addActions({ pause_, resume_, cancel_, freeze_, change_policy_ });
    tools->addSeparator();
    tools->addAction(replay_);
    tools->addSeparator();
    tenant_action_ = tools->addWidget(tenant_filter_);
    follow_tenants();
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(tools);
    layout->addWidget(table_);

    connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        if (const auto job = selected_job())
            store_.show_job(*job);
        update_actions();
    });
    connect(&store_.jobs(), &QAbstractItemModel::dataChanged, this, &JobsView::update_actions);
    connect(&store_.jobs(), &QAbstractItemModel::modelReset, this, &JobsView::update_actions);
    connect(&store_, &ConsoleStore::capabilitiesChanged, this, &JobsView::update_actions);
    update_actions();
}

void JobsView::follow_tenants()
{
    std::set<std::string> tenants;
    for (const protocol::JobStatus& s : store_.jobs().statuses())
        tenants.insert(s.tenant);
    const bool several = tenants.size() >= 2;
    table_->setColumnHidden(JobsModel::Tenant, !several);
    tenant_action_->setVisible(several);
    const QString chosen = tenant_filter_->currentIndex() > 0 ? tenant_filter_->currentText() : QString();
    {
        const QSignalBlocker quiet(tenant_filter_); // refilled: the choice stays
        tenant_filter_->clear();
        tenant_filter_->addItem(QStringLiteral("All tenants"));
        for (const std::string& t : tenants)
            tenant_filter_->addItem(QString::fromStdString(t));
        const int at = chosen.isEmpty() ? 0 : tenant_filter_->findText(chosen);
        tenant_filter_->setCurrentIndex(std::max(0, at));
    }
    const std::string only = tenant_filter_->currentIndex() > 0 ? tenant_filter_->currentText().toStdString() : "";
    const std::vector<protocol::JobStatus>& statuses = store_.jobs().statuses();
    for (int row = 0; row < static_cast<int>(statuses.size()); ++row)
        table_->setRowHidden(row, !only.empty() && statuses[static_cast<std::size_t>(row)].tenant != only);
}

bool JobsView::tenant_filter_shown() const
{
    return tenant_action_->isVisible();
}

void JobsView::show_tenant(const QString& tenant)
{
    tenant_filter_->setCurrentIndex(std::max(0, tenant_filter_->findText(tenant)));
}

std::optional<JobId> JobsView::selected_job() const
{
    const QModelIndexList rows = table_->selectionModel()->selectedRows(JobsModel::Job);
    if (rows.isEmpty())
        return store_.shown_job();
    return static_cast<JobId>(rows.front().data().toInt());
}

QList<QAction*> JobsView::job_actions() const
{
    return { submit_form_, submit_file_, pause_, resume_, cancel_, freeze_, change_policy_, replay_ };
}

void JobsView::update_actions()
{
    const bool live = !store_.replaying();
    const auto job = selected_job();
    const protocol::JobStatus* status = job ? store_.jobs().job(*job) : nullptr;
    const bool active = status
        && (status->state == protocol::JobState::Running || status->state == protocol::JobState::Paused
            || status->state == protocol::JobState::Queued || status->state == protocol::JobState::Interrupted);
    submit_file_->setEnabled(live);
    // The form offers the server's models and policies: it waits for list-capabilities.
    submit_form_->setEnabled(live && store_.capabilities());
    cancel_->setEnabled(live && active);
    pause_->setEnabled(live && status && status->state == protocol::JobState::Running);
    resume_->setEnabled(live && status
        && (status->state == protocol::JobState::Paused || status->state == protocol::JobState::Interrupted));
    freeze_->setEnabled(live && active && status->elastic.has_value());
    freeze_->setChecked(status && status->elastic && status->elastic->frozen);
    change_policy_->setEnabled(live && status && store_.capabilities()
        && (status->state == protocol::JobState::Running || status->state == protocol::JobState::Paused));
    // A job that ended stays in fulcrumd's table: its run is one click from a replay.
    replay_->setEnabled(live && status && !status->database.empty()
        && (status->state == protocol::JobState::Finished || status->state == protocol::JobState::Stopped
            || status->state == protocol::JobState::Failed));
}

void JobsView::submit_from_file()
{
    const QString file = QFileDialog::getOpenFileName(
        this, QStringLiteral("Submit a scenario"), {}, QStringLiteral("Scenarios (*.json);;All files (*)"));
    if (file.isEmpty())
        return;
    QFile in(file);
    if (!in.open(QIODevice::ReadOnly)) {
        QMessageBox::warning(this, QStringLiteral("Submit a scenario"),
            QStringLiteral("%1 cannot be read: %2").arg(file, in.errorString()));
        return;
    }
    commands_.submit(QString::fromUtf8(in.readAll()), file);
}

void JobsView::submit_from_form()
{
    const protocol::Capabilities* offered = store_.capabilities();
    if (!offered)
        return; // the action waits for the server's list
    SubmitJobDialog dialog(*offered, this);
    if (dialog.exec() == QDialog::Accepted)
        commands_.submit(dialog.scenario_json(), QStringLiteral("the submit form"));
}

void JobsView::change_policy()
{
    const auto job = selected_job();
    const protocol::Capabilities* offered = store_.capabilities();
    if (!job || !offered)
        return;
    ChangePolicyDialog dialog(*job, store_.jobs().job(*job), *offered, this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    commands_.change(*job, protocol::JobSetting::Policy, dialog.policy_json());
    if (const auto sync = dialog.sync_json())
        commands_.change(*job, protocol::JobSetting::SyncModel, *sync);
}

} // namespace fulcrum::ui
