#pragma once

#include "protocol/messages.h"

#include <QAbstractTableModel>
#include <set>
#include <vector>

namespace fulcrum::ui {

// The jobs table: one row per job, in the order the jobs were first seen, updated in place
// from each job-status. Views read it; nothing here parses JSON.
class JobsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Job,
        Name,
        Tenant, // whose job it is (its submitter's)
        State,
        Model,
        SyncModel,
        Policy,
        Workers,
        Progress,
        Iteration,
        Accuracy,
        Elapsed,
        RunClock, // the job's own clock, which its events and exclusion limits read on
        Remaining,
        ColumnCount
    };
    // Qt::UserRole on the Progress column: the completed fraction, 0 to 1, for a bar.
    static constexpr int kFractionRole = Qt::UserRole;

    using QAbstractTableModel::QAbstractTableModel;

    void apply(const protocol::JobStatus& status);
    void clear();
    const protocol::JobStatus* job(JobId id) const;
    const std::vector<protocol::JobStatus>& statuses() const { return jobs_; }
    // A job that arrived while the operator watched (fulcrumctl's, another console's) is
    // shown in bold until it is chosen.
    void mark_new(JobId job);
    void mark_seen(JobId job);
    bool is_new(JobId job) const { return new_.contains(job); }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<protocol::JobStatus> jobs_;
    std::set<JobId> new_;
    void row_changed(JobId job); // its row's cells, to the views
};

} // namespace fulcrum::ui
