#pragma once

#include "protocol/messages.h"

#include <QElapsedTimer>
#include <QWidget>
#include <deque>

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
// the distribution of job completion times and the cluster's GPU utilization over time.
class SchedulerView : public QWidget {
    Q_OBJECT
public:
    explicit SchedulerView(ConsoleStore& store, QWidget* parent = nullptr);

    // One cluster state as seen at `seconds` since the console started watching.
    struct Snapshot {
        double seconds = 0;
        protocol::ClusterState cluster;
    };
    const std::deque<Snapshot>& snapshots() const { return snapshots_; }
    // Finished jobs' completion times (wall seconds), in 8 equal bins: the JCT histogram.
    std::vector<int> jct_histogram(double* bin_width_s) const;
    void refresh();

private:
    void on_cluster();

    ConsoleStore& store_;
    QElapsedTimer clock_;
    std::deque<Snapshot> snapshots_;
    QListWidget* queue_;
    PlacementTimeline* placements_;
    QChart* utilization_chart_;
    QLineSeries* utilization_;
    QValueAxis* time_axis_;
    QChart* jct_chart_;
    QBarSeries* jct_;
    QBarCategoryAxis* jct_axis_;
    QValueAxis* jct_count_axis_;
    QLabel* summary_;
};

} // namespace fulcrum::ui
