#include "run/terminal_progress.h"

#include <string>
#include <unistd.h>

namespace fulcrum::run {

TerminalProgress::TerminalProgress(std::FILE* stream)
    : stream_(stream)
    , interactive_(isatty(fileno(stream)) != 0)
    , start_(std::chrono::steady_clock::now())
{
}

void TerminalProgress::status(const std::string& text)
{
    if (drawn_)
        std::fputc('\n', stream_);
    drawn_ = false;
    std::fprintf(stream_, "%s...\n", text.c_str());
    start_ = std::chrono::steady_clock::now(); // the ETA measures training, not data loading
    std::fflush(stream_);
}

void TerminalProgress::update(const Progress& p)
{
    const auto now = std::chrono::steady_clock::now();
    const double fraction = p.iterations > 0 ? static_cast<double>(p.iteration) / static_cast<double>(p.iterations) : 0;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double eta = fraction > 0 ? elapsed * (1 - fraction) / fraction : 0;
    char accuracy[32] = "  -   ";
    if (p.accuracy)
        std::snprintf(accuracy, sizeof accuracy, "%.4f", *p.accuracy);

    if (!interactive_) {
        const int decile = static_cast<int>(fraction * 10);
        if (decile == last_decile_)
            return;
        last_decile_ = decile;
        std::fprintf(stream_, "%3.0f%%  iteration %lld/%lld  epoch %.2f  run clock %.1f s  test accuracy %s  eta %.0f s\n",
            fraction * 100, static_cast<long long>(p.iteration), static_cast<long long>(p.iterations), p.epoch, p.time_s,
            accuracy, eta);
        std::fflush(stream_);
        return;
    }
    if (p.iteration != p.iterations && now - last_draw_ < std::chrono::milliseconds(100))
        return;
    last_draw_ = now;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(fraction * kWidth);
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.resize(kWidth, '.');
    std::fprintf(stream_, "\r[%s] %3.0f%%  it %lld/%lld  epoch %.2f  clock %.1fs  acc %s  eta %.0fs   ", bar.c_str(),
        fraction * 100, static_cast<long long>(p.iteration), static_cast<long long>(p.iterations), p.epoch, p.time_s,
        accuracy, eta);
    std::fflush(stream_);
    drawn_ = true;
}

void TerminalProgress::finish()
{
    if (drawn_)
        std::fputc('\n', stream_);
    drawn_ = false;
    std::fflush(stream_);
}

} // namespace fulcrum::run
