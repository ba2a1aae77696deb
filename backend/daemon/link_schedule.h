#pragma once

#include "common/records.h"
#include "daemon/wall_time.h"
#include "sched/cluster.h"
#include "sched/comm_policy.h"
#include "serve/io_path.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fulcrum::daemon {

class SharedVirtualClock;

// Live communication scheduling (Wang et al. §IV, the simulator's rules: sched/comm_policy.h):
// before each iteration's pushes and pulls, a virtual-mode barrier job asks whether its
// transfer may start on the links of its workers' servers (an asp or ssp worker asks before
// each batch's pull and push). One the policy admits starts at
// once, each worker's communication stretched by eq. 5 for the transfers then on its link;
// one it holds waits for the next transfer on its links to end and asks again then, when the
// shared clock lets the held jobs go in SRSF order (least remaining service first). A
// transfer's length is fixed when it starts: a job's barrier, once timed, is never revised,
// so of two transfers side by side (srsf-N with N > 1, ada-srsf) the later one is stretched
// and the earlier one is not. Times are the shared virtual clock's; paced jobs' transfers are
// decided apart, in wall time, since their clocks are not the shared one. Thread-safe.
class LinkSchedule {
public:
    // `policy`: "none" (no scheduling: jobs' transfers stretch by eq. 5 for the live jobs on
    // their links, fulcrumd's default) or a communication scheduler, srsf-N or ada-srsf.
    // Throws std::invalid_argument for another name.
    // `wall`: the paced transfers' time (null: the steady clock's); it outlives the schedule.
    LinkSchedule(sched::ClusterSpec cluster, const std::string& policy, WallTime* wall = nullptr);

    static constexpr const char* kNone = "none";
    // A worker whose pushes and pulls cross fulcrumd's own host's link rather than a cluster
    // server's: a remote worker (fulcrum-worker) of a real-mode job, whose parameter servers
    // run in fulcrumd. Every such transfer shares that one link.
    static constexpr int kDaemonHost = -2;
    void set_policy(const std::string& policy); // as the constructor; unchanged on a throw
    // Throws std::invalid_argument, saying what is expected, for a name the scheduler lacks.
    static void check_policy(const std::string& policy);
    std::string policy() const;
    bool scheduling() const; // a scheduler decides (the policy is not "none")

    struct Transfer {
        JobId job = 0;
        double bytes = 0; // the job's model: what each worker pulls and pushes
        std::vector<int> gpus; // per worker taking part: its cluster GPU (-1: crosses no link; kDaemonHost)
        std::vector<double> alone_s; // per worker: its pushes and pulls alone on its link
    };
    struct Decision {
        bool started = false;
        std::vector<double> stretch; // started: per worker, eq. 5's T(k) / T(1)
        double retry_at = 0; // held: when a transfer on its links ends
    };
    // At shared-clock time `at` (calls come in the clock's order).
    Decision try_start(const Transfer& transfer, double at);
    // A job's transfer at its own time `t` on the shared clock: asked at the daemon's time,
    // and while held the job waits on the clock for the end it was told and asks again, in
    // SRSF order among the jobs held there (`service`: its remaining compute times its GPUs).
    struct Scheduled {
        bool started = false; // false: `stop` was set while it waited
        double wait_s = 0; // on the job's clock
        std::vector<double> stretch; // per worker, as Decision's
        int asked = 0; // how many times it asked
    };
    Scheduled schedule(
        SharedVirtualClock& clock, const Transfer& transfer, double t, double service, const std::atomic<bool>* stop);
    // A paced job's transfer (`pace`: its run seconds per wall second, > 0), decided in wall
    // time among the paced and real-mode jobs' transfers (a real-mode job's pace is 1, its
    // transfer's length the one it last measured): asked now; while held the job's thread sleeps
    // until the end it was told and asks again. Of the transfers due to ask on a link, the one
    // with the least `service` asks first (SRSF, ties by job), whichever thread wakes first:
    // the others wait for it to have asked. Its wait is given on the job's clock.
    Scheduled schedule_paced(const Transfer& transfer, double pace, double service, const std::atomic<bool>* stop);
    // Transfers on each server's link at `at`, for a view of the links' load.
    std::vector<int> transfers_on_links(double at) const;

private:
    struct Running {
        JobId job = 0;
        std::vector<int> servers;
        double bytes = 0, start = 0, end = 0;
    };
    // A paced or real-mode transfer asking, or held until `due` (on `wall_`).
    struct Asking {
        std::uint64_t id = 0;
        JobId job = 0;
        std::vector<int> servers;
        double service = 0;
        double due = 0;
    };
    class LinksAt;
    // try_start on one timeline's transfers (with mutex_ held).
    Decision decide(std::vector<Running>& running, const Transfer& transfer, double at);
    static std::unique_ptr<sched::CommPolicy> make_policy(
        const std::string& policy, const sched::ContentionModel& link);
    std::optional<int> server_of(int gpu) const; // none for a worker off the cluster
    std::vector<int> servers_of(const std::vector<int>& gpus) const;

    const sched::ClusterSpec cluster_;
    mutable serve::StateMutex mutex_;
    std::string name_;
    std::unique_ptr<sched::CommPolicy> policy_; // null: none
    std::vector<Running> running_; // on the shared virtual clock
    std::vector<Running> paced_running_; // paced and real-mode jobs', in `wall_`'s seconds
    std::vector<Asking> paced_asking_; // their transfers not started yet
    std::condition_variable_any asked_; // one of them asked, or left
    std::uint64_t next_asking_ = 0;
    // A due transfer sharing a link with `a` comes before it in SRSF order (with mutex_ held).
    bool srsf_before_due(const Asking& a, double at) const;
    SteadyWallTime steady_;
    WallTime& wall_;
};

} // namespace fulcrum::daemon
