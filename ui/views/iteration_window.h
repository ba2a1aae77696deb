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

signals:
    void changed();

private:
    std::int64_t data_first_ = 0, data_last_ = 0;
    std::int64_t first_ = 0, last_ = 0;
    bool following_ = true;
};

} // namespace fulcrum::ui
