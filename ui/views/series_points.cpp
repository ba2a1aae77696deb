#include "ui/views/series_points.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace fulcrum::ui {

SeriesDownsampler::Bucket SeriesDownsampler::bucket(
    const RingBuffer<WorkerSample>& samples, std::int64_t from, std::int64_t to) const
{
    Bucket out;
    std::size_t i = samples.partition_point([from](const WorkerSample& s) { return s.iteration < from; });
    std::size_t lo = 0, hi = 0;
    double lo_v = 0, hi_v = 0;
    bool any = false;
    for (; i < samples.size() && samples[i].iteration <= to; ++i) {
        const double v = value_(samples[i]);
        if (std::isnan(v))
            continue;
        if (!any || v < lo_v)
            lo = i, lo_v = v;
        if (!any || v > hi_v)
            hi = i, hi_v = v;
        any = true;
    }
    if (!any)
        return out;
    const auto point = [&](std::size_t k, double v) { return QPointF(static_cast<double>(samples[k].iteration), v); };
    if (lo == hi) {
        out.count = 1;
        out.a = point(lo, lo_v);
    } else {
        out.count = 2;
        out.a = lo < hi ? point(lo, lo_v) : point(hi, hi_v);
        out.b = lo < hi ? point(hi, hi_v) : point(lo, lo_v);
    }
    return out;
}

QList<QPointF> SeriesDownsampler::points(
    const RingBuffer<WorkerSample>& samples, Identity identity, std::int64_t first, std::int64_t last, int max_points)
{
    QList<QPointF> out;
    if (samples.empty() || first > last)
        return out;
    first = std::max(first, std::int64_t { 0 });
    const auto buckets = static_cast<std::int64_t>(std::max(2, max_points) / 2);
    const std::int64_t span = last - first + 1;
    // Few enough to draw one by one: buckets of one iteration are the samples themselves.
    const std::int64_t width = span <= 2 * buckets
        ? 1
        : static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>((span + buckets - 1) / buckets)));
    if (identity_ != identity || width != width_) {
        identity_ = identity;
        width_ = width;
        complete_.clear();
    }
    const std::int64_t first_bucket = first / width, last_bucket = last / width;
    complete_.erase(complete_.begin(), complete_.lower_bound(first_bucket));
    complete_.erase(complete_.upper_bound(last_bucket), complete_.end());
    const std::int64_t oldest = samples.front().iteration, newest = samples.back().iteration;
    const std::int64_t in_view = last_bucket - first_bucket + 1;
    out.reserve(2 * static_cast<qsizetype>(in_view));
    for (std::int64_t k = first_bucket; k <= last_bucket; ++k) {
        const std::int64_t from = std::max(first, k * width), to = std::min(last, k * width + width - 1);
        // Whole in the window, every sample still held, and none still to come.
        const bool complete = from == k * width && to == k * width + width - 1 && oldest <= from && newest > to;
        Bucket b;
        if (const auto kept = complete_.find(k); complete && kept != complete_.end()) {
            b = kept->second;
        } else {
            b = bucket(samples, from, to);
            if (complete)
                complete_[k] = b;
        }
        if (b.count >= 1)
            out.append(b.a);
        if (b.count == 2)
            out.append(b.b);
    }
    return out;
}

QList<QPointF> series_points(const RingBuffer<WorkerSample>& samples, std::int64_t first, std::int64_t last,
    int max_points, const SampleValue& value)
{
    SeriesDownsampler once(value);
    return once.points(samples, {}, first, last, max_points);
}

} // namespace fulcrum::ui
