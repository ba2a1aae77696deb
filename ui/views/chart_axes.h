#pragma once

#include "ui/views/iteration_window.h"

#include <QString>

class QValueAxis;

namespace fulcrum::ui {

// An iteration axis over `span`: whole iterations at round steps (1, 2 or 5 × 10^k, about
// six ticks) anchored at 0, so the labels read 0, 50, 100 rather than 36.75, 73.5.
void set_iteration_axis(QValueAxis& axis, AxisSpan span);

// A value axis from 0 to past `max`, at a round step (1, 2 or 5 × 10^k, about five ticks)
// and ending on one, its labels with as many decimals as the step needs and `suffix`:
// 0, 0.01 ... 0.04 s rather than 0.0373; with `whole`, whole steps only, so a batch of 4
// sits on a tick of 4.
void set_value_axis(QValueAxis& axis, double max, bool whole, const QString& suffix = {});

// A time axis over [from, to] exactly, ticks at a round step (1, 2 or 5 × 10^k seconds,
// five to ten ticks) anchored at 0, labelled with as many decimals as the step needs: 0, 20
// ... 100 s over 104.5 s, rather than 26.1 and 52.2.
void set_time_axis(QValueAxis& axis, double from, double to);

} // namespace fulcrum::ui
