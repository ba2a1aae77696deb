#include "ui/views/series_points.h"

#include <algorithm>
#include <cmath>

namespace fulcrum::ui {

QList<QPointF> series_points(const RingBuffer<WorkerSample>& samples, std::int64_t first, std::int64_t last, int max_points, const SampleValue& value)
{
    QList<QPointF> points;
    std::size_t i = samples.partition_point([first](const WorkerSample& s) { return s.iteration < first; });
    const std::size_t end = samples.partition_point([last](const WorkerSample& s) { return s.iteration <= last; });
    if (i >= end)
        return points;
    const std::size_t n = end - i;
    const std::size_t buckets = std::max<std::size_t>(1, static_cast<std::size_t>(std::max(2, max_points)) / 2);
    if (n <= buckets * 2) {
        points.reserve(static_cast<qsizetype>(n));
        for (; i < end; ++i)
            if (const double v = value(samples[i]); !std::isnan(v))
                points.append(QPointF(static_cast<double>(samples[i].iteration), v));
        return points;
    }
    points.reserve(static_cast<qsizetype>(buckets * 2));
    const std::size_t per_bucket = (n + buckets - 1) / buckets;
    for (std::size_t b = i; b < end; b += per_bucket) {
        const std::size_t stop = std::min(end, b + per_bucket);
        std::size_t lo = stop, hi = stop;
        double lo_v = 0, hi_v = 0;
        for (std::size_t k = b; k < stop; ++k) {
            const double v = value(samples[k]);
            if (std::isnan(v))
                continue;
            if (lo == stop || v < lo_v)
                lo = k, lo_v = v;
            if (hi == stop || v > hi_v)
                hi = k, hi_v = v;
        }
        if (lo == stop)
            continue;
        const auto point = [&](std::size_t k, double v) { return QPointF(static_cast<double>(samples[k].iteration), v); };
        if (lo == hi)
            points.append(point(lo, lo_v));
        else if (lo < hi)
            points.append({ point(lo, lo_v), point(hi, hi_v) });
        else
            points.append({ point(hi, hi_v), point(lo, lo_v) });
    }
    return points;
}

} // namespace fulcrum::ui
