#pragma once

#include <atomic>
#include <chrono>

namespace fulcrum::daemon {

// The wall time that paced and real-mode jobs' transfers are decided in (LinkSchedule::
// schedule_paced): seconds since it was made, and a sleep until such an instant. fulcrumd's
// is the steady clock; a test gives one that moves only when the test moves it, so that the
// order held transfers start in is decided with no sleep and no race on the machine's speed.
class WallTime {
public:
    virtual ~WallTime() = default;
    virtual double now_s() const = 0;
    // Returns true at `until`, false as soon as `stop` is set (when given) before it.
    virtual bool sleep_until(double until, const std::atomic<bool>* stop) = 0;
};

class SteadyWallTime final : public WallTime {
public:
    double now_s() const override;
    bool sleep_until(double until, const std::atomic<bool>* stop) override;

private:
    const std::chrono::steady_clock::time_point epoch_ = std::chrono::steady_clock::now();
};

} // namespace fulcrum::daemon
