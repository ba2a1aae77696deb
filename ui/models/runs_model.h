#pragma once

#include "protocol/messages.h"

#include <QAbstractTableModel>
#include <vector>

namespace fulcrum::ui {

// The recorded runs a fulcrumd serves (list-runs): one row per run, in the server's order.
// A store that cannot be read is a row whose status says why; it cannot be replayed.
class RunsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { File, Run, Name, Mode, Status, Jobs, Iterations, Started, ColumnCount };
    // Qt::UserRole on any column: whether the row's run can be replayed.
    static constexpr int kReplayableRole = Qt::UserRole;

    using QAbstractTableModel::QAbstractTableModel;

    void set_runs(std::vector<protocol::RunListing> runs);
    const protocol::RunListing* run(int row) const;
    static bool replayable(const protocol::RunListing& run);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<protocol::RunListing> runs_;
};

} // namespace fulcrum::ui
