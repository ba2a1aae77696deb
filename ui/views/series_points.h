#pragma once

#include "ui/models/iteration_history.h"

#include <QList>
#include <QPointF>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>

namespace fulcrum::ui {

using SampleValue = std::function<double(const WorkerSample&)>;

// One worker's value over iterations [first, last] as at most about `max_points` chart
// points. With more iterations than that, iterations go into buckets and each bucket gives
// its minimum and maximum in iteration order, so spikes stay visible however far the chart
// is zoomed out. NaN values are skipped.
//
// Buckets are aligned to iteration numbers (a power-of-two width), so a bucket's points do
// not move as the range grows. A downsampler keeps the points of every complete bucket
// between calls and computes only the open ones: the newest, still filling, and the oldest,
// cut by the window or by the ring dropping old iterations. A frame at 10,000 iterations
// per worker then costs a few buckets per series, not a pass over every sample.
class SeriesDownsampler {
public:
    // Which samples these are: the history's generation and the worker. Another identity, or
    // another bucket width, starts afresh.
    struct Identity {
        std::uint64_t generation = 0;
        WorkerId worker = -1;
        bool operator==(const Identity&) const = default;
    };

    explicit SeriesDownsampler(SampleValue value)
        : value_(std::move(value))
    {
    }
    QList<QPointF> points(const RingBuffer<WorkerSample>& samples, Identity identity, std::int64_t first,
        std::int64_t last, int max_points);
    // The iterations each bucket of the last points() spans: two neighbouring points are at
    // most 2 × width − 1 iterations apart unless the worker has none between them.
    std::int64_t width() const { return width_; }

private:
    struct Bucket {
        int count = 0; // 0, 1 or 2 points
        QPointF a, b;
    };
    Bucket bucket(const RingBuffer<WorkerSample>& samples, std::int64_t from, std::int64_t to) const;

    SampleValue value_;
    std::optional<Identity> identity_;
    std::int64_t width_ = 0;
    std::map<std::int64_t, Bucket> complete_; // by bucket index
};

// The same points without keeping anything between calls.
QList<QPointF> series_points(const RingBuffer<WorkerSample>& samples, std::int64_t first, std::int64_t last,
    int max_points, const SampleValue& value);

} // namespace fulcrum::ui
