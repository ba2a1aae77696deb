#pragma once

#include "common/records.h"
#include "ui/views/event_marks.h"
#include "ui/views/lane_raster.h"

#include <QWidget>
#include <optional>

namespace fulcrum::ui {

class ConsoleStore;
class IterationWindow;
class JobHistory;

// One lane per worker, run time along x: each iteration's bar split into compute,
// communication and wait (at the barrier), the straggler of each iteration marked red, and
// a heat strip of each worker's lateness at the left. The lanes are a LaneRaster: built once
// per time scale, then extended with each new iteration's samples, so a frame at 64 workers
// × 10,000 iterations costs what arrived since the last one.
// Wheel zooms, drag pans (the shared IterationWindow), a click tells one iteration's numbers.
// Down the lanes, Ctrl+wheel zooms into fewer workers and Shift+wheel or Page Up/Down
// scrolls them, so that a 256-worker job's lanes can be read one by one; find_worker brings a
// worker's lane into view, and the chosen worker's lane (the workers table's selection) is
// outlined and always labelled.
class StragglerTimeline : public QWidget {
    Q_OBJECT
public:
    StragglerTimeline(ConsoleStore& store, IterationWindow& window, QWidget* parent = nullptr);

    QSize sizeHint() const override { return { 800, 400 }; }
    // Lanes are labelled at a readable density: every worker where a lane holds a line of
    // text, else every 2nd, 5th, 10th, 20th… (w0, w10, w20 at 256 workers in 300 pixels).
    int label_every() const;
    // The lanes drawn: `count` workers from `first` (every worker until zoomed).
    struct Lanes {
        int first = 0, count = 0;
        bool operator==(const Lanes&) const = default;
    };
    Lanes lanes() const;
    // `factor` times as many lanes (at least one, at most every worker), the lane of
    // `around` staying where it is on screen.
    void zoom_lanes(double factor, WorkerId around);
    void scroll_lanes(int by); // workers down (negative: up)
    void show_every_lane();
    // Outlines the worker's lane and scrolls it into view; nothing for none.
    void set_chosen(std::optional<WorkerId> worker);
    std::optional<WorkerId> chosen() const { return chosen_; }
    // "w37" or "37": that worker's lane, zoomed to a readable height when the lanes are
    // thinner than a line of text, centred and chosen (workerFound). Otherwise a sentence
    // for the operator saying what was wrong, and nothing changes.
    QString find_worker(const QString& text);
    // The worker and iteration under a point of the widget.
    std::optional<std::pair<WorkerId, std::int64_t>> hit(QPoint point) const;
    // "iteration 412 of worker 3: batch 96, compute 0.41 s, …"
    static QString describe(const JobHistory& history, WorkerId worker, std::int64_t iteration);
    // Each worker's lateness over the iterations painted: the mean of (its batch time − the
    // fastest's) / the iteration's length. What the heat strip colours.
    std::vector<double> lateness() const;
    // The shown iterations' samples as CSV: worker, iteration, times, batch size, straggler.
    QString visible_csv() const;
    // The phase changes and operator actions marked in the last paint, with their x.
    const std::vector<std::pair<double, EventMark>>& marks() const { return marks_; }

signals:
    void iterationClicked(WorkerId worker, std::int64_t iteration);
    void workerFound(WorkerId worker);

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override; // a mark's tooltip
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;

private:
    struct Frame; // the geometry of one paint
    Frame frame() const;
    // frame() with the time scale on screen (the raster's), which hit() must agree with.
    Frame painted_frame() const;

    ConsoleStore& store_;
    IterationWindow& window_;
    QPoint press_at_;
    bool dragged_ = false;
    LaneRaster raster_;
    Lanes zoomed_; // as the operator left them: count 0 for every lane
    std::optional<WorkerId> chosen_;
    std::vector<std::pair<double, EventMark>> marks_;
};

} // namespace fulcrum::ui
