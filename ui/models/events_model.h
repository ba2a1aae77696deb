#pragma once

#include "common/records.h"

#include <QAbstractTableModel>
#include <deque>
#include <functional>
#include <string>

namespace fulcrum::ui {

// Events as they arrive (phase changes, warnings, operator actions with who and when,
// scheduler events), newest last. Bounded: past `limit` the oldest go (the run store keeps
// them all).
class EventsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Time, Job, Iteration, Kind, Worker, Message, Actor, ColumnCount };

    explicit EventsModel(std::size_t limit = 10000, QObject* parent = nullptr);

    void append(const EventRecord& event);
    // Drops the events after `time_s` on the run's clock (a replay seeked back).
    void truncate_after(double time_s);
    void clear();
    const EventRecord& at(int row) const { return events_.at(static_cast<std::size_t>(row)); }
    const std::deque<EventRecord>& all() const { return events_; }
    std::size_t limit() const { return limit_; }
    // Whose each job is (the console's jobs): the Job column names a job's tenant beside its
    // id unless it is the default tenant's ("7 · vision").
    void set_tenant_of(std::function<std::string(JobId)> tenant_of) { tenant_of_ = std::move(tenant_of); }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::size_t limit_;
    std::deque<EventRecord> events_;
    std::function<std::string(JobId)> tenant_of_;
};

} // namespace fulcrum::ui
