#pragma once

#include <QColor>

namespace fulcrum::ui {

// One colour per worker (and per job on the cluster map), the same in every view: golden-
// angle hues, so neighbours differ and 64 workers stay distinguishable.
inline QColor series_colour(int index)
{
    const int hue = static_cast<int>((static_cast<long long>(index) * 137) % 360);
    return QColor::fromHsv(hue, 170, index % 2 ? 200 : 235);
}

// The straggler timeline's segments.
inline QColor compute_colour()
{
    return QColor(0x3b, 0x7d, 0xd8);
}
inline QColor comm_colour()
{
    return QColor(0xf2, 0xa5, 0x3a);
}
inline QColor wait_colour()
{
    return QColor(0xd9, 0xd9, 0xd9);
}
inline QColor straggler_colour()
{
    return QColor(0xd6, 0x27, 0x28);
}

} // namespace fulcrum::ui
