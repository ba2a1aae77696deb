#pragma once

#include "protocol/messages.h"
#include "serve/stream_hub.h"
#include "train/external_ranks.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fulcrum::daemon {

// An external job's ranks and the connections that hold them (fulcrum_torch clients). A
// rank's report-iteration is kept, unanswered, until the trainer's barrier sends every rank
// its plan. A rank is lost when its connection closes, or:
// - when its client sends heartbeats (fulcrum_torch sends one every second, whatever its
//   rank is doing) and has been silent for `worker_timeout_s` while fulcrumd waits for its
//   report, counted from its last plan: lost whether or not any rank reported;
// - when it has not reported `rank_timeout_s` after the plan it was sent (its ready report:
//   after its join, or the first rank's join for one not joined yet), or after the end of an
//   evaluation it announced (a heartbeat saying `evaluating`; while it says so, this timeout
//   does not run against it), unless it said (heartbeat `collective`) that it waits in the
//   all-reduce: then it waits for a late peer;
// - when its announced evaluation has lasted `evaluation_timeout_s` (a rank stuck in it
//   keeps heartbeating).
// A rank that has neither reported nor said (in its heartbeat) that it waits in its
// framework's collective some time after its plan is stalled: the trainer gives the limits.
// Thread-safe: the protocol handlers deliver, the job's thread gathers and answers.
class RankPool final : public train::ExternalRanks {
public:
    RankPool(JobId job, std::vector<std::string> ranks, double rank_timeout_s, double evaluation_timeout_s,
        double worker_timeout_s);

    // Takes rank `requested` (or the first free one) for `client`. Throws RefusedRequest:
    // not-a-rank, rank-taken, rank-lost (the job already lost it: a rank cannot come back
    // into a framework's process group).
    WorkerId join(
        const std::shared_ptr<serve::Client>& client, std::optional<WorkerId> requested, const std::string& host);
    // The client's connection closed: its rank is lost, unless the job is over.
    void leave(const serve::Client& client);
    // A rank's report, answered at the barrier (or at once when the job is over). Throws
    // RefusedRequest: not-joined (this connection holds another rank or none),
    // wrong-iteration.
    void report(const std::shared_ptr<serve::Client>& client, const protocol::ReportIteration& report);
    int joined() const;
    int ranks() const { return static_cast<int>(slots_.size()); }
    // The job lost a rank and goes on (external.max_restarts): every rank is free again, for
    // the restarted group's processes to join. The last attempt's connections hold nothing
    // now: a report of theirs is answered with that attempt's end (lost), their closing loses
    // no rank.
    void reopen();

    train::GatheredReports gather(
        std::int64_t iteration, const std::atomic<bool>* stop, const std::vector<double>& stall_limits_s) override;
    void answer(const train::RankPlan& plan) override;
    void finish(const train::RankPlan& plan) override;

private:
    using Clock = std::chrono::steady_clock;
    struct Slot {
        std::string name;
        std::shared_ptr<serve::Client> client;
        std::string host;
        bool lost = false;
        std::string lost_why;
        std::int64_t expected = -1; // the iteration this rank reports next
        std::optional<std::string> waiting; // the request id of its report, unanswered
        std::optional<train::RankReport> report;
        Clock::time_point answered_at {}; // its last plan was sent, or it joined
        bool stalled = false; // reported stalled since its last plan
    };

    void send_plan(Slot& slot, const train::RankPlan& plan); // with mutex_ held
    // Why the rank is lost for want of its report of `iteration` (past external.rank_timeout_s,
    // or evaluating past external.evaluation_timeout_s), or none; with mutex_ held and a first
    // report in.
    std::optional<std::string> late(const Slot& slot, std::int64_t iteration) const;
    // Its heartbeat says it waits in the all-reduce, said since its latest plan.
    static bool waits_in_collective(const Slot& slot);
    // Marks the ranks that heartbeat but have been silent past the worker timeout lost; with
    // mutex_ held. Returns their connections, to be closed with the reasons once it is not.
    std::vector<std::pair<std::shared_ptr<serve::Client>, std::string>> lose_silent_ranks();

    const JobId job_;
    const double timeout_s_;
    const double evaluation_timeout_s_;
    const double worker_timeout_s_;
    // A hand-off (IoPath): a report fills its rank's slot under it; a barrier's plans are
    // queued to the ranks' send queues under it.
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<Slot> slots_;
    std::optional<train::RankPlan> final_; // the job is over
    // The attempt a restart ended: its connections' ids (never reused) and its end, which a
    // report of theirs that comes late is answered with.
    std::vector<std::uint64_t> ended_attempt_;
    std::optional<train::RankPlan> ended_as_;
};

protocol::RankPlan to_message(const train::RankPlan& plan);

} // namespace fulcrum::daemon
