#include "daemon/shared_clock.h"

#include <algorithm>
#include <chrono>

namespace fulcrum::daemon {

bool SharedVirtualClock::may_go(JobId job, double at) const
{
    for (const auto& [id, p] : participants_) {
        if (id == job || p.suspended)
            continue;
        if (p.waiting) {
            if (*p.waiting < at || (*p.waiting == at && id < job))
                return false;
        } else if (p.last < at) {
            return false; // computing: its next event may come before `at`
        }
    }
    return true;
}

void SharedVirtualClock::advance(JobId job, double t, const std::atomic<bool>* stop)
{
    std::unique_lock lock(mutex_);
    auto [it, joined] = participants_.try_emplace(job);
    Participant& p = it->second;
    if (joined || p.rebase) {
        // Its first barrier (or the first after a pause) happens at the daemon's now.
        p.offset = std::max(joined ? now_ - t : p.offset, now_ - t);
        p.rebase = false;
    }
    const double at = p.offset + t;
    p.waiting = at;
    changed_.notify_all();
    // A stop request is a plain flag: look at it now and then.
    const auto stopping = [stop] { return stop && stop->load(std::memory_order_relaxed); };
    while (!may_go(job, at) && !stopping())
        changed_.wait_for(lock, std::chrono::milliseconds(20));
    p.waiting.reset();
    if (!may_go(job, at)) { // stopping: it goes nowhere, and leaves at its end
        changed_.notify_all();
        return;
    }
    p.last = at;
    now_ = std::max(now_, at);
    changed_.notify_all();
}

void SharedVirtualClock::leave(JobId job)
{
    std::lock_guard lock(mutex_);
    participants_.erase(job);
    changed_.notify_all();
}

void SharedVirtualClock::suspend(JobId job)
{
    std::lock_guard lock(mutex_);
    if (const auto it = participants_.find(job); it != participants_.end())
        it->second.suspended = true;
    changed_.notify_all();
}

void SharedVirtualClock::resume(JobId job)
{
    std::lock_guard lock(mutex_);
    if (const auto it = participants_.find(job); it != participants_.end()) {
        it->second.suspended = false;
        it->second.rebase = true;
        it->second.last = std::max(it->second.last, now_); // computing from the daemon's now
    }
    changed_.notify_all();
}

double SharedVirtualClock::now() const
{
    std::lock_guard lock(mutex_);
    return now_;
}

} // namespace fulcrum::daemon
