#pragma once

#include "common/records.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fulcrum::serve {
class Client;
} // namespace fulcrum::serve

namespace fulcrum::daemon {

// fulcrum-worker processes started with --pool: connections that wait in fulcrumd until the
// elastic scheduler gives them a worker slot of a real-mode job (EPS's idle resources for the
// jobs whose workers are all remote), and the slot each was given. The cluster core's: used on
// its thread only.
class WorkerPool {
public:
    struct Pooled {
        std::shared_ptr<serve::Client> client;
        std::string host;
        std::optional<JobId> job; // assigned: the job and its worker slot
        WorkerId worker = -1;
        std::optional<JobId> held_for; // idle, promised to a job placed in this pass (hold)
    };

    // Throws RefusedRequest("already-joined") for a connection already in the pool.
    void join(const std::shared_ptr<serve::Client>& client, const std::string& host);
    // The connection closed: it leaves the pool. Returns it as it was (the slot it had).
    std::optional<Pooled> leave(std::uint64_t client);
    bool contains(std::uint64_t client) const;
    int idle() const;
    // Idle ones whose token reaches `tenant`: the only ones a job of that tenant is given. Not
    // those held for a job placed earlier in the pass.
    int idle_for(std::string_view tenant) const;
    // The placement pass placed `job`, whose processes are assigned when it starts: holds the
    // `count` idle ones assign() will give it (the idle longest whose token reaches `tenant`),
    // so that the jobs after it in the pass do not count them. Returns how many it held.
    int hold(JobId job, int count, std::string_view tenant);
    // The pass's placed jobs started: what a start did not take is idle for every job again.
    void drop_holds();
    int size() const { return static_cast<int>(workers_.size()); }
    // One held for `job`, else the worker idle the longest of those whose token reaches
    // `tenant` (the job's) and not held: now assigned to `job`'s slot `worker`.
    std::optional<Pooled> assign(JobId job, WorkerId worker, std::string_view tenant);
    // The slot's pooled worker, if its slot was given from the pool.
    std::optional<Pooled> assigned(JobId job, WorkerId worker) const;
    // Idle again (the last in line); false when it is not in the pool.
    bool release(std::uint64_t client);
    std::optional<JobId> job_of(std::uint64_t client) const;
    std::vector<Pooled> assigned_to(JobId job) const;
    const std::vector<Pooled>& workers() const { return workers_; }

private:
    std::vector<Pooled> workers_; // idle ones in the order they became idle
};

} // namespace fulcrum::daemon
