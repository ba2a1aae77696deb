#include "ctl/redraw_pacer.h"

namespace fulcrum::ctl {

bool RedrawPacer::offer(Clock::time_point now, const std::string& text, bool force)
{
    if (drawn_ && *drawn_ == text) {
        pending_ = false; // changed and changed back: nothing to draw
        return false;
    }
    if (!force && drawn_at_ && now - *drawn_at_ < interval_) {
        pending_ = true;
        return false;
    }
    drawn_ = text;
    drawn_at_ = now;
    pending_ = false;
    return true;
}

std::optional<RedrawPacer::Clock::time_point> RedrawPacer::next_due() const
{
    if (!pending_ || !drawn_at_)
        return std::nullopt;
    return *drawn_at_ + interval_;
}

} // namespace fulcrum::ctl
