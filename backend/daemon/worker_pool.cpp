#include "daemon/worker_pool.h"

#include "common/error.h"
#include "serve/stream_hub.h"

#include <algorithm>

namespace fulcrum::daemon {

using serve::Client;

void WorkerPool::join(const std::shared_ptr<Client>& client, const std::string& host)
{
    if (contains(client->id()))
        throw RefusedRequest("already-joined", "this connection already waits in fulcrumd's worker pool");
    workers_.push_back(Pooled { client, host, std::nullopt, -1, std::nullopt });
}

std::optional<WorkerPool::Pooled> WorkerPool::leave(std::uint64_t client)
{
    const auto it
        = std::find_if(workers_.begin(), workers_.end(), [&](const Pooled& p) { return p.client->id() == client; });
    if (it == workers_.end())
        return std::nullopt;
    Pooled left = std::move(*it);
    workers_.erase(it);
    return left;
}

bool WorkerPool::contains(std::uint64_t client) const
{
    return std::any_of(workers_.begin(), workers_.end(), [&](const Pooled& p) { return p.client->id() == client; });
}

int WorkerPool::idle() const
{
    return static_cast<int>(std::count_if(workers_.begin(), workers_.end(), [](const Pooled& p) { return !p.job; }));
}

namespace {

bool free_for(const WorkerPool::Pooled& p, std::string_view tenant)
{
    return !p.job && !p.held_for && p.client->reach().covers(tenant);
}

} // namespace

int WorkerPool::idle_for(std::string_view tenant) const
{
    return static_cast<int>(
        std::count_if(workers_.begin(), workers_.end(), [&](const Pooled& p) { return free_for(p, tenant); }));
}

int WorkerPool::hold(JobId job, int count, std::string_view tenant)
{
    int held = 0;
    for (Pooled& p : workers_)
        if (held < count && free_for(p, tenant)) {
            p.held_for = job;
            ++held;
        }
    return held;
}

void WorkerPool::drop_holds()
{
    for (Pooled& p : workers_)
        p.held_for.reset();
}

std::optional<WorkerPool::Pooled> WorkerPool::assign(JobId job, WorkerId worker, std::string_view tenant)
{
    auto it
        = std::find_if(workers_.begin(), workers_.end(), [&](const Pooled& p) { return !p.job && p.held_for == job; });
    if (it == workers_.end())
        it = std::find_if(workers_.begin(), workers_.end(), [&](const Pooled& p) { return free_for(p, tenant); });
    if (it == workers_.end())
        return std::nullopt;
    it->job = job;
    it->worker = worker;
    it->held_for.reset();
    return *it;
}

std::optional<WorkerPool::Pooled> WorkerPool::assigned(JobId job, WorkerId worker) const
{
    const auto it = std::find_if(
        workers_.begin(), workers_.end(), [&](const Pooled& p) { return p.job == job && p.worker == worker; });
    if (it == workers_.end())
        return std::nullopt;
    return *it;
}

bool WorkerPool::release(std::uint64_t client)
{
    const auto it
        = std::find_if(workers_.begin(), workers_.end(), [&](const Pooled& p) { return p.client->id() == client; });
    if (it == workers_.end())
        return false;
    Pooled idle = std::move(*it);
    idle.job.reset();
    idle.worker = -1;
    workers_.erase(it);
    workers_.push_back(std::move(idle));
    return true;
}

std::optional<JobId> WorkerPool::job_of(std::uint64_t client) const
{
    const auto it
        = std::find_if(workers_.begin(), workers_.end(), [&](const Pooled& p) { return p.client->id() == client; });
    if (it == workers_.end())
        return std::nullopt;
    return it->job;
}

std::vector<WorkerPool::Pooled> WorkerPool::assigned_to(JobId job) const
{
    std::vector<Pooled> out;
    std::copy_if(
        workers_.begin(), workers_.end(), std::back_inserter(out), [&](const Pooled& p) { return p.job == job; });
    return out;
}

} // namespace fulcrum::daemon
