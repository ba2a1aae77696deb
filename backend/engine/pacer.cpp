#include "engine/pacer.h"

#include <algorithm>
#include <thread>

namespace fulcrum::engine {

Pacer::Pacer(double speed)
    : speed_(speed)
    , start_(std::chrono::steady_clock::now())
{
}

double Pacer::wall_seconds() const
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::chrono::steady_clock::time_point Pacer::due(double t_s) const
{
    return start_
        + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(t_s / speed_));
}

void Pacer::shift(double wall_s)
{
    start_ += std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(wall_s));
}

void Pacer::wait_until(double t_s, const std::atomic<bool>* stop)
{
    if (speed_ <= 0)
        return;
    const double target = t_s / speed_;
    // Sleep in short slices so a stop request is honoured promptly.
    for (double remaining = target - wall_seconds(); remaining > 0; remaining = target - wall_seconds()) {
        if (stop && stop->load(std::memory_order_relaxed))
            return;
        std::this_thread::sleep_for(std::chrono::duration<double>(std::min(remaining, 0.05)));
    }
}

void Pacer::start_at(double t_s)
{
    if (speed_ > 0)
        start_ = std::chrono::steady_clock::now()
            - std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                std::chrono::duration<double>(t_s / speed_));
}

} // namespace fulcrum::engine
