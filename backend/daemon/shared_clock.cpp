#include "daemon/shared_clock.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace fulcrum::daemon {

using serve::StateMutex;

bool SharedVirtualClock::may_go(JobId job, double at, bool deciding) const
{
    const auto mine = std::pair(participants_.at(job).priority, job);
    for (const auto& [id, p] : participants_) {
        if (id == job || p.suspended)
            continue;
        const bool before_me = std::pair(p.priority, id) < mine; // at one instant
        if (p.waiting) {
            if (*p.waiting < at || (*p.waiting == at && before_me))
                return false;
        } else if (p.last < at || (deciding && p.last == at && before_me)) {
            // Computing: its next event may come before `at` (or, for a decision, at `at`
            // itself, which it must make first).
            return false;
        }
    }
    return true;
}

SharedVirtualClock::Participant& SharedVirtualClock::join(JobId job, double t)
{
    auto [it, joined] = participants_.try_emplace(job);
    Participant& p = it->second;
    // Its first call (or the first after a pause) happens at the daemon's now.
    if (joined || p.entered) {
        p.offset = now_ - t;
        p.entered = false;
        p.rebase = false;
        if (joined)
            p.last = p.offset + t;
    } else if (p.rebase) {
        p.offset = std::max(p.offset, now_ - t);
        p.rebase = false;
    }
    return p;
}

bool SharedVirtualClock::wait_to_go(std::unique_lock<StateMutex>& lock, JobId job, Participant& p, double at,
    bool deciding, const std::atomic<bool>* stop)
{
    p.waiting = at;
    changed_.notify_all();
    // A stop request is a plain flag: look at it now and then.
    const auto stopping = [stop] { return stop && stop->load(std::memory_order_relaxed); };
    while (!may_go(job, at, deciding) && !stopping())
        changed_.wait_for(lock, std::chrono::milliseconds(20));
    p.waiting.reset();
    if (!may_go(job, at, deciding)) { // stopping: it goes nowhere, and leaves at its end
        changed_.notify_all();
        return false;
    }
    p.last = at;
    now_ = std::max(now_, at);
    return true;
}

void SharedVirtualClock::advance(JobId job, double t, const std::atomic<bool>* stop)
{
    std::unique_lock lock(mutex_);
    Participant& p = join(job, t);
    wait_to_go(lock, job, p, p.offset + t, false, stop);
    changed_.notify_all();
}

bool SharedVirtualClock::decide(
    JobId job, double t, double priority, const std::atomic<bool>* stop, const std::function<void(double)>& decision)
{
    std::unique_lock lock(mutex_);
    Participant& p = join(job, t);
    p.priority = priority;
    const double at = p.offset + t;
    if (!wait_to_go(lock, job, p, at, true, stop))
        return false;
    decision(at);
    changed_.notify_all();
    return true;
}

double SharedVirtualClock::enter(JobId job)
{
    std::lock_guard lock(mutex_);
    Participant& p = participants_[job];
    p.entered = true;
    p.expected = false;
    p.waiting.reset();
    p.last = now_;
    changed_.notify_all();
    return now_;
}

std::optional<double> SharedVirtualClock::leave(JobId job)
{
    std::lock_guard lock(mutex_);
    const auto it = participants_.find(job);
    if (it == participants_.end())
        return std::nullopt;
    const double last = it->second.last;
    participants_.erase(it);
    changed_.notify_all();
    return last;
}

double SharedVirtualClock::expect(const std::vector<Arrival>& arrivals)
{
    std::lock_guard lock(mutex_);
    for (const Arrival& a : arrivals) {
        Participant& p = participants_[a.job];
        p.expected = true;
        p.waiting = now_ + std::max(0.0, a.after);
        p.last = *p.waiting;
    }
    changed_.notify_all();
    return now_;
}

std::optional<JobId> SharedVirtualClock::next_arrival(const std::atomic<bool>* stop)
{
    std::unique_lock lock(mutex_);
    const auto stopping = [stop] { return stop && stop->load(std::memory_order_relaxed); };
    while (!stopping()) {
        // The earliest expected job, lowest id first at one instant, as may_go orders them.
        std::optional<std::pair<double, JobId>> first;
        for (const auto& [id, p] : participants_)
            if (p.expected && (!first || std::pair(*p.waiting, id) < *first))
                first = std::pair(*p.waiting, id);
        if (first && may_go(first->second, first->first, false)) {
            Participant& p = participants_.at(first->second);
            p.expected = false;
            p.waiting.reset();
            p.last = first->first;
            now_ = std::max(now_, first->first);
            changed_.notify_all();
            return first->second;
        }
        changed_.wait_for(lock, std::chrono::milliseconds(20));
    }
    return std::nullopt;
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

std::optional<double> SharedVirtualClock::last_time(JobId job) const
{
    std::lock_guard lock(mutex_);
    const auto it = participants_.find(job);
    return it == participants_.end() ? std::nullopt : std::optional(it->second.last);
}

double SharedVirtualClock::now() const
{
    std::lock_guard lock(mutex_);
    return now_;
}

} // namespace fulcrum::daemon
