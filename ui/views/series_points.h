#pragma once

#include "ui/models/iteration_history.h"

#include <QList>
#include <QPointF>

#include <cstdint>
#include <functional>

namespace fulcrum::ui {

using SampleValue = std::function<double(const WorkerSample&)>;

// One worker's value over iterations [first, last], at most about `max_points` points: with
// more iterations than that, each bucket of iterations gives its minimum and maximum in
// iteration order (so spikes stay visible however far the chart is zoomed out). NaN values
// are skipped.
QList<QPointF> series_points(const RingBuffer<WorkerSample>& samples, std::int64_t first, std::int64_t last, int max_points, const SampleValue& value);

} // namespace fulcrum::ui
