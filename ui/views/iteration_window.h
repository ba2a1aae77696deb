#pragma once

#include <QObject>
#include <cstdint>

namespace fulcrum::ui {

// The iterations every time view shows (the equilibrium charts, the straggler timeline, the
// prediction chart): one zoom and pan state they all obey, as in hotspot's
// FilterAndZoomStack. It follows the data's whole range until the operator zooms or pans;
// follow() goes back to that.
class IterationWindow : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;

    // The iterations the console has (the shown job's history).
    void set_data_range(std::int64_t first, std::int64_t last);
    std::int64_t data_first() const { return data_first_; }
    std::int64_t data_last() const { return data_last_; }

    std::int64_t first() const { return following_ ? data_first_ : first_; }
    std::int64_t last() const { return following_ ? data_last_ : last_; }
    bool following() const { return following_; }

    // factor < 1 zooms in around `anchor`, > 1 out; at least 4 iterations stay in view.
    void zoom(double factor, std::int64_t anchor);
    void pan(std::int64_t iterations);
    void show(std::int64_t first, std::int64_t last);
    // Centres the view on an iteration, keeping the span (an event was clicked).
    void centre_on(std::int64_t iteration);
    void follow();
    // Another job is shown: follow its data, and let the charts drop the scale they held
    // while following the last one (a 600-iteration job kept a 4,000-iteration axis).
    void follow_anew();
    // Moves on at each follow_anew(): a chart that held a scale for another epoch drops it.
    std::uint64_t epoch() const { return epoch_; }

signals:
    void changed();

private:
    std::int64_t data_first_ = 0, data_last_ = 0;
    std::int64_t first_ = 0, last_ = 0;
    bool following_ = true;
    std::uint64_t epoch_ = 0;
};

// The stretch an axis shows: iterations for the charts, run seconds for the timeline.
struct AxisSpan {
    double from = 0, to = 0;
    bool operator==(const AxisSpan&) const = default;
};

// While a view follows the newest data, its axis runs a twentieth of its span past the
// newest value and keeps that scale until the data fill it (or the oldest move in by as
// much). A frame that only adds data then changes no axis, so nothing already drawn has to
// be laid out again, and the picture does not creep under the reader's eyes. `shown` is
// the axis as it is; the result is what it should be for data over [first, last].
AxisSpan follow_span(AxisSpan shown, double first, double last);

} // namespace fulcrum::ui
