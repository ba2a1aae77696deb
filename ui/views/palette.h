#pragma once

#include <QColor>

namespace fulcrum::ui {

// One colour per worker (and per job on the cluster map), the same in every view. The first
// sixteen are a fixed qualitative set, Tableau's ten and the six web colours farthest from
// them and from each other, at least 56 apart in RGB (the golden-angle hues used before
// came within 25 of each other among sixteen); beyond sixteen, golden-angle hues.
inline QColor series_colour(int index)
{
    static constexpr unsigned kDistinct[16] = { 0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f, 0xedc948, 0xb07aa1,
        0xff9da7, 0x9c755f, 0xbab0ac, 0xff00ff, 0x800000, 0x000080, 0x00fa9a, 0x006400, 0x8b008b };
    if (index >= 0 && index < 16)
        return QColor(QRgb(kDistinct[index]));
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
