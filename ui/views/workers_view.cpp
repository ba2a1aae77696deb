#include "ui/views/workers_view.h"

#include "ui/client/commands.h"
#include "ui/console_store.h"
#include "ui/models/jobs_model.h"
#include "ui/models/workers_model.h"
#include "ui/views/dialog_buttons.h"

#include <QAction>
#include <QCheckBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTableView>
#include <QToolBar>
#include <QVBoxLayout>
#include <cmath>

namespace fulcrum::ui {

namespace {

// The workers whose id ("12" or "w12"), name, device or state holds the filter's text
// ("excluded", "stalled", "cuda:1"), in the order of the column sorted on.
class WorkerFilter final : public QSortFilterProxyModel {
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;

    void set_text(const QString& text)
    {
        text_ = text.trimmed();
        invalidateFilter();
    }

protected:
    bool filterAcceptsRow(int row, const QModelIndex& parent) const override
    {
        if (text_.isEmpty())
            return true;
        const QAbstractItemModel& m = *sourceModel();
        const QString id = m.index(row, WorkersModel::Worker, parent).data().toString();
        if (text_ == id || text_.compare(QStringLiteral("w") + id, Qt::CaseInsensitive) == 0)
            return true;
        for (const int column : { WorkersModel::Name, WorkersModel::Device, WorkersModel::State })
            if (m.index(row, column, parent).data().toString().contains(text_, Qt::CaseInsensitive))
                return true;
        return false;
    }

private:
    QString text_;
};

} // namespace

PinDialog::PinDialog(WorkerId worker, std::int32_t current, std::optional<std::int32_t> suggested, QWidget* parent)
    : QDialog(parent)
    , size_(new QSpinBox(this))
    , current_(new QLabel(this))
    , suggested_(new QLabel(this))
{
    setWindowTitle(QStringLiteral("Pin worker %1").arg(worker));
    size_->setRange(1, 1 << 24);
    size_->setValue(suggested.value_or(std::max(current, 1)));
    set_current(current, suggested);
    auto* form = new QFormLayout;
    form->addRow(QStringLiteral("Current batch size:"), current_);
    form->addRow(QStringLiteral("Suggested:"), suggested_);
    form->addRow(QStringLiteral("&Pin at:"), size_);
    auto* note = new QLabel(
        QStringLiteral("The batch-size policy leaves a pinned worker alone and spreads the rest of the total batch "
                       "over the others, from the next barrier on."),
        this);
    note->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(note);
    layout->addWidget(ok_cancel_buttons(this));
}

std::int32_t PinDialog::batch_size() const
{
    return size_->value();
}
void PinDialog::set_batch_size(std::int32_t size)
{
    size_->setValue(size);
}

QString PinDialog::current_text() const
{
    return current_->text();
}

void PinDialog::set_current(std::int32_t current, std::optional<std::int32_t> suggested)
{
    current_->setText(QString::number(current));
    suggested_->setText(suggested ? QStringLiteral("%1 (equal batch time at the latest speeds)").arg(*suggested)
                                  : QStringLiteral("no speeds measured yet"));
}

ExcludeDialog::ExcludeDialog(WorkerId worker, QWidget* parent)
    : QDialog(parent)
    , limited_(new QCheckBox(QStringLiteral("Re-include after"), this))
    , seconds_(new QDoubleSpinBox(this))
{
    setWindowTitle(QStringLiteral("Exclude worker %1").arg(worker));
    seconds_->setRange(0.1, 1e7);
    seconds_->setValue(60);
    seconds_->setSuffix(QStringLiteral(" s of run time"));
    seconds_->setEnabled(false);
    connect(limited_, &QCheckBox::toggled, seconds_, &QWidget::setEnabled);
    auto* row = new QHBoxLayout;
    row->addWidget(limited_);
    row->addWidget(seconds_, 1);
    auto* note = new QLabel(
        QStringLiteral("The job's barriers stop waiting for this worker from the next one on; its share of the "
                       "total batch goes to the others."),
        this);
    note->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(row);
    layout->addWidget(note);
    layout->addWidget(ok_cancel_buttons(this));
}

std::optional<double> ExcludeDialog::for_s() const
{
    return limited_->isChecked() ? std::optional(seconds_->value()) : std::nullopt;
}

void ExcludeDialog::set_for_s(std::optional<double> seconds)
{
    limited_->setChecked(seconds.has_value());
    if (seconds)
        seconds_->setValue(*seconds);
}

WorkersView::WorkersView(ConsoleStore& store, Commands& commands, QWidget* parent)
    : QWidget(parent)
    , store_(store)
    , commands_(commands)
    , sorted_(new WorkerFilter(this))
    , filter_(new QLineEdit(this))
    , table_(new QTableView(this))
{
    sorted_->setSourceModel(&store_.workers());
    sorted_->setSortRole(WorkersModel::kSortRole);
    sorted_->setDynamicSortFilter(true);
    table_->setModel(sorted_);
    table_->setSortingEnabled(true);
    table_->sortByColumn(WorkersModel::Worker, Qt::AscendingOrder);
    filter_->setPlaceholderText(QStringLiteral("Filter: worker id, name, device or state (excluded, stalled…)"));
    filter_->setClearButtonEnabled(true);
    connect(filter_, &QLineEdit::textChanged, this,
        [this](const QString& text) { static_cast<WorkerFilter*>(sorted_)->set_text(text); });
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->verticalHeader()->hide();
    // One line a worker, rows as tall as the text: eight workers fit under the charts.
    table_->setWordWrap(false);
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 8);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->horizontalHeader()->resizeSection(
        WorkersModel::Wait, table_->fontMetrics().horizontalAdvance(QStringLiteral("0000.0 ms · 100 %")) + 16);
    table_->setContextMenuPolicy(Qt::ActionsContextMenu);

    pin_ = new QAction(QStringLiteral("Pin batch size…"), this);
    unpin_ = new QAction(QStringLiteral("Unpin"), this);
    exclude_ = new QAction(QStringLiteral("Exclude…"), this);
    include_ = new QAction(QStringLiteral("Re-include"), this);
    pin_->setShortcut(QKeySequence(Qt::Key_P));
    unpin_->setShortcut(QKeySequence(Qt::Key_U));
    exclude_->setShortcut(QKeySequence(Qt::Key_E));
    include_->setShortcut(QKeySequence(Qt::Key_I));
    add_to_job_ = new QAction(QStringLiteral("Add to job"), this);
    remove_from_job_ = new QAction(QStringLiteral("Remove from job"), this);
    add_to_job_->setToolTip(QStringLiteral("Elastic PS: this free worker slot joins the job between two iterations "
                                           "and takes its share of the training data"));
    remove_from_job_->setToolTip(QStringLiteral("Elastic PS: this worker leaves the job between two iterations; "
                                                "its data goes to the others"));
    connect(add_to_job_, &QAction::triggered, this, &WorkersView::add_selected_to_job);
    connect(remove_from_job_, &QAction::triggered, this, &WorkersView::remove_selected_from_job);
    connect(pin_, &QAction::triggered, this, &WorkersView::pin_selected);
    connect(unpin_, &QAction::triggered, this, &WorkersView::unpin_selected);
    connect(exclude_, &QAction::triggered, this, &WorkersView::exclude_selected);
    connect(include_, &QAction::triggered, this, &WorkersView::include_selected);
    for (QAction* a : { pin_, unpin_, exclude_, include_ }) {
        a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        table_->addAction(a);
    }
    table_->addAction(add_to_job_);
    table_->addAction(remove_from_job_);
    stragglers_first_ = new QAction(QStringLiteral("Stragglers first"), this);
    stragglers_first_->setToolTip(QStringLiteral("Sort by batch time, the longest first: the worker the others wait "
                                                 "for at the barrier leads (a header click sorts by any column)"));
    connect(stragglers_first_, &QAction::triggered, this, &WorkersView::stragglers_first);
    auto* tools = new QToolBar(this);
    tools->setToolButtonStyle(Qt::ToolButtonTextOnly);
    tools->addActions({ pin_, unpin_, exclude_, include_ });
    tools->addSeparator();
    tools->addActions({ add_to_job_, remove_from_job_ });
    tools->addSeparator();
    tools->addAction(stragglers_first_);
    tools->addWidget(filter_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(tools);
    layout->addWidget(table_);

    connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &WorkersView::update_actions);
    connect(&store_.workers(), &QAbstractItemModel::dataChanged, this, &WorkersView::update_actions);
    connect(&store_.workers(), &QAbstractItemModel::modelReset, this, &WorkersView::update_actions);
    connect(&store_.workers(), &QAbstractItemModel::rowsInserted, this, &WorkersView::update_actions);
    connect(&store_.jobs(), &QAbstractItemModel::dataChanged, this, &WorkersView::update_actions); // elastic bounds
    connect(&store_.workers(), &QAbstractItemModel::modelReset, this, &WorkersView::update_gpu_columns);
    connect(&store_.workers(), &QAbstractItemModel::rowsInserted, this, &WorkersView::update_gpu_columns);
    connect(&store_.workers(), &QAbstractItemModel::dataChanged, this, &WorkersView::update_gpu_columns);
    update_actions();
    update_gpu_columns();
}

void WorkersView::update_gpu_columns()
{
    const bool shown = store_.workers().has_gpu_workers();
    for (const int column : { WorkersModel::Device, WorkersModel::GpuMemory, WorkersModel::GpuUtilization })
        table_->setColumnHidden(column, !shown);
}

QList<QAction*> WorkersView::worker_actions() const
{
    return { pin_, unpin_, exclude_, include_, add_to_job_, remove_from_job_ };
}

std::optional<WorkerId> WorkersView::selected_worker() const
{
    const QModelIndexList rows = table_->selectionModel()->selectedRows(WorkersModel::Worker);
    if (rows.isEmpty())
        return std::nullopt;
    return static_cast<WorkerId>(rows.front().data().toInt());
}

void WorkersView::select_worker(WorkerId worker)
{
    const QAbstractItemModel& workers = store_.workers();
    for (int row = 0; row < workers.rowCount(); ++row) {
        const QModelIndex index = workers.index(row, WorkersModel::Worker);
        if (index.data().toInt() != worker)
            continue;
        if (!sorted_->mapFromSource(index).isValid())
            filter_->clear();
        const QModelIndex shown = sorted_->mapFromSource(index);
        table_->selectionModel()->select(shown, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        table_->scrollTo(shown);
        return;
    }
}

void WorkersView::update_actions()
{
    const auto job = store_.shown_job();
    const auto worker = selected_worker();
    const protocol::WorkerState* state = job && worker ? store_.workers().state(*worker) : nullptr;
    const bool live = !store_.replaying() && state;
    pin_->setEnabled(live);
    unpin_->setEnabled(live && state->pinned);
    exclude_->setEnabled(live && !state->excluded);
    include_->setEnabled(live && state->excluded);
    // Elastic jobs only, and within their bounds (fulcrumd checks them again).
    const protocol::JobStatus* status = job ? store_.jobs().job(*job) : nullptr;
    const bool elastic = live && status && status->elastic;
    int members = 0;
    for (int row = 0; row < store_.workers().rowCount(); ++row)
        if (const protocol::WorkerState* s = store_.workers().state(row); s && s->member)
            ++members;
    add_to_job_->setVisible(status && status->elastic);
    remove_from_job_->setVisible(status && status->elastic);
    add_to_job_->setEnabled(elastic && !state->member && members < status->elastic->max_workers);
    remove_from_job_->setEnabled(elastic && state->member && members > status->elastic->min_workers);
}

void WorkersView::stragglers_first()
{
    table_->sortByColumn(WorkersModel::BatchTime, Qt::DescendingOrder);
    table_->scrollToTop();
}

void WorkersView::add_selected_to_job()
{
    const auto job = store_.shown_job();
    if (const auto worker = selected_worker(); job && worker)
        commands_.resize(*job, ResizeAction::AddWorker, *worker);
}

void WorkersView::remove_selected_from_job()
{
    const auto job = store_.shown_job();
    if (const auto worker = selected_worker(); job && worker)
        commands_.resize(*job, ResizeAction::RemoveWorker, *worker);
}

std::optional<std::int32_t> WorkersView::suggested_size(WorkerId worker) const
{
    const WorkersModel& workers = store_.workers();
    double total_batch = 0, total_speed = 0, own_speed = 0;
    for (int row = 0; row < workers.rowCount(); ++row) {
        const protocol::WorkerState* state = workers.state(row);
        const IterationRecord* last = workers.last_row(row);
        if (!state || !state->member || state->excluded)
            continue;
        if (!last || last->batch_size <= 0)
            continue;
        if (!(last->speed > 0))
            return std::nullopt;
        total_batch += last->batch_size;
        total_speed += last->speed;
        if (row == worker)
            own_speed = last->speed;
    }
    if (own_speed <= 0 || total_speed <= 0)
        return std::nullopt;
    return static_cast<std::int32_t>(std::max(1.0, std::round(total_batch * own_speed / total_speed)));
}

void WorkersView::pin_selected()
{
    const auto job = store_.shown_job();
    const auto worker = selected_worker();
    if (!job || !worker)
        return;
    const auto current = [this, w = *worker] { // as the table's Batch size column shows it
        const IterationRecord* last = store_.workers().last_row(w);
        const protocol::WorkerState* state = store_.workers().state(w);
        return last ? last->batch_size : (state ? state->batch_size : 0);
    };
    PinDialog dialog(*worker, current(), suggested_size(*worker), this);
    // The job trains on while the dialog is open: what it shows follows the table.
    connect(&store_.workers(), &QAbstractItemModel::dataChanged, &dialog,
        [&, w = *worker] { dialog.set_current(current(), suggested_size(w)); });
    if (dialog.exec() == QDialog::Accepted)
        commands_.pin(*job, *worker, dialog.batch_size());
}

void WorkersView::unpin_selected()
{
    const auto job = store_.shown_job();
    if (const auto worker = selected_worker(); job && worker)
        commands_.unpin(*job, *worker);
}

void WorkersView::exclude_selected()
{
    const auto job = store_.shown_job();
    const auto worker = selected_worker();
    if (!job || !worker)
        return;
    ExcludeDialog dialog(*worker, this);
    if (dialog.exec() == QDialog::Accepted)
        commands_.exclude(*job, *worker, dialog.for_s());
}

void WorkersView::include_selected()
{
    const auto job = store_.shown_job();
    if (const auto worker = selected_worker(); job && worker)
        commands_.include(*job, *worker);
}

} // namespace fulcrum::ui
