#pragma once

#include "ui/views/iteration_window.h"

class QValueAxis;

namespace fulcrum::ui {

// An iteration axis over `span`: whole iterations at round steps (1, 2 or 5 × 10^k, about
// six ticks) anchored at 0, so the labels read 0, 50, 100 rather than 36.75, 73.5.
void set_iteration_axis(QValueAxis& axis, AxisSpan span);

} // namespace fulcrum::ui
