#include "sync/barrier_window.h"

#include "common/registry.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <stdexcept>

namespace fulcrum::sync {

void check_end_times(const EndTimes& ends)
{
    if (ends.empty())
        throw std::invalid_argument("barrier window: no workers");
    for (std::size_t i = 0; i < ends.size(); ++i) {
        if (ends[i].empty())
            throw std::invalid_argument("barrier window: worker " + std::to_string(i) + " has no predicted end times");
        for (std::size_t r = 0; r < ends[i].size(); ++r)
            if (!std::isfinite(ends[i][r]) || (r > 0 && ends[i][r] <= ends[i][r - 1]))
                throw std::invalid_argument("barrier window: worker " + std::to_string(i)
                    + "'s end times must be finite and strictly increasing");
    }
}

namespace {

BarrierWindow make_window(const EndTimes& ends, const std::vector<int>& picks)
{
    BarrierWindow w;
    w.iterations.resize(picks.size());
    w.earliest = std::numeric_limits<double>::infinity();
    w.latest = -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < picks.size(); ++i) {
        const double t = ends[i][static_cast<std::size_t>(picks[i])];
        w.iterations[i] = picks[i] + 1;
        w.earliest = std::min(w.earliest, t);
        w.latest = std::max(w.latest, t);
    }
    return w;
}

// Shorter is better; among equal spans the earlier barrier (less staleness, sooner sync).
bool better(double span, double latest, double best_span, double best_latest)
{
    return span < best_span || (span == best_span && latest < best_latest);
}

} // namespace

BarrierWindow grid_scan(const EndTimes& ends)
{
    check_end_times(ends);
    const std::size_t n = ends.size();
    // The slowest worker: the one whose first iteration ends last.
    std::size_t slowest = 0;
    for (std::size_t i = 1; i < n; ++i)
        if (ends[i].front() > ends[slowest].front())
            slowest = i;
    std::vector<int> picks(n), best;
    double best_span = std::numeric_limits<double>::infinity(), best_latest = best_span;
    for (const double barrier : ends[slowest]) {
        double lo = barrier, hi = barrier;
        for (std::size_t i = 0; i < n; ++i) {
            const auto& e = ends[i];
            auto it = std::upper_bound(e.begin(), e.end(), barrier);
            const auto index = it == e.begin() ? 0 : (it - e.begin()) - 1;
            picks[i] = static_cast<int>(index);
            lo = std::min(lo, e[static_cast<std::size_t>(index)]);
            hi = std::max(hi, e[static_cast<std::size_t>(index)]);
        }
        if (better(hi - lo, hi, best_span, best_latest)) {
            best_span = hi - lo;
            best_latest = hi;
            best = picks;
        }
    }
    return make_window(ends, best);
}

BarrierWindow full_grid_scan(const EndTimes& ends)
{
    check_end_times(ends);
    const std::size_t n = ends.size();
    std::vector<int> picks(n), best;
    double best_span = std::numeric_limits<double>::infinity(), best_latest = best_span;
    for (std::size_t owner = 0; owner < n; ++owner)
        for (const double lower : ends[owner]) {
            double hi = lower;
            bool covered = true;
            for (std::size_t i = 0; i < n && covered; ++i) {
                const auto& e = ends[i];
                const auto it = std::lower_bound(e.begin(), e.end(), lower);
                if (it == e.end()) {
                    covered = false;
                    break;
                }
                picks[i] = static_cast<int>(it - e.begin());
                hi = std::max(hi, *it);
            }
            if (covered && better(hi - lower, hi, best_span, best_latest)) {
                best_span = hi - lower;
                best_latest = hi;
                best = picks;
            }
        }
    return make_window(ends, best);
}

BarrierWindow zipline(const EndTimes& ends)
{
    check_end_times(ends);
    const std::size_t n = ends.size();
    struct Point {
        double t;
        std::uint32_t worker;
        std::uint32_t index;
    };
    std::vector<Point> line;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t r = 0; r < ends[i].size(); ++r)
            line.push_back({ ends[i][r], static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(r) });
    std::sort(line.begin(), line.end(),
        [](const Point& a, const Point& b) { return a.t < b.t || (a.t == b.t && a.worker < b.worker); });

    std::vector<int> last(n, -1), best;
    std::size_t seen = 0;
    double best_span = std::numeric_limits<double>::infinity(), best_latest = best_span;
    for (const Point& p : line) {
        if (last[p.worker] < 0)
            ++seen;
        last[p.worker] = static_cast<int>(p.index);
        if (seen < n)
            continue;
        double lo = p.t;
        for (std::size_t i = 0; i < n; ++i)
            lo = std::min(lo, ends[i][static_cast<std::size_t>(last[i])]);
        if (better(p.t - lo, p.t, best_span, best_latest)) {
            best_span = p.t - lo;
            best_latest = p.t;
            best = last;
        }
    }
    return make_window(ends, best);
}

BarrierWindow min_window(const EndTimes& ends)
{
    check_end_times(ends);
    const std::size_t n = ends.size();
    using Head = std::pair<double, std::uint32_t>; // (end time, worker)
    std::vector<Head> storage;
    storage.reserve(n);
    std::priority_queue<Head, std::vector<Head>, std::greater<>> heads(std::greater<> {}, std::move(storage));
    std::vector<int> at(n, 0), best;
    double hi = -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < n; ++i) {
        heads.emplace(ends[i][0], static_cast<std::uint32_t>(i));
        hi = std::max(hi, ends[i][0]);
    }
    double best_span = std::numeric_limits<double>::infinity(), best_latest = best_span;
    while (true) {
        const auto [lo, worker] = heads.top();
        if (better(hi - lo, hi, best_span, best_latest)) {
            best_span = hi - lo;
            best_latest = hi;
            best = at;
        }
        const int following = at[worker] + 1;
        const auto next = static_cast<std::size_t>(following);
        if (next >= ends[worker].size())
            break; // the minimum cannot advance: no later window contains this worker
        heads.pop();
        at[worker] = static_cast<int>(next);
        heads.emplace(ends[worker][next], worker);
        hi = std::max(hi, ends[worker][next]);
    }
    return make_window(ends, best);
}

namespace {

struct WindowEntry {
    KindInfo kind;
    BarrierWindow (*choose)(const EndTimes& ends);
};

constexpr WindowEntry kAlgorithms[] = {
    { { "gridscan", "GridScan: candidate barriers at the slowest worker's end times; cheap, not always optimal" },
        grid_scan },
    { { "fullgridscan", "FullGridScan: every end time as the window's lower edge; exact, O(n^2 R log R)" },
        full_grid_scan },
    { { "zipline", "ZipLine: one sweep over all end times merged; exact, O(nR log(nR) + n^2 R)" }, zipline },
    { { "exact", "a min-heap over the workers' end times; exact, O(nR log n)" }, min_window },
};

constexpr Registry<WindowEntry> kRegistry { "barrier-window algorithm", kAlgorithms };

} // namespace

std::vector<std::string> window_algorithms()
{
    return kRegistry.names();
}

std::vector<CatalogueEntry> window_catalogue()
{
    return kRegistry.catalogue();
}

BarrierWindow choose_window(const std::string& algorithm, const EndTimes& ends)
{
    return kRegistry.entry(algorithm).choose(ends);
}

void check_window_algorithm(const std::string& algorithm)
{
    kRegistry.at(algorithm);
}

} // namespace fulcrum::sync
