#include "ui/views/lane_raster.h"

#include "ui/views/palette.h"

#include <QPainter>
#include <algorithm>
#include <cmath>

namespace fulcrum::ui {

namespace {

// Narrower than this many pixels, an iteration goes into its pixel column's sums.
constexpr double kMinSegmentedWidth = 3;

struct Wide {
    int worker;
    double x0, x1, x2, x3;
    bool straggler;
};

} // namespace

double lateness_of(const WorkerSample& sample, const IterationSummary& iteration)
{
    const double length = iteration.barrier_s - iteration.start_s;
    return length > 0 ? (sample.batch_time_s() - iteration.fastest_batch_time_s) / length : 0;
}

int LaneRaster::lanes_drawn() const
{
    const int workers = std::max(key_.history ? key_.history->workers() : 1, 1);
    return key_.lanes > 0 ? std::min(key_.lanes, workers) : workers;
}

bool LaneRaster::shows(int worker) const
{
    return worker >= key_.first_worker && worker < key_.first_worker + lanes_drawn();
}

int LaneRaster::lane_top(int worker) const
{
    return static_cast<int>(std::lround(static_cast<double>(worker - key_.first_worker) * key_.height / lanes_drawn()));
}

int LaneRaster::lane_height() const
{
    const double lane = static_cast<double>(key_.height) / lanes_drawn();
    return std::max(1, static_cast<int>(std::lround(lane - (lane > 6 ? 2 : 0))));
}

void LaneRaster::update(const Key& key, std::int64_t last)
{
    if (!(key == key_) || static_cast<int>(lanes_.size()) != (key.history ? key.history->workers() : 0)) {
        key_ = key;
        scale_ = key.width / std::max(key.t1 - key.t0, 1e-12);
        lanes_.assign(static_cast<std::size_t>(key.history ? key.history->workers() : 0), Lane {});
        for (Lane& lane : lanes_)
            lane.columns.assign(static_cast<std::size_t>(std::max(key.width, 0)), Column {});
        image_ = QImage(std::max(key.width, 1), std::max(key.height, 1), QImage::Format_ARGB32_Premultiplied);
        image_.fill(Qt::transparent);
    }
    if (!key_.history)
        return;
    std::vector<Wide> wide;
    for (int w = 0; w < static_cast<int>(lanes_.size()); ++w) {
        Lane& lane = lanes_[static_cast<std::size_t>(w)];
        const JobHistory& h = *key_.history;
        const RingBuffer<WorkerSample>& ring = h.worker(w);
        const auto& its = h.iterations();
        std::size_t i = h.position_of(w, std::max(key_.first, lane.drawn_through + 1));
        std::size_t s = i < ring.size() ? h.position_of(ring[i].iteration) : its.size();
        for (; i < ring.size() && ring[i].iteration <= last; ++i) {
            const WorkerSample& x = ring[i];
            lane.drawn_through = x.iteration;
            while (s < its.size() && its[s].iteration < x.iteration)
                ++s;
            const bool summarised = s < its.size() && its[s].iteration == x.iteration;
            const bool straggler = summarised && its[s].straggler == w;
            if (summarised && x.batch_size > 0 && its[s].barrier_s > its[s].start_s) {
                lane.lateness_sum += lateness_of(x, its[s]);
                ++lane.lateness_count;
            }
            const double x0 = x_of(x.start_s), x3 = x_of(x.end_s + x.wait_s);
            if (x3 - x0 >= kMinSegmentedWidth) {
                wide.push_back(
                    { w, x0, x_of(x.start_s + x.compute_s), x_of(x.start_s + x.compute_s + x.comm_s), x3, straggler });
                continue;
            }
            const int c = std::clamp(static_cast<int>(x0), 0, key_.width - 1);
            Column& col = lane.columns[static_cast<std::size_t>(c)];
            col.compute += x.compute_s;
            col.comm += x.comm_s;
            col.wait += x.wait_s;
            col.stragglers += straggler ? 1 : 0;
            lane.min_dirty = lane.max_dirty < lane.min_dirty ? c : std::min(lane.min_dirty, c);
            lane.max_dirty = std::max(lane.max_dirty, c);
        }
        paint_columns(w);
    }
    if (wide.empty())
        return;
    QPainter p(&image_);
    const double bar = lane_height();
    for (const Wide& x : wide) {
        if (!shows(x.worker))
            continue;
        const double top = lane_top(x.worker);
        p.fillRect(QRectF(x.x0, top, x.x1 - x.x0, bar), compute_colour());
        p.fillRect(QRectF(x.x1, top, x.x2 - x.x1, bar), comm_colour());
        p.fillRect(QRectF(x.x2, top, x.x3 - x.x2, bar), wait_colour());
        if (x.straggler)
            p.fillRect(QRectF(x.x0, top, x.x3 - x.x0, std::max(2.0, bar / 5)), straggler_colour());
    }
}

void LaneRaster::paint_columns(int worker)
{
    Lane& lane = lanes_[static_cast<std::size_t>(worker)];
    if (lane.max_dirty < lane.min_dirty)
        return;
    if (!shows(worker)) { // summed all the same: a lane scrolled into view is a new key, a rebuild
        lane.min_dirty = 0;
        lane.max_dirty = -1;
        return;
    }
    const QRgb compute = compute_colour().rgba(), comm = comm_colour().rgba(), wait = wait_colour().rgba(),
               straggler = straggler_colour().rgba();
    const int top = lane_top(worker);
    const int height = std::min(lane_height(), image_.height() - top);
    const int mark = std::min(height, std::max(2, height / 5));
    const int from = lane.min_dirty, to = std::min(lane.max_dirty, image_.width() - 1);
    // Per column, the first row (from the lane's top) of communication and of compute:
    // stacked shares, compute at the bottom, wait on top.
    std::vector<std::pair<int, int>> split(static_cast<std::size_t>(to - from + 1), { height, height });
    for (int c = from; c <= to; ++c) {
        const Column& col = lane.columns[static_cast<std::size_t>(c)];
        const float total = col.compute + col.comm + col.wait;
        if (total <= 0)
            continue;
        const int hc = static_cast<int>(std::lround(static_cast<float>(height) * col.compute / total));
        const int hm = static_cast<int>(std::lround(static_cast<float>(height) * col.comm / total));
        split[static_cast<std::size_t>(c - from)] = { std::max(0, height - hc - hm), height - hc };
    }
    for (int y = 0; y < height; ++y) {
        auto* line = reinterpret_cast<QRgb*>(image_.scanLine(top + y));
        for (int c = from; c <= to; ++c) {
            const Column& col = lane.columns[static_cast<std::size_t>(c)];
            if (col.compute + col.comm + col.wait <= 0)
                continue;
            const auto [comm_from, compute_from] = split[static_cast<std::size_t>(c - from)];
            line[c] = (y < mark && col.stragglers > 0) ? straggler
                : y >= compute_from                    ? compute
                : y >= comm_from                       ? comm
                                                       : wait;
        }
    }
    lane.min_dirty = 0;
    lane.max_dirty = -1;
}

std::vector<double> LaneRaster::lateness() const
{
    std::vector<double> out;
    out.reserve(lanes_.size());
    for (const Lane& lane : lanes_)
        out.push_back(lane.lateness_count ? lane.lateness_sum / lane.lateness_count : 0.0);
    return out;
}

} // namespace fulcrum::ui
