#include "ui/views/iteration_window.h"

#include <algorithm>
#include <cmath>

namespace fulcrum::ui {

void IterationWindow::set_data_range(std::int64_t first, std::int64_t last)
{
    if (first == data_first_ && last == data_last_)
        return;
    data_first_ = first;
    data_last_ = std::max(first, last);
    emit changed();
}

void IterationWindow::show(std::int64_t first, std::int64_t last)
{
    if (last < first)
        std::swap(first, last);
    const std::int64_t span = std::max<std::int64_t>(last - first, 4);
    first_ = first;
    last_ = first + span;
    following_ = false;
    emit changed();
}

void IterationWindow::zoom(double factor, std::int64_t anchor)
{
    const std::int64_t a = first(), b = last();
    const double span = std::max(4.0, static_cast<double>(b - a) * factor);
    const double at = b > a ? static_cast<double>(anchor - a) / static_cast<double>(b - a) : 0.5;
    const auto from = static_cast<std::int64_t>(std::llround(static_cast<double>(anchor) - at * span));
    show(from, from + static_cast<std::int64_t>(std::llround(span)));
}

void IterationWindow::pan(std::int64_t iterations)
{
    show(first() + iterations, last() + iterations);
}

void IterationWindow::centre_on(std::int64_t iteration)
{
    const std::int64_t half = std::max<std::int64_t>((last() - first()) / 2, 10);
    show(iteration - half, iteration + half);
}

void IterationWindow::follow()
{
    following_ = true;
    emit changed();
}

void IterationWindow::follow_anew()
{
    ++epoch_;
    follow();
}

AxisSpan follow_span(AxisSpan shown, double first, double last)
{
    constexpr double kRoom = 0.05;
    const double span = shown.to - shown.from;
    if (span > 0 && first >= shown.from && first - shown.from <= kRoom * span && last <= shown.to)
        return shown;
    return { first, last + std::max(kRoom * (last - first), 1e-9) };
}

} // namespace fulcrum::ui
