#include "ui/views/jobs_view.h"

#include "ui/client/commands.h"
#include "ui/console_store.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFile>
#include <QFileDialog>
#include <QFormLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QMessageBox>
#include <QPainter>
#include <QPlainTextEdit>
#include <QSpinBox>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QToolBar>
#include <QVBoxLayout>

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

const char* kPolicies[] = { "uniform", "lbbsp-cpu", "lbbsp-gpu" };

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
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->horizontalHeader()->setSectionResizeMode(JobsModel::Progress, QHeaderView::Fixed);
    table_->setColumnWidth(JobsModel::Progress, 140);
    table_->setContextMenuPolicy(Qt::ActionsContextMenu);

    submit_file_ = new QAction(QStringLiteral("Submit scenario file…"), this);
    submit_form_ = new QAction(QStringLiteral("Submit job…"), this);
    cancel_ = new QAction(QStringLiteral("Cancel job"), this);
    pause_ = new QAction(QStringLiteral("Pause job"), this);
    resume_ = new QAction(QStringLiteral("Resume job"), this);
    change_policy_ = new QAction(QStringLiteral("Change policy…"), this);
    submit_form_->setShortcut(QKeySequence(QStringLiteral("Ctrl+N")));
    connect(submit_file_, &QAction::triggered, this, &JobsView::submit_from_file);
    connect(submit_form_, &QAction::triggered, this, &JobsView::submit_from_form);
    connect(cancel_, &QAction::triggered, this, [this] {
        const auto job = selected_job();
        if (job && QMessageBox::question(this, QStringLiteral("Cancel job"), QStringLiteral("Cancel job %1 at its next barrier?").arg(*job)) == QMessageBox::Yes)
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
    connect(change_policy_, &QAction::triggered, this, &JobsView::change_policy);
    for (QAction* a : { cancel_, pause_, resume_, change_policy_ })
        table_->addAction(a);

    auto* tools = new QToolBar(this);
    tools->setToolButtonStyle(Qt::ToolButtonTextOnly);
    tools->addActions({ submit_form_, submit_file_ });
    tools->addSeparator();
    tools->addActions({ pause_, resume_, cancel_, change_policy_ });
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
    update_actions();
}

std::optional<JobId> JobsView::selected_job() const
{
    const QModelIndexList rows = table_->selectionModel()->selectedRows(JobsModel::Job);
    if (rows.isEmpty())
        return store_.shown_job();
    return static_cast<JobId>(rows.front().data().toInt());
}

QList<QAction*> JobsView::job_actions() const { return { submit_form_, submit_file_, pause_, resume_, cancel_, change_policy_ }; }

void JobsView::update_actions()
{
    const bool live = !store_.replaying();
    const auto job = selected_job();
    const protocol::JobStatus* status = job ? store_.jobs().job(*job) : nullptr;
    const bool active = status && (status->state == protocol::JobState::Running || status->state == protocol::JobState::Paused || status->state == protocol::JobState::Queued);
    submit_file_->setEnabled(live);
    submit_form_->setEnabled(live);
    cancel_->setEnabled(live && active);
    pause_->setEnabled(live && status && status->state == protocol::JobState::Running);
    resume_->setEnabled(live && status && status->state == protocol::JobState::Paused);
    change_policy_->setEnabled(live && status && (status->state == protocol::JobState::Running || status->state == protocol::JobState::Paused));
}

void JobsView::submit_from_file()
{
    const QString file = QFileDialog::getOpenFileName(this, QStringLiteral("Submit a scenario"), {}, QStringLiteral("Scenarios (*.json);;All files (*)"));
    if (file.isEmpty())
        return;
    QFile in(file);
    if (!in.open(QIODevice::ReadOnly)) {
        QMessageBox::warning(this, QStringLiteral("Submit a scenario"), QStringLiteral("%1 cannot be read: %2").arg(file, in.errorString()));
        return;
    }
    commands_.submit(QString::fromUtf8(in.readAll()), file);
}

void JobsView::submit_from_form()
{
    QDialog dialog(this);
    dialog.setWindowTitle(QStringLiteral("Submit a job"));
    auto* name = new QLineEdit(QStringLiteral("console-job"), &dialog);
    auto* model = new QComboBox(&dialog);
    model->addItems({ QStringLiteral("mlp"), QStringLiteral("softmax"), QStringLiteral("svm") });
    auto* policy = new QComboBox(&dialog);
    for (const char* p : kPolicies)
        policy->addItem(QString::fromLatin1(p));
    policy->setCurrentIndex(1);
    auto* mode = new QComboBox(&dialog);
    mode->addItems({ QStringLiteral("paced"), QStringLiteral("virtual") });
    auto* workers = new QSpinBox(&dialog);
    workers->setRange(1, 256);
    workers->setValue(4);
    auto* slow = new QSpinBox(&dialog);
    slow->setRange(0, 256);
    slow->setValue(1);
    slow->setToolTip(QStringLiteral("how many of the workers run at a third of the others' speed"));
    auto* iterations = new QSpinBox(&dialog);
    iterations->setRange(1, 10000000);
    iterations->setValue(500);
    auto* batch = new QSpinBox(&dialog);
    batch->setRange(1, 1000000);
    batch->setValue(256);
    auto* form = new QFormLayout;
    form->addRow(QStringLiteral("Name:"), name);
    form->addRow(QStringLiteral("Model:"), model);
    form->addRow(QStringLiteral("Batch-size policy:"), policy);
    form->addRow(QStringLiteral("Mode:"), mode);
    form->addRow(QStringLiteral("Workers:"), workers);
    form->addRow(QStringLiteral("Of which slow:"), slow);
    form->addRow(QStringLiteral("Total batch:"), batch);
    form->addRow(QStringLiteral("Iterations:"), iterations);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    auto* layout = new QVBoxLayout(&dialog);
    layout->addLayout(form);
    layout->addWidget(buttons);
    if (dialog.exec() != QDialog::Accepted)
        return;

    // The scenario format of docs/scenarios.md; the daemon checks it and names a bad field.
    const int slow_count = std::min(slow->value(), workers->value());
    QJsonArray worker_list;
    if (workers->value() - slow_count > 0)
        worker_list.append(QJsonObject { { QStringLiteral("speed"), 3000 }, { QStringLiteral("count"), workers->value() - slow_count } });
    if (slow_count > 0)
        worker_list.append(QJsonObject { { QStringLiteral("speed"), 1000 }, { QStringLiteral("count"), slow_count } });
    QJsonObject model_spec { { QStringLiteral("type"), model->currentText() } };
    if (model->currentText() == QStringLiteral("mlp"))
        model_spec.insert(QStringLiteral("hidden"), QJsonArray { 64 });
    const QJsonObject scenario {
        { QStringLiteral("name"), name->text() },
        { QStringLiteral("mode"), mode->currentText() },
        { QStringLiteral("model"), model_spec },
        { QStringLiteral("training"), QJsonObject { { QStringLiteral("total_batch"), batch->value() }, { QStringLiteral("iterations"), iterations->value() } } },
        { QStringLiteral("policy"), QJsonObject { { QStringLiteral("type"), policy->currentText() } } },
        { QStringLiteral("workers"), worker_list },
    };
    commands_.submit(QString::fromUtf8(QJsonDocument(scenario).toJson(QJsonDocument::Compact)), QStringLiteral("the submit form"));
}

void JobsView::change_policy()
{
    const auto job = selected_job();
    if (!job)
        return;
    const protocol::JobStatus* status = store_.jobs().job(*job);
    QDialog dialog(this);
    dialog.setWindowTitle(QStringLiteral("Change the policy of job %1").arg(*job));
    auto* policy = new QComboBox(&dialog);
    for (const char* p : kPolicies)
        policy->addItem(QString::fromLatin1(p));
    if (status)
        policy->setCurrentText(QString::fromStdString(status->policy).section(QLatin1Char('('), 0, 0));
    auto* sync = new QComboBox(&dialog);
    sync->addItems({ QStringLiteral("(unchanged)"), QStringLiteral("bsp"), QStringLiteral("backup") });
    auto* backups = new QSpinBox(&dialog);
    backups->setRange(1, std::max(1, status ? status->workers - 1 : 1));
    auto* form = new QFormLayout;
    form->addRow(QStringLiteral("Batch-size policy:"), policy);
    form->addRow(QStringLiteral("Sync model:"), sync);
    form->addRow(QStringLiteral("Backup workers (k):"), backups);
    auto* note = new QPlainTextEdit(&dialog);
    note->setReadOnly(true);
    note->setMaximumHeight(60);
    note->setPlainText(QStringLiteral("Takes effect at the job's next barrier. Pins and exclusions stay."));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    auto* layout = new QVBoxLayout(&dialog);
    layout->addLayout(form);
    layout->addWidget(note);
    layout->addWidget(buttons);
    if (dialog.exec() != QDialog::Accepted)
        return;
    const QJsonObject policy_spec { { QStringLiteral("type"), policy->currentText() } };
    commands_.change(*job, protocol::JobSetting::Policy, QString::fromUtf8(QJsonDocument(policy_spec).toJson(QJsonDocument::Compact)));
    if (sync->currentIndex() > 0) {
        QJsonObject sync_spec { { QStringLiteral("type"), sync->currentText() } };
        if (sync->currentText() == QStringLiteral("backup"))
            sync_spec.insert(QStringLiteral("backups"), backups->value());
        commands_.change(*job, protocol::JobSetting::SyncModel, QString::fromUtf8(QJsonDocument(sync_spec).toJson(QJsonDocument::Compact)));
    }
}

} // namespace fulcrum::ui
