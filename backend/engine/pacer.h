#pragma once

#include <atomic>
#include <chrono>

namespace fulcrum::engine {

// Paced mode: maps virtual time onto wall time at `speed` virtual seconds per wall second,
// so a person can watch a run live. A speed of 0 or less means "as fast as possible".
class Pacer {
public:
    explicit Pacer(double speed);

    // Sleeps until wall time has caught up with virtual time `t_s`, or `stop` is set.
    void wait_until(double t_s, const std::atomic<bool>* stop = nullptr);
    double wall_seconds() const;
    // The run clock now: wall seconds at `speed` (with speed 0, as fast as possible, 0).
    double now() const { return speed_ > 0 ? wall_seconds() * speed_ : 0; }
    // The wall-clock instant virtual time `t_s` is due (speed > 0).
    std::chrono::steady_clock::time_point due(double t_s) const;
    // The run was paused for `wall_s` seconds: virtual time resumes where it stopped instead
    // of racing to catch up.
    void shift(double wall_s);
    // A resumed run: virtual time `t_s` is now, so the run goes on at its pace from here.
    void start_at(double t_s);
    double speed() const { return speed_; }

private:
    double speed_;
    std::chrono::steady_clock::time_point start_;
};

} // namespace fulcrum::engine
