#include "ui/models/events_model.h"

#include "protocol/messages.h"

#include <algorithm>

namespace fulcrum::ui {

EventsModel::EventsModel(std::size_t limit, QObject* parent)
    : QAbstractTableModel(parent)
    , limit_(std::max<std::size_t>(1, limit))
{
}

void EventsModel::append(const EventRecord& event)
{
    if (events_.size() >= limit_) {
        beginRemoveRows({}, 0, 0);
        events_.pop_front();
        endRemoveRows();
    }
    const int row = static_cast<int>(events_.size());
    beginInsertRows({}, row, row);
    events_.push_back(event);
    endInsertRows();
}

void EventsModel::truncate_after(double time_s)
{
    std::size_t keep = events_.size();
    while (keep > 0 && events_[keep - 1].time_s > time_s + 1e-9)
        --keep;
    if (keep == events_.size())
        return;
    beginRemoveRows({}, static_cast<int>(keep), static_cast<int>(events_.size()) - 1);
    events_.resize(keep);
    endRemoveRows();
}

void EventsModel::clear()
{
    beginResetModel();
    events_.clear();
    endResetModel();
}

int EventsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(events_.size());
}
int EventsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant EventsModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= static_cast<int>(events_.size()) || role != Qt::DisplayRole)
        return {};
    const EventRecord& e = events_[static_cast<std::size_t>(index.row())];
    switch (index.column()) {
    case Time:
        return QStringLiteral("%1 s").arg(e.time_s, 0, 'f', 2);
    case Job:
        if (const std::string tenant = tenant_of_ ? tenant_of_(e.job) : std::string();
            !tenant.empty() && tenant != protocol::kDefaultTenant)
            return QStringLiteral("%1 · %2").arg(e.job).arg(QString::fromStdString(tenant));
        return e.job;
    case Iteration:
        return QVariant::fromValue<qlonglong>(e.iteration);
    case Kind:
        return QString::fromStdString(e.kind);
    case Worker:
        return e.worker ? QVariant(*e.worker) : QVariant();
    case Message:
        return QString::fromStdString(e.message);
    case Actor:
        return QString::fromStdString(e.actor);
    default:
        return {};
    }
}

QVariant EventsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    static const char* const kNames[ColumnCount] = { "Time", "Job", "Iteration", "Kind", "Worker", "Message", "Actor" };
    return section >= 0 && section < ColumnCount ? QString::fromLatin1(kNames[section]) : QVariant();
}

} // namespace fulcrum::ui
