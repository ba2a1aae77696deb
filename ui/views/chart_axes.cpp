#include "ui/views/chart_axes.h"

#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace fulcrum::ui {

void set_iteration_axis(QValueAxis& axis, AxisSpan span)
{
    const double raw = std::max((span.to - span.from) / 8, 1.0);
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    const double step = raw / magnitude < 2 ? 2 * magnitude : raw / magnitude < 5 ? 5 * magnitude : 10 * magnitude;
    axis.setRange(span.from, span.to);
    axis.setTickType(QValueAxis::TicksDynamic);
    axis.setTickAnchor(0);
    axis.setTickInterval(std::max(step, 1.0));
    axis.setLabelFormat(QStringLiteral("%.0f"));
}

} // namespace fulcrum::ui
