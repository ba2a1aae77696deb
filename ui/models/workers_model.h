#pragma once

#include "protocol/messages.h"

#include <QAbstractTableModel>
#include <optional>
#include <vector>

namespace fulcrum::ui {

// The workers of one job: the operator's state from worker-states and the numbers of each
// worker's latest iteration row.
class WorkersModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Worker,
        Name,
        Device,
        BatchSize,
        BatchTime,
        Wait,
        Speed,
        PredictedSpeed,
        Cpu,
        Memory,
        GpuMemory,
        GpuUtilization,
        State,
        ColumnCount
    };

    // Each column's value to sort by (numbers as numbers: 9 before 10, a wait by its share),
    // for the workers table's sorting proxy.
    static constexpr int kSortRole = Qt::UserRole + 1;

    using QAbstractTableModel::QAbstractTableModel;

    // Shows this job's workers from now on (and none until its messages come).
    void show_job(JobId job);
    // The job shown; unset until one is chosen (clear() unsets it).
    std::optional<JobId> job() const { return job_; }
    void apply(const protocol::WorkerUpdate& update);
    void apply(const protocol::IterationRows& rows);
    void clear();

    const protocol::WorkerState* state(WorkerId worker) const;
    const IterationRecord* last_row(WorkerId worker) const;
    // True once a worker of the job is on a GPU or reports a GPU reading: the view shows the
    // device and GPU columns only then.
    bool has_gpu_workers() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // "pinned at 96", "excluded until 42.5 s", "straggler ×4", "left the job", "" (running freely).
    static QString state_text(const protocol::WorkerState& state);
    // "1.20 GB · 34 %": the worker's own GPU memory and the device's in use; "" when unknown.
    static QString gpu_memory_text(const GpuUse& use);

private:
    struct Row {
        protocol::WorkerState state;
        std::optional<IterationRecord> last;
    };
    Row& row_for(WorkerId worker); // grows the table to the worker
    static QVariant tooltip(int column, const protocol::WorkerState& state, const IterationRecord* row);
    static QVariant sort_key(int column, const protocol::WorkerState& state, const IterationRecord* row);
    std::optional<JobId> job_;
    std::vector<Row> rows_;
};

} // namespace fulcrum::ui
