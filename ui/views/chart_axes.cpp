#include "ui/views/chart_axes.h"

#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace fulcrum::ui {

namespace {

// The round step (1, 2 or 5 × 10^k) at or above `raw`.
double round_step(double raw)
{
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    return raw / magnitude <= 1 ? magnitude
        : raw / magnitude <= 2  ? 2 * magnitude
        : raw / magnitude <= 5  ? 5 * magnitude
                                : 10 * magnitude;
}

// Qt Charts lays out an axis's ticks as soon as its range or its interval changes, one item
// per tick: the old interval over a new range 10^5 times wider (a first frame's 1e-6 s axis,
// then a 0.1 s batch) made a million items and froze the console. So the wider of the two
// changes comes second: ticks stay few in between.
void set_range_and_step(QValueAxis& axis, double from, double to, double step)
{
    axis.setTickAnchor(0);
    if (axis.tickType() == QValueAxis::TicksDynamic && step < axis.tickInterval()) {
        axis.setRange(from, to); // narrower: the old, larger step still gives few ticks
        axis.setTickInterval(step);
    } else {
        axis.setTickInterval(step); // larger: fewer ticks over the old range
        axis.setRange(from, to);
    }
    axis.setTickType(QValueAxis::TicksDynamic);
}

} // namespace

void set_value_axis(QValueAxis& axis, double max, bool whole, const QString& suffix)
{
    const double top = std::max(max, whole ? 1.0 : 1e-9) * 1.05; // room above the highest point
    double step = round_step(top / 5);
    if (whole)
        step = std::max(step, 1.0);
    set_range_and_step(axis, 0, std::ceil(top / step - 1e-9) * step, step);
    const int decimals = whole ? 0 : std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
    axis.setLabelFormat(
        QStringLiteral("%.%1f").arg(decimals) + QString(suffix).replace(QLatin1Char('%'), QStringLiteral("%%")));
}

void set_time_axis(QValueAxis& axis, double from, double to)
{
    to = std::max(to, from + 1e-9);
    const double step = round_step((to - from) / 10);
    set_range_and_step(axis, from, to, step);
    axis.setLabelFormat(
        QStringLiteral("%.%1f").arg(std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)))));
}

void set_iteration_axis(QValueAxis& axis, AxisSpan span)
{
    const double raw = std::max((span.to - span.from) / 8, 1.0);
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    const double step = raw / magnitude < 2 ? 2 * magnitude : raw / magnitude < 5 ? 5 * magnitude : 10 * magnitude;
    set_range_and_step(axis, span.from, span.to, std::max(step, 1.0));
    axis.setLabelFormat(QStringLiteral("%.0f"));
}

} // namespace fulcrum::ui
