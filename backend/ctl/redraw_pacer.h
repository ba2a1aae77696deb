#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace fulcrum::ctl {

// When `fulcrumctl watch` redraws its table (issue 44 item 7): only when the text changed,
// at most once every `interval` (2 Hz by default), and a change held back by the rate is
// drawn once the interval has passed, even if nothing else arrives meanwhile (watch waits
// for the next message only until next_due()). Time is the caller's, so tests drive it.
class RedrawPacer {
public:
    using Clock = std::chrono::steady_clock;
    explicit RedrawPacer(Clock::duration interval)
        : interval_(interval)
    {
    }

    // The table as it reads `now`: true when it is to be drawn now (then it counts as drawn).
    // `force` (the job ended) draws a change at once, whatever the rate.
    bool offer(Clock::time_point now, const std::string& text, bool force = false);
    // When a change held back is due to be drawn; none when nothing waits.
    std::optional<Clock::time_point> next_due() const;

private:
    Clock::duration interval_;
    std::optional<std::string> drawn_;
    std::optional<Clock::time_point> drawn_at_;
    bool pending_ = false;
};

} // namespace fulcrum::ctl
