#pragma once

#include "common/records.h"
#include "serve/io_path.h"

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <optional>
#include <vector>

namespace fulcrum::daemon {

// One virtual clock for fulcrumd's virtual-mode jobs, so that their events happen in one
// order, the daemon's (a discrete-event simulation's conservative rule): a job that closed a
// barrier at its own virtual time t goes on only when no other live job can still have an
// earlier event, that is when every other job either waits at a later time or is computing
// from a later one. Jobs waiting at one instant go in the order of (priority, job id), and a
// decision at an instant (decide()) also waits for the jobs before it computing from there,
// so that decisions about what jobs share are made in that order.
// A job's first call (its trainer's start: run clock 0, or its checkpoint's time) is at the
// daemon's time when it was placed; a paused job holds
// no one up and, resumed, goes on from the daemon's time. Jobs that train alone run exactly
// as they would on their own clocks: the clock only orders, it never changes a time.
// Thread-safe.
class SharedVirtualClock {
public:
    // Called by a job's trainer thread after each barrier (or arrival) at its own virtual
    // time `t`. Returns when the job may go on, or when `stop` is set (the job then stops:
    // the clock does not move for it).
    void advance(JobId job, double t, const std::atomic<bool>* stop);
    // A decision the job makes at its own time `t` about what it shares with the other jobs
    // (the communication scheduler's, daemon/link_schedule.h): as advance(), then `decision`
    // runs with the daemon's time while no other job moves, so that jobs let go at one
    // instant decide in the order they were let go. `priority` orders the job among those
    // waiting at one instant, lower first (the scheduler's remaining service: held transfers
    // start in SRSF order); it stays the job's for its later waits. Returns false, deciding
    // nothing, when `stop` was set.
    bool decide(JobId job, double t, double priority, const std::atomic<bool>* stop,
        const std::function<void(double)>& decision);
    // A job placed to start: from the daemon's now until its first call no other job goes
    // past it, so that jobs placed together start together (its first call still happens
    // at the daemon's now). Returns that now: the job's start on the daemon's clock.
    double enter(JobId job);
    // The job ended (or restarts): no one waits for it. Returns the daemon time it was last
    // let go at (a finished job's end), or nothing for a job that never took part.
    std::optional<double> leave(JobId job);
    // The jobs of a workload (submit-workload), each arriving `after` seconds from the
    // daemon's now: from now on no job goes past an arrival until it has happened, so that
    // each is queued and placed at its moment whatever the wall clock does meanwhile.
    // Returns that now (the workload's time 0).
    struct Arrival {
        JobId job = 0;
        double after = 0;
    };
    double expect(const std::vector<Arrival>& arrivals);
    // Waits until the earliest expected job may arrive (no job can still have an earlier
    // event), moves the daemon's clock to its time and returns it; nothing when `stop` was
    // set. The arrived job then computes from its time, holding the others there, until it
    // is placed (enter) or, left waiting in the queue, leaves.
    std::optional<JobId> next_arrival(const std::atomic<bool>* stop);
    // The job is paused: no one waits for it until it resumes.
    void suspend(JobId job);
    void resume(JobId job);
    double now() const; // the latest time a job was let go at
    // The daemon time the job was last let go at (a job that ended: its end); nothing for a
    // job that takes no part.
    std::optional<double> last_time(JobId job) const;

private:
    struct Participant {
        double offset = 0; // daemon time = offset + the job's own time
        double last = 0; // daemon time it was last let go at (it computes from there)
        std::optional<double> waiting; // daemon time it waits at
        bool suspended = false;
        bool rebase = false; // resumed: its next time is the daemon's now
        bool entered = false; // entered: its first call sets its offset
        double priority = 0; // ties at one instant: lower first (then the lower job id)
        bool expected = false; // a workload's job, not arrived yet: it waits at its arrival
    };
    Participant& join(JobId job, double t); // with mutex_ held
    // Waits until the job may go on at daemon time `at` (false: stopping), with `lock` held.
    bool wait_to_go(std::unique_lock<serve::StateMutex>& lock, JobId job, Participant& p, double at, bool deciding,
        const std::atomic<bool>* stop);
    bool may_go(JobId job, double at, bool deciding) const; // with mutex_ held

    mutable serve::StateMutex mutex_;
    std::condition_variable_any changed_;
    std::map<JobId, Participant> participants_;
    double now_ = 0;
};

} // namespace fulcrum::daemon
