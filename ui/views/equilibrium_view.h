#pragma once

#include "ui/views/distribution_band.h"
#include "ui/views/event_marks.h"
#include "ui/views/iteration_window.h"
#include "ui/views/series_points.h"
#include "ui/views/worker_line.h"

#include <QWidget>
#include <memory>
#include <optional>
#include <vector>

class QChart;
class QChartView;
class QDoubleSpinBox;
class QGraphicsItem;
class QGraphicsSimpleTextItem;
class QLabel;
class QLineSeries;
class QValueAxis;

namespace fulcrum::ui {

class ConsoleStore;
class IterationWindow;

// Two linked charts over the shown iterations: each worker's batch size, and each worker's
// batch processing time with the spread ((max - min) / mean) on a second axis. Phase changes
// (fast-approach -> fine-tune, LB-BSP Algorithm 2) and the operator's changes to the job
// (pins, exclusions, policy changes…, with who made them in the tooltip) are marked, and
// the iteration from which the spread stays under the threshold is labelled "equilibrium".
class EquilibriumView : public QWidget {
    Q_OBJECT
public:
    static constexpr int kWorkersAddedPerFrame = 8;
    // Up to this many workers each has its line; a larger job's charts draw the workers'
    // distribution (a band from the least to the greatest value and the median) and the
    // lines of its worst stragglers and of the worker the operator chose.
    static constexpr int kMostLines = 16;
    static constexpr int kStragglersDrawn = 4;

    EquilibriumView(ConsoleStore& store, IterationWindow& window, QWidget* parent = nullptr);

    // Redraws from the store (the main window calls it at most once per frame).
    // Redraws from the store; a job's first frames add their workers' series a few at a
    // time (kWorkersAddedPerFrame), the rest following in the next frames.
    void refresh();
    // Redraws with every worker's series at once (a screenshot, an export).
    void refresh_complete();
    double threshold() const;
    // The equilibrium in effect at the newest iteration shown, if any.
    std::optional<std::int64_t> equilibrium() const { return equilibrium_; }
    // The line above the charts: the equilibrium in effect, or how near the next one is.
    QString summary() const;
    QChartView* batch_size_chart() const { return sizes_view_; }
    QChartView* batch_time_chart() const { return times_view_; }
    // The series drawn, as CSV: iteration, then one column per series.
    QString visible_csv() const;
    // Brings one worker's lines forward in both charts and fades the others (what hovering
    // its legend entry does); -1 shows all alike again.
    void highlight(int worker);
    QPen pen_of(WorkerId worker) const; // its colour, faded or wide as highlighted
    int highlighted() const { return highlighted_; }
    // The worker chosen in the workers table: its lines are highlighted (the others faded),
    // and a large job's charts draw them beside the distribution and the worst stragglers'.
    void set_chosen(std::optional<WorkerId> worker);
    // The workers whose lines are drawn: every one up to kMostLines, else the chosen one and
    // the kStragglersDrawn that were the iteration's straggler most often in the iterations
    // shown (ties to the lower id).
    std::vector<WorkerId> drawn_workers() const { return drawn_; }
    bool draws_distribution() const { return size_band_->visible(); }
    // How many unbroken stretches worker w's line has in each chart (batch size, batch time):
    // one more for each run of iterations it sat out.
    std::pair<int, int> line_stretches(WorkerId w) const;
    // What the charts mark: the job's phase and operator events and its equilibria.
    const std::vector<EventMark>& marks() const { return mark_at_; }
    // The marks' labels as drawn, each a child of its chart.
    std::vector<const QGraphicsSimpleTextItem*> drawn_labels() const;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    // Adds lines for up to kWorkersAddedPerFrame more of the workers to draw; true once each has them.
    bool ensure_lines(const std::vector<WorkerId>& workers);
    std::vector<WorkerId> workers_to_draw(std::int64_t first, std::int64_t last) const;
    void place_marks();
    // The two charts' plot areas start and end at the same x, so one iteration is at one x
    // in both: on the right the upper chart holds an invisible twin of the lower one's spread
    // axis (the legends list the same entries), on the left the chart whose tick labels are
    // narrower gets the difference as margin.
    void align_plots();

    ConsoleStore& store_;
    IterationWindow& window_;
    QChart* sizes_;
    QChart* times_;
    QChartView* sizes_view_;
    QChartView* times_view_;
    QValueAxis* sizes_x_;
    QValueAxis* sizes_y_;
    QValueAxis* times_x_;
    QValueAxis* times_y_;
    QValueAxis* spread_y_;
    QValueAxis* spread_twin_; // the upper chart's: the spread axis's room, drawn in nothing
    std::vector<std::unique_ptr<WorkerLine>> size_lines_, time_lines_; // per worker; made when first drawn
    std::unique_ptr<DistributionBand> size_band_, time_band_;
    std::vector<WorkerId> drawn_;
    std::optional<WorkerId> chosen_;
    std::vector<SeriesDownsampler> size_points_, time_points_; // per worker
    AxisSpan x_span_;
    std::uint64_t x_span_epoch_ = 0; // the window's epoch x_span_ was held in
    QLineSeries* spread_;
    QDoubleSpinBox* threshold_;
    QLabel* summary_;
    std::vector<QGraphicsItem*> marks_;
    std::vector<EventMark> mark_at_;
    std::optional<std::int64_t> equilibrium_;
    int highlighted_ = -1;
    bool aligning_ = false;
};

} // namespace fulcrum::ui
