#include "perf/gpu_profile_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

namespace fulcrum::perf {

double TimingFit::seconds(std::int32_t batch_size) const
{
    return launch_overhead_s + std::max(batch_size, saturation_batch) / peak_speed;
}

namespace {

// t = a + b z, weighted by 1 / t^2 (relative error); returns {a, b} with a, b >= 0.
std::pair<double, double> weighted_line(std::span<const TimingPoint> points, std::int32_t knee)
{
    double sw = 0, sz = 0, st = 0, szz = 0, szt = 0;
    for (const TimingPoint& p : points) {
        const double w = 1.0 / (p.seconds * p.seconds);
        const double z = std::max(p.batch_size, knee);
        sw += w, sz += w * z, st += w * p.seconds, szz += w * z * z, szt += w * z * p.seconds;
    }
    const double det = sw * szz - sz * sz;
    if (det <= 0) // every z equal: all time is overhead-free proportional time
        return { 0.0, st / sz };
    double b = (sw * szt - sz * st) / det;
    double a = (st - b * sz) / sw;
    if (a < 0) { // no negative overhead: the line through the origin
        a = 0;
        b = szt / szz;
    }
    if (b <= 0) { // no negative slope: a constant time
        b = std::numeric_limits<double>::min();
        a = st / sw;
    }
    return { a, b };
}

} // namespace

TimingFit fit_gpu_timing(std::span<const TimingPoint> points)
{
    std::set<std::int32_t> sizes;
    for (const TimingPoint& p : points) {
        if (p.batch_size < 1 || !(p.seconds > 0) || !std::isfinite(p.seconds))
            throw std::invalid_argument("a timing point needs a batch of at least 1 and a positive time");
        sizes.insert(p.batch_size);
    }
    if (sizes.size() < 2)
        throw std::invalid_argument("fitting a device's timing needs at least two batch sizes");
    TimingFit best;
    double best_error = std::numeric_limits<double>::infinity();
    for (const std::int32_t knee : sizes) {
        if (knee == *sizes.rbegin())
            break; // a knee at the largest size leaves no slope to fit
        const auto [a, b] = weighted_line(points, knee);
        double error = 0;
        for (const TimingPoint& p : points) {
            const double r = (a + std::max(p.batch_size, knee) * b) / p.seconds - 1;
            error += r * r;
        }
        if (error < best_error) {
            best_error = error;
            best = { a, knee, 1.0 / b, std::sqrt(error / static_cast<double>(points.size())) };
        }
    }
    return best;
}

} // namespace fulcrum::perf
