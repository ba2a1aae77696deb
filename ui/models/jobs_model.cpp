#include "ui/models/jobs_model.h"

#include "ui/models/format.h"

#include <QFont>

namespace fulcrum::ui {

void JobsModel::apply(const protocol::JobStatus& status)
{
    for (std::size_t i = 0; i < jobs_.size(); ++i)
        if (jobs_[i].job == status.job) {
            jobs_[i] = status;
            const int row = static_cast<int>(i);
            emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
            return;
        }
    const int row = static_cast<int>(jobs_.size());
    beginInsertRows({}, row, row);
    jobs_.push_back(status);
    endInsertRows();
}

void JobsModel::clear()
{
    beginResetModel();
    jobs_.clear();
    new_.clear();
    endResetModel();
}

void JobsModel::mark_new(JobId job)
{
    new_.insert(job);
    row_changed(job);
}

void JobsModel::mark_seen(JobId job)
{
    if (new_.erase(job) > 0)
        row_changed(job);
}

void JobsModel::row_changed(JobId job)
{
    for (std::size_t i = 0; i < jobs_.size(); ++i)
        if (jobs_[i].job == job)
            emit dataChanged(index(static_cast<int>(i), 0), index(static_cast<int>(i), ColumnCount - 1));
}

const protocol::JobStatus* JobsModel::job(JobId id) const
{
    for (const auto& j : jobs_)
        if (j.job == id)
            return &j;
    return nullptr;
}

int JobsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(jobs_.size());
}
int JobsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant JobsModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= static_cast<int>(jobs_.size()))
        return {};
    const protocol::JobStatus& j = jobs_[static_cast<std::size_t>(index.row())];
    const double fraction
        = j.iterations > 0 ? static_cast<double>(j.iteration) / static_cast<double>(j.iterations) : 0.0;
    if (role == kFractionRole && index.column() == Progress)
        return fraction;
    if (role == Qt::ToolTipRole && !j.message.empty())
        return QString::fromStdString(j.message);
    if (role == Qt::FontRole && new_.contains(j.job)) {
        QFont bold;
        bold.setBold(true);
        return bold;
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case Job:
        return j.job;
    case Name:
        return QString::fromStdString(j.name);
    case Tenant:
        return QString::fromStdString(j.tenant);
    case State: {
        const QString state = QString::fromUtf8(
            protocol::to_string(j.state).data(), static_cast<int>(protocol::to_string(j.state).size()));
        return j.elastic && j.elastic->frozen ? state + QStringLiteral(" · frozen") : state;
    }
    case Model:
        return QString::fromStdString(j.model);
    case SyncModel:
        return QString::fromStdString(j.sync_model);
    case Policy:
        return QString::fromStdString(j.policy);
    case Workers:
        return j.workers;
    case Progress:
        return QStringLiteral("%1 %").arg(100.0 * fraction, 0, 'f', 1);
    case Iteration:
        if (j.iterations <= 0) // queued: nothing planned yet to count against
            return QString();
        return QStringLiteral("%1 / %2").arg(j.iteration).arg(j.iterations);
    case Accuracy:
        return j.accuracy ? QStringLiteral("%1 %").arg(100.0 * *j.accuracy, 0, 'f', 2) : QString();
    case Elapsed:
        return duration_text(j.elapsed_s);
    case RunClock:
        return j.iteration > 0 || j.time_s > 0 ? QStringLiteral("%1 s").arg(j.time_s, 0, 'f', 1) : QString();
    case Remaining: {
        // The wall time so far per completed iteration, times what is left.
        if (j.iteration <= 0 || j.iteration >= j.iterations || j.state != protocol::JobState::Running)
            return QString();
        return duration_text(
            j.elapsed_s / static_cast<double>(j.iteration) * static_cast<double>(j.iterations - j.iteration));
    }
    default:
        return {};
    }
}

QVariant JobsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::ToolTipRole && section == Elapsed)
        return QStringLiteral("Wall time since the job started");
    if (role == Qt::ToolTipRole && section == RunClock)
        return QStringLiteral("The job's own clock, in seconds: modelled time in the virtual and paced modes, "
                              "the wall's in the real mode. Its events, and a worker's \"excluded until\", read "
                              "on it");
    if (role != Qt::DisplayRole)
        return {};
    static const char* const kNames[ColumnCount] = { "Job", "Name", "Tenant", "State", "Model", "Sync", "Policy",
        "Workers", "Progress", "Iteration", "Accuracy", "Elapsed", "Run clock", "Remaining" };
    return section >= 0 && section < ColumnCount ? QString::fromLatin1(kNames[section]) : QVariant();
}

} // namespace fulcrum::ui
