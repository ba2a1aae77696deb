#pragma once

#include <QString>
#include <cmath>

namespace fulcrum::ui {

// "42 s", "3 min 05 s", "2 h 07 min": for elapsed and remaining times.
inline QString duration_text(double seconds)
{
    if (!(seconds >= 0))
        return {};
    const long long s = std::llround(seconds);
    if (s < 60)
        return QStringLiteral("%1 s").arg(s);
    if (s < 3600)
        return QStringLiteral("%1 min %2 s").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60, 2, 10, QLatin1Char('0'));
}

} // namespace fulcrum::ui
