#include "ui/models/runs_model.h"

#include <QBrush>
#include <QColor>

namespace fulcrum::ui {

void RunsModel::set_runs(std::vector<protocol::RunListing> runs)
{
    beginResetModel();
    runs_ = std::move(runs);
    endResetModel();
}

const protocol::RunListing* RunsModel::run(int row) const
{
    return row >= 0 && row < static_cast<int>(runs_.size()) ? &runs_[static_cast<std::size_t>(row)] : nullptr;
}

bool RunsModel::replayable(const protocol::RunListing& run)
{
    return run.status.rfind("unreadable", 0) != 0;
}

int RunsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(runs_.size());
}

int RunsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunsModel::data(const QModelIndex& index, int role) const
{
    const protocol::RunListing* r = index.isValid() ? run(index.row()) : nullptr;
    if (!r)
        return {};
    if (role == kReplayableRole)
        return replayable(*r);
    if (role == Qt::ForegroundRole && !replayable(*r))
        return QBrush(QColor(150, 40, 40));
    if (role == Qt::TextAlignmentRole)
        return index.column() == Run || index.column() == Jobs || index.column() == Iterations
            ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
            : QVariant();
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    const auto text = [](const std::string& s) { return QString::fromStdString(s); };
    switch (index.column()) {
    case File:
        return text(r->database);
    case Run:
        return replayable(*r) ? QVariant(static_cast<qlonglong>(r->run)) : QVariant();
    case Name:
        return text(r->name);
    case Mode:
        return text(r->mode);
    case Status:
        return text(r->status);
    case Jobs:
        return replayable(*r) ? QVariant(r->jobs) : QVariant();
    case Iterations:
        return replayable(*r) ? QVariant(static_cast<qlonglong>(r->iterations)) : QVariant();
    case Started:
        return text(r->started_at);
    default:
        return {};
    }
}

QVariant RunsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    static const char* const kNames[ColumnCount]
        = { "File", "Run", "Name", "Mode", "Status", "Jobs", "Iterations", "Started" };
    return section >= 0 && section < ColumnCount ? QString::fromLatin1(kNames[section]) : QVariant();
}

} // namespace fulcrum::ui
