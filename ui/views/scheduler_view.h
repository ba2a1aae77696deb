#pragma once

#include "protocol/messages.h"

#include <QList>
#include <QPointF>
#include <QWidget>

class QBarSeries;
class QBarCategoryAxis;
class QChart;
class QChartView;
class QLabel;
class QLineSeries;
class QListWidget;
class QValueAxis;

namespace fulcrum::ui {

class ConsoleStore;
class PlacementTimeline;

// The scheduler's side of the cluster: the queue, the placements of jobs on GPUs over time,
// the distribution of job completion times, and over time the cluster's GPU utilization and
// its link contention (the most live jobs crossing one server's link). Live, or in a replay
// the cluster the run's job ran on, as fulcrumd recorded it.
class SchedulerView : public QWidget {
    Q_OBJECT
public:
    explicit SchedulerView(ConsoleStore& store, QWidget* parent = nullptr);

    // Finished jobs' completion times (wall seconds), in 8 equal bins: the JCT histogram.
    std::vector<int> jct_histogram(double* bin_width_s) const;
    // The most live jobs whose workers sit on one server (so cross its link), in `cluster`.
    static int busiest_link(const protocol::ClusterState& cluster);
    // (seconds, busiest_link) as the contention chart draws it, a step per change: seconds
    // watched live, the run's clock in a replay (ConsoleStore::cluster_timeline).
    QList<QPointF> link_load() const;
    void refresh();

private:
    void on_cluster();
    void draw_over_time(); // the utilization and link contention step lines

    ConsoleStore& store_;
    QListWidget* queue_;
    PlacementTimeline* placements_;
    QChart* utilization_chart_;
    QLineSeries* utilization_;
    QLineSeries* links_;
    QValueAxis* time_axis_;
    QValueAxis* links_axis_ = nullptr;
    QChart* jct_chart_;
    QBarSeries* jct_;
    QBarCategoryAxis* jct_axis_;
    QValueAxis* jct_count_axis_;
    QLabel* summary_;
};

} // namespace fulcrum::ui
