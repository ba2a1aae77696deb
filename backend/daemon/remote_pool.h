#pragma once

#include "protocol/messages.h"
#include "protocol/worker_frames.h"
#include "serve/stream_hub.h"
#include "train/remote_workers.h"

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace fulcrum::daemon {

// A job's remote worker slots and the fulcrum-worker connections that fill them. The
// trainer's pool threads send tasks through it and wait for the results; the WebSocket
// session delivers result frames to it; a disconnect wakes the waiting thread, which
// reports the worker lost, and so does a worker that sent nothing, heartbeats included,
// for `worker_timeout_s` (its connection is then closed, saying why). Workers of protocol
// versions before kHeartbeatVersion send no heartbeats and are not timed. Thread-safe.
class RemotePool final : public train::RemoteWorkers,
                         public serve::ResultSink,
                         public std::enable_shared_from_this<RemotePool> {
public:
    RemotePool(JobId job, const std::vector<bool>& remote_slots, double worker_timeout_s);

    // Takes `requested` (or the first free remote slot) for `client`, whose result frames come
    // here from then on (Client::results_to). Throws RefusedRequest:
    // no-remote-slot, not-a-remote-slot, slot-taken.
    WorkerId join(
        const std::shared_ptr<serve::Client>& client, std::optional<WorkerId> requested, const std::string& host);
    // The client's connection closed: its slot is free and a task it holds is lost.
    void leave(const serve::Client& client);
    // A binary frame from a worker client; false (with `error`) when it is not a result
    // this pool waits for.
    bool deliver(const serve::Client& client, std::string_view frame, std::string* error) override;

    int remote_slots() const;
    int joined() const;
    // Per slot: whether a worker process holds it.
    std::vector<bool> joined_slots() const;
    // The slot's worker process leaves it without being lost (the elastic scheduler gives a
    // pooled worker back after the trainer removed the slot). Returns it, if one held it.
    std::shared_ptr<serve::Client> release(WorkerId worker);
    // Blocks until every remote slot `needed` marks has a worker, or `stop` is set (returns
    // false). An elastic job needs its members only.
    bool wait_until_joined(const std::vector<bool>& needed, const std::atomic<bool>& stop,
        const std::function<void(int joined, int slots)>& waiting);
    // Called when a slot that lost its worker gets one again (the job re-includes it).
    void set_on_rejoin(std::function<void(WorkerId)> on_rejoin);
    // An operator (or the job's on_stall policy) excluded or removed the worker: its task
    // under way, or one sent before the exclusion applies, is given up at once
    // (RemoteLoss::Excluded), so the barrier it holds goes on without it; its result, when it
    // comes, is discarded. The worker stays joined.
    void give_up_task(WorkerId worker) override;
    void keep_next_task(WorkerId worker) override;
    // Wakes every waiting task as lost (the job is stopping).
    void close();
    // The job is over: each joined worker gets its final status, and ends.
    void finish(const protocol::JobStatus& status);

    bool is_remote(WorkerId worker) const override;
    train::RemoteOutcome compute(WorkerId worker, std::int64_t iteration, std::span<const float> parameters,
        std::int32_t batch_size, std::span<float> gradient) override;

private:
    struct Slot;
    // The lost process as its worker-lost event names it: the join's host and the connection.
    static std::string who(const Slot& slot, const serve::Client& client);
    struct Slot {
        bool remote = false;
        std::shared_ptr<serve::Client> client;
        std::string host;
        bool lost_before = false; // had a worker that went away
        std::string gone; // ... named as its worker-lost event names it (who)
        std::optional<std::int64_t> waiting; // the iteration of the task in flight
        std::optional<protocol::WorkerResult> result;
        // Tasks are counted as they are asked for, not by iteration: under asp and ssp a
        // given-up task does not move the worker's clock, so the one after it may carry the
        // same iteration.
        std::int64_t tasks = 0; // asked for so far; the latest is number `tasks`
        // give_up_task: tasks up to this number are given up (the next one too, which may be
        // asked for before the exclusion applies).
        std::int64_t give_up_through = 0;
        // Results still to come for tasks given up after they were sent: the worker answers
        // its tasks in order, so the next this many results are discarded on arrival.
        std::int64_t discard = 0;
    };

    const JobId job_;
    const double worker_timeout_s_;
    mutable std::mutex mutex_; // a hand-off (IoPath): a result frame fills its slot under it, no more
    std::condition_variable changed_;
    std::vector<Slot> slots_;
    std::function<void(WorkerId)> on_rejoin_;
    bool closed_ = false;
};

} // namespace fulcrum::daemon
