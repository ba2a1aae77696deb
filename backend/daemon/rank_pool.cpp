#include "daemon/rank_pool.h"

#include "common/error.h"
#include "serve/replies.h"

#include <algorithm>
#include <sstream>

namespace fulcrum::daemon {

using serve::Client;
using serve::ok;

namespace {

// A rank whose client has sent a heartbeat (fulcrum_torch, protocol 3) sends one every
// second: its silence means a stopped or hung process. A client that sends none is timed by
// rank_timeout_s alone.
bool heartbeats(const auto& slot)
{
    return slot.client && slot.client->sends_heartbeats();
}

} // namespace

protocol::RankPlan to_message(const train::RankPlan& plan)
{
    return protocol::RankPlan { std::string(train::to_string(plan.state)), plan.iteration, plan.batch_sizes,
        plan.slowdowns, plan.message, plan.ahead };
}

RankPool::RankPool(JobId job, std::vector<std::string> ranks, double rank_timeout_s, double evaluation_timeout_s,
    double worker_timeout_s)
    : job_(job)
    , timeout_s_(rank_timeout_s)
    , evaluation_timeout_s_(evaluation_timeout_s)
    , worker_timeout_s_(worker_timeout_s)
{
    for (std::string& name : ranks) {
        Slot slot;
        slot.name = std::move(name);
        slots_.push_back(std::move(slot));
    }
}

WorkerId RankPool::join(
    const std::shared_ptr<Client>& client, std::optional<WorkerId> requested, const std::string& host)
{
    WorkerId chosen = -1;
    {
        std::lock_guard lock(mutex_);
        const std::string job = "job " + std::to_string(job_);
        if (requested) {
            if (*requested < 0 || static_cast<std::size_t>(*requested) >= slots_.size())
                throw RefusedRequest("not-a-rank",
                    job + " has ranks 0 to " + std::to_string(slots_.size() - 1) + ", not "
                        + std::to_string(*requested));
            chosen = *requested;
        } else {
            for (std::size_t i = 0; i < slots_.size() && chosen < 0; ++i)
                if (!slots_[i].client && !slots_[i].lost)
                    chosen = static_cast<WorkerId>(i);
            if (chosen < 0)
                throw RefusedRequest("rank-taken", "every rank of " + job + " is taken");
        }
        Slot& slot = slots_[static_cast<std::size_t>(chosen)];
        if (slot.lost)
            throw RefusedRequest("rank-lost",
                "rank " + std::to_string(chosen) + " of " + job + " was lost (" + slot.lost_why
                    + "); a framework's process group cannot take it back: with external.max_restarts its "
                      "restarted group joins again, else submit the job again");
        if (final_ && final_->state == train::RankPlan::State::Lost) // until a restart opens the ranks again
            throw RefusedRequest("rank-lost", job + " lost a rank (" + final_->message + "); its ranks are closed");
        if (slot.client)
            throw RefusedRequest(
                "rank-taken", "rank " + std::to_string(chosen) + " of " + job + " is already held (" + slot.host + ")");
        slot.client = client;
        slot.host = host;
        slot.answered_at = Clock::now(); // its ready report is due from its join
    }
    changed_.notify_all();
    return chosen;
}

void RankPool::leave(const Client& client)
{
    {
        std::lock_guard lock(mutex_);
        for (Slot& slot : slots_)
            if (slot.client.get() == &client) {
                slot.client.reset();
                slot.waiting.reset();
                if (!final_) {
                    slot.lost = true;
                    slot.lost_why = "its connection (" + slot.host + ") closed";
                }
            }
    }
    changed_.notify_all();
}

void RankPool::reopen()
{
    {
        std::lock_guard lock(mutex_);
        ended_attempt_.clear();
        for (Slot& slot : slots_) {
            if (slot.client)
                ended_attempt_.push_back(slot.client->id());
            Slot fresh;
            fresh.name = std::move(slot.name);
            slot = std::move(fresh);
        }
        ended_as_ = std::move(final_);
        final_.reset();
    }
    changed_.notify_all();
}

int RankPool::joined() const
{
    std::lock_guard lock(mutex_);
    return static_cast<int>(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.client; }));
}

void RankPool::report(const std::shared_ptr<Client>& client, const protocol::ReportIteration& r)
{
    {
        std::lock_guard lock(mutex_);
        if (r.rank >= 0 && static_cast<std::size_t>(r.rank) < slots_.size()
            && slots_[static_cast<std::size_t>(r.rank)].lost)
            throw RefusedRequest("rank-lost",
                "rank " + std::to_string(r.rank) + " of job " + std::to_string(job_) + " was lost ("
                    + slots_[static_cast<std::size_t>(r.rank)].lost_why + ")");
        // A survivor of the attempt a restart ended, whose report came after: how that ended.
        if (ended_as_
            && std::find(ended_attempt_.begin(), ended_attempt_.end(), client->id()) != ended_attempt_.end()) {
            protocol::Reply reply = ok(r.id, job_);
            reply.plan = to_message(*ended_as_);
            client->send(reply);
            return;
        }
        if (r.rank < 0 || static_cast<std::size_t>(r.rank) >= slots_.size()
            || slots_[static_cast<std::size_t>(r.rank)].client != client)
            throw RefusedRequest("not-joined",
                "this connection does not hold rank " + std::to_string(r.rank) + " of job " + std::to_string(job_)
                    + "; send join-job with \"worker\": " + std::to_string(r.rank) + " first");
        Slot& slot = slots_[static_cast<std::size_t>(r.rank)];
        if (final_) {
            slot.waiting = r.id;
            send_plan(slot, *final_);
            return;
        }
        if (slot.waiting || r.iteration != slot.expected)
            throw RefusedRequest("wrong-iteration",
                "rank " + std::to_string(r.rank) + " reported iteration " + std::to_string(r.iteration)
                    + (slot.waiting ? " while its report of iteration " + std::to_string(slot.expected) + " waits"
                                    : "; fulcrumd expects iteration " + std::to_string(slot.expected)));
        train::RankReport report;
        report.iteration = r.iteration;
        report.resume_from = r.resume_from;
        report.batch_size = r.batch_size;
        report.compute_s = r.compute_s;
        report.sync_s = r.sync_s;
        report.cpu_share = r.cpu_share;
        report.memory_share = r.memory_share;
        report.gpu_memory_gb = r.gpu_memory_gb;
        report.loss = r.loss;
        report.test_accuracy = r.test_accuracy;
        report.test_loss = r.test_loss;
        slot.report = report;
        slot.waiting = r.id;
    }
    changed_.notify_all();
}

train::GatheredReports RankPool::gather(
    std::int64_t iteration, const std::atomic<bool>* stop, const std::vector<double>& stall_limits_s)
{
    std::unique_lock lock(mutex_);
    train::GatheredReports out;
    for (;;) {
        if (stop && stop->load()) {
            out.stopped = true;
            return out;
        }
        if (auto closing = lose_silent_ranks(); !closing.empty()) {
            lock.unlock(); // a connection's closer is not called with the pool locked
            for (const auto& [client, reason] : closing)
                client->close_for(reason);
            lock.lock();
        }
        bool all = true;
        for (std::size_t i = 0; i < slots_.size(); ++i) {
            const Slot& s = slots_[i];
            if (s.lost) {
                out.lost.push_back(static_cast<WorkerId>(i));
                out.lost_why = s.lost_why;
            }
            all = all && s.waiting && s.report && s.report->iteration == iteration;
        }
        if (!out.lost.empty())
            return out;
        if (all)
            break;
        const Clock::time_point now = Clock::now();
        for (std::size_t i = 0; i < slots_.size() && i < stall_limits_s.size(); ++i) {
            Slot& s = slots_[i];
            const double since_plan = std::chrono::duration<double>(now - s.answered_at).count();
            if (s.stalled || stall_limits_s[i] <= 0 || (s.report && s.report->iteration == iteration) || !s.client
                || waits_in_collective(s) || s.client->evaluating() || since_plan < stall_limits_s[i])
                continue;
            s.stalled = true;
            out.stalled.emplace_back(static_cast<WorkerId>(i), since_plan);
        }
        if (!out.stalled.empty())
            return out;
        for (std::size_t i = 0; i < slots_.size(); ++i)
            if (std::optional<std::string> why = late(slots_[i], iteration)) {
                slots_[i].lost = true;
                slots_[i].lost_why = *why;
                out.lost.push_back(static_cast<WorkerId>(i));
                out.lost_why = std::move(*why);
            }
        if (!out.lost.empty())
            return out;
        changed_.wait_for(lock, std::chrono::milliseconds(50));
    }
    for (Slot& s : slots_)
        out.reports.push_back(*s.report);
    return out;
}

std::vector<std::pair<std::shared_ptr<Client>, std::string>> RankPool::lose_silent_ranks()
{
    std::vector<std::pair<std::shared_ptr<Client>, std::string>> closing;
    const auto timeout = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(worker_timeout_s_));
    for (std::size_t i = 0; i < slots_.size(); ++i) {
        Slot& slot = slots_[i];
        // A rank whose report waits for its plan is waiting for fulcrumd, not silent; its
        // silence counts from the plan it was sent.
        if (slot.lost || slot.waiting || !heartbeats(slot)
            || Clock::now() - std::max(slot.client->last_heard(), slot.answered_at) < timeout)
            continue;
        std::ostringstream why;
        why << "silent for " << worker_timeout_s_ << " s (no report or heartbeat: stopped, hung or cut off)";
        slot.lost = true;
        slot.lost_why = why.str();
        closing.emplace_back(std::move(slot.client),
            "rank " + std::to_string(i) + " of job " + std::to_string(job_) + " was " + slot.lost_why);
        slot.client.reset();
        slot.waiting.reset();
    }
    return closing;
}

bool RankPool::waits_in_collective(const Slot& slot)
{
    // Said since its latest plan: one said before it is the last iteration's.
    return slot.client && slot.client->in_collective() && slot.client->collective_since() >= slot.answered_at;
}

std::optional<std::string> RankPool::late(const Slot& slot, std::int64_t iteration) const
{
    if (slot.report && slot.report->iteration == iteration)
        return std::nullopt;
    // One that waits in the all-reduce has done its batch: it waits for the late one.
    if (waits_in_collective(slot))
        return std::nullopt;
    const auto past = [now = Clock::now()](Clock::time_point since, double limit_s) {
        return now - since > std::chrono::duration<double>(limit_s);
    };
    std::ostringstream why;
    // From the plan this rank was sent (issue 43 item 3): a rank stalled before its
    // all-reduce holds every other rank's report back, so no other rank's report may start
    // its clock. An announced evaluation holds the report back by design: the rank timeout
    // then runs from the evaluation's end, and the evaluation itself has a limit of its own
    // (its heartbeats go on if it hangs).
    Clock::time_point since = slot.answered_at;
    if (!slot.client) { // not joined yet: due from the first rank's join (a lost one is marked so)
        since = Clock::time_point::max();
        for (const Slot& s : slots_)
            if (s.client)
                since = std::min(since, s.answered_at);
        if (since == Clock::time_point::max())
            return std::nullopt;
    }
    bool after_evaluation = false;
    if (heartbeats(slot)) {
        if (slot.client->evaluating()) {
            if (!past(slot.client->evaluating_since(), evaluation_timeout_s_))
                return std::nullopt;
            why << "evaluated for more than " << evaluation_timeout_s_ << " s before reporting iteration " << iteration
                << " (external.evaluation_timeout_s)";
            return why.str();
        }
        after_evaluation = slot.client->evaluated_at() > since;
        since = std::max(since, slot.client->evaluated_at());
    }
    if (!past(since, timeout_s_))
        return std::nullopt;
    why << "did not report iteration " << iteration << " within " << timeout_s_ << " s of "
        << (after_evaluation ? "the end of its evaluation" : "its plan") << " (external.rank_timeout_s)";
    return why.str();
}

void RankPool::send_plan(Slot& slot, const train::RankPlan& plan)
{
    if (!slot.waiting || !slot.client)
        return;
    protocol::Reply reply = ok(*slot.waiting, job_);
    reply.plan = to_message(plan);
    slot.client->send(reply);
    slot.answered_at = Clock::now();
    slot.stalled = false;
    slot.waiting.reset();
    slot.report.reset();
}

void RankPool::answer(const train::RankPlan& plan)
{
    std::lock_guard lock(mutex_);
    for (Slot& slot : slots_) {
        slot.expected = plan.iteration;
        send_plan(slot, plan);
    }
}

void RankPool::finish(const train::RankPlan& plan)
{
    {
        std::lock_guard lock(mutex_);
        if (final_)
            return; // the first ending stands
        final_ = plan;
        for (Slot& slot : slots_)
            send_plan(slot, plan);
    }
    changed_.notify_all();
}

} // namespace fulcrum::daemon
