#pragma once

#include "common/records.h"

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>

namespace fulcrum::daemon {

// One virtual clock for fulcrumd's virtual-mode jobs, so that their events happen in one
// order, the daemon's (a discrete-event simulation's conservative rule): a job that closed a
// barrier at its own virtual time t goes on only when no other live job can still have an
// earlier event, that is when every other job either waits at a later time (ties go to the
// lower job id) or is computing from a later one. A job's time 0 is the daemon's time when
// it reached its first barrier; a paused job holds no one up and, resumed, goes on from the
// daemon's time. Jobs that train alone run exactly as they would on their own clocks: the
// clock only orders, it never changes a time. Thread-safe.
class SharedVirtualClock {
public:
    // Called by a job's trainer thread after each barrier (or arrival) at its own virtual
    // time `t`. Returns when the job may go on, or when `stop` is set (the job then stops:
    // the clock does not move for it).
    void advance(JobId job, double t, const std::atomic<bool>* stop);
    // The job ended (or restarts): no one waits for it.
    void leave(JobId job);
    // The job is paused: no one waits for it until it resumes.
    void suspend(JobId job);
    void resume(JobId job);
    double now() const; // the latest time a job was let go at

private:
    struct Participant {
        double offset = 0; // daemon time = offset + the job's own time
        double last = 0; // daemon time it was last let go at (it computes from there)
        std::optional<double> waiting; // daemon time it waits at
        bool suspended = false;
        bool rebase = false; // resumed: its next time is the daemon's now
    };
    bool may_go(JobId job, double at) const; // with mutex_ held

    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::map<JobId, Participant> participants_;
    double now_ = 0;
};

} // namespace fulcrum::daemon
