#include "common/progress_bar.h"

#include <unistd.h>

namespace fulcrum {

ProgressBar::ProgressBar(std::FILE* stream)
    : stream_(stream)
    , interactive_(isatty(fileno(stream)) != 0)
    , start_(std::chrono::steady_clock::now())
{
}

void ProgressBar::status(const std::string& text)
{
    if (drawn_)
        std::fputc('\n', stream_);
    drawn_ = false;
    std::fprintf(stream_, "%s...\n", text.c_str());
    start_ = std::chrono::steady_clock::now();
    std::fflush(stream_);
}

void ProgressBar::update(double fraction, const std::string& detail)
{
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double eta = fraction > 0 ? elapsed * (1 - fraction) / fraction : 0;
    if (!interactive_) {
        const int decile = static_cast<int>(fraction * 10);
        if (decile == last_decile_)
            return;
        last_decile_ = decile;
        std::fprintf(stream_, "%3.0f%%  %s  eta %.0f s\n", fraction * 100, detail.c_str(), eta);
        std::fflush(stream_);
        return;
    }
    if (fraction < 1 && now - last_draw_ < std::chrono::milliseconds(100))
        return;
    last_draw_ = now;
    constexpr int kWidth = 30;
    std::string bar(static_cast<std::size_t>(fraction * kWidth), '#');
    bar.resize(kWidth, '.');
    std::fprintf(stream_, "\r[%s] %3.0f%%  %s  eta %.0fs   ", bar.c_str(), fraction * 100, detail.c_str(), eta);
    std::fflush(stream_);
    drawn_ = true;
}

void ProgressBar::finish()
{
    if (drawn_)
        std::fputc('\n', stream_);
    drawn_ = false;
    std::fflush(stream_);
}

} // namespace fulcrum
