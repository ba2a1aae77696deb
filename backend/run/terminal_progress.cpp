#include "run/terminal_progress.h"

#include <string>

namespace fulcrum::run {

void TerminalProgress::update(const Progress& p)
{
    const double fraction = p.iterations > 0 ? static_cast<double>(p.iteration) / static_cast<double>(p.iterations) : 0;
    char accuracy[32] = "  -   ";
    if (p.accuracy)
        std::snprintf(accuracy, sizeof accuracy, "%.4f", *p.accuracy);
    char detail[160];
    std::snprintf(detail, sizeof detail, "iteration %lld/%lld  epoch %.2f  clock %.1f s  test accuracy %s",
        static_cast<long long>(p.iteration), static_cast<long long>(p.iterations), p.epoch, p.time_s, accuracy);
    bar_.update(fraction, detail);
}

} // namespace fulcrum::run
