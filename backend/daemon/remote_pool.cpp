#include "daemon/remote_pool.h"

#include "common/error.h"

#include <algorithm>
#include <cstring>

namespace fulcrum::daemon {

using serve::Client;
using serve::Delivery;

RemotePool::RemotePool(JobId job, const std::vector<bool>& remote_slots, double worker_timeout_s)
    : job_(job)
    , worker_timeout_s_(worker_timeout_s)
{
    for (const bool remote : remote_slots) {
        Slot slot;
        slot.remote = remote;
        slots_.push_back(std::move(slot));
    }
}

WorkerId RemotePool::join(
    const std::shared_ptr<Client>& client, std::optional<WorkerId> requested, const std::string& host)
{
    std::function<void(WorkerId)> rejoined;
    WorkerId chosen = -1;
    {
        std::lock_guard lock(mutex_);
        if (std::none_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.remote; }))
            throw RefusedRequest("no-remote-slot",
                "job " + std::to_string(job_) + " has no remote worker slots (a scenario marks them \"remote\": true)");
        if (requested) {
            if (*requested < 0 || static_cast<std::size_t>(*requested) >= slots_.size()
                || !slots_[static_cast<std::size_t>(*requested)].remote)
                throw RefusedRequest("not-a-remote-slot",
                    "worker " + std::to_string(*requested) + " of job " + std::to_string(job_)
                        + " is not a remote slot");
            if (slots_[static_cast<std::size_t>(*requested)].client)
                throw RefusedRequest("slot-taken",
                    "worker " + std::to_string(*requested) + " of job " + std::to_string(job_)
                        + " already has a worker process (" + slots_[static_cast<std::size_t>(*requested)].host + ")");
            chosen = *requested;
        } else {
            for (std::size_t i = 0; i < slots_.size() && chosen < 0; ++i)
                if (slots_[i].remote && !slots_[i].client)
                    chosen = static_cast<WorkerId>(i);
            if (chosen < 0)
                throw RefusedRequest(
                    "slot-taken", "every remote slot of job " + std::to_string(job_) + " has a worker process");
        }
        Slot& slot = slots_[static_cast<std::size_t>(chosen)];
        slot.client = client;
        slot.gone.clear();
        slot.host = host;
        slot.discard = 0; // a new process owes nothing
        slot.give_up_through = slot.tasks; // nor is any task of its given up ahead
        if (slot.lost_before)
            rejoined = on_rejoin_;
        client->set_results_to(weak_from_this());
    }
    changed_.notify_all();
    if (rejoined)
        rejoined(chosen);
    return chosen;
}

void RemotePool::leave(const Client& client)
{
    {
        std::lock_guard lock(mutex_);
        for (Slot& slot : slots_)
            if (slot.client.get() == &client) {
                slot.gone = who(slot, client); // a task asked after this names the process that left
                slot.client.reset();
                slot.lost_before = true;
            }
    }
    changed_.notify_all();
}

bool RemotePool::deliver(const Client& client, std::string_view frame, std::string* error)
{
    auto result = protocol::decode_result(frame, error);
    if (!result)
        return false;
    {
        std::lock_guard lock(mutex_);
        const auto slot
            = std::find_if(slots_.begin(), slots_.end(), [&](const Slot& s) { return s.client.get() == &client; });
        if (slot != slots_.end() && slot->discard > 0) {
            --slot->discard; // a task given up at an exclusion: its late result is dropped
            return true;
        }
        if (slot == slots_.end() || slot->waiting != result->iteration) {
            if (error)
                *error = "a result for iteration " + std::to_string(result->iteration)
                    + " that no task of this worker asked for";
            return false;
        }
        slot->result = std::move(*result);
    }
    changed_.notify_all();
    return true;
}

int RemotePool::remote_slots() const
{
    std::lock_guard lock(mutex_);
    return static_cast<int>(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.remote; }));
}

int RemotePool::joined() const
{
    std::lock_guard lock(mutex_);
    return static_cast<int>(
        std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.remote && s.client; }));
}

std::vector<bool> RemotePool::joined_slots() const
{
    std::lock_guard lock(mutex_);
    std::vector<bool> joined;
    for (const Slot& s : slots_)
        joined.push_back(s.client != nullptr);
    return joined;
}

std::shared_ptr<Client> RemotePool::release(WorkerId worker)
{
    std::shared_ptr<Client> client;
    {
        std::lock_guard lock(mutex_);
        if (worker < 0 || static_cast<std::size_t>(worker) >= slots_.size())
            return nullptr;
        Slot& slot = slots_[static_cast<std::size_t>(worker)];
        client = std::exchange(slot.client, nullptr);
        if (client)
            client->set_results_to({});
        slot.host.clear();
        slot.gone.clear();
        slot.lost_before = false;
    }
    changed_.notify_all();
    return client;
}

bool RemotePool::wait_until_joined(
    const std::vector<bool>& needed, const std::atomic<bool>& stop, const std::function<void(int, int)>& waiting)
{
    const auto wanted = [&](std::size_t i) { return slots_[i].remote && i < needed.size() && needed[i]; };
    int reported = -1;
    std::unique_lock lock(mutex_);
    int slots = 0;
    for (std::size_t i = 0; i < slots_.size(); ++i)
        slots += wanted(i) ? 1 : 0;
    for (;;) {
        int now = 0;
        for (std::size_t i = 0; i < slots_.size(); ++i)
            now += wanted(i) && slots_[i].client ? 1 : 0;
        if (now == slots)
            return true;
        if (stop.load() || closed_)
            return false;
        if (now != reported) {
            reported = now;
            lock.unlock();
            waiting(now, slots);
            lock.lock();
        }
        changed_.wait_for(lock, std::chrono::milliseconds(100));
    }
}

void RemotePool::set_on_rejoin(std::function<void(WorkerId)> on_rejoin)
{
    std::lock_guard lock(mutex_);
    on_rejoin_ = std::move(on_rejoin);
}

void RemotePool::keep_next_task(WorkerId worker)
{
    std::lock_guard lock(mutex_);
    if (worker < 0 || static_cast<std::size_t>(worker) >= slots_.size())
        return;
    Slot& slot = slots_[static_cast<std::size_t>(worker)];
    slot.give_up_through = std::min(slot.give_up_through, slot.tasks);
}

void RemotePool::give_up_task(WorkerId worker)
{
    {
        std::lock_guard lock(mutex_);
        if (worker < 0 || static_cast<std::size_t>(worker) >= slots_.size())
            return;
        Slot& slot = slots_[static_cast<std::size_t>(worker)];
        slot.give_up_through = slot.tasks + 1; // the task under way, if any, and the next
    }
    changed_.notify_all();
}

void RemotePool::close()
{
    {
        std::lock_guard lock(mutex_);
        closed_ = true;
    }
    changed_.notify_all();
}

void RemotePool::finish(const protocol::JobStatus& status)
{
    std::vector<std::shared_ptr<Client>> joined;
    {
        std::lock_guard lock(mutex_);
        for (const Slot& slot : slots_)
            if (slot.client)
                joined.push_back(slot.client);
    }
    for (const auto& client : joined)
        client->send(protocol::JobUpdate { status, 0 });
}

bool RemotePool::is_remote(WorkerId worker) const
{
    std::lock_guard lock(mutex_);
    return worker >= 0 && static_cast<std::size_t>(worker) < slots_.size()
        && slots_[static_cast<std::size_t>(worker)].remote;
}

std::string RemotePool::who(const Slot& slot, const Client& client)
{
    return slot.host.empty() ? client.name() : slot.host + " (" + client.name() + ")";
}

train::RemoteOutcome RemotePool::compute(WorkerId worker, std::int64_t iteration, std::span<const float> parameters,
    std::int32_t batch_size, std::span<float> gradient)
{
    std::shared_ptr<Client> client;
    std::string lost_who; // the process, named while the slot is locked: a loss names it
    std::int64_t task = 0;
    {
        std::lock_guard lock(mutex_);
        Slot& slot = slots_.at(static_cast<std::size_t>(worker));
        if (!slot.client || closed_)
            return { std::nullopt,
                { train::RemoteLoss::Kind::Disconnected, 0,
                    slot.client || slot.gone.empty() ? slot.host : slot.gone } };
        task = ++slot.tasks;
        if (task <= slot.give_up_through) // asked for before the exclusion applied
            return { std::nullopt, { train::RemoteLoss::Kind::Excluded, 0, {} } };
        client = slot.client;
        lost_who = who(slot, *client);
        slot.waiting = iteration;
        slot.result.reset();
    }
    client->send_frame(std::make_shared<const std::string>(protocol::encode_task(iteration, batch_size, parameters)),
        {}, Delivery::Always);
    std::unique_lock lock(mutex_);
    Slot& slot = slots_[static_cast<std::size_t>(worker)];
    const auto given_up = [&] { return task <= slot.give_up_through; };
    const auto answered = [&] { return slot.result.has_value() || slot.client != client || closed_ || given_up(); };
    const bool timed = client->version() >= protocol::kHeartbeatVersion;
    const auto timeout = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(worker_timeout_s_));
    // Each frame the worker sends moves its deadline: wait until the newest one passes.
    while (!answered()) {
        if (!timed) {
            changed_.wait(lock, answered);
            break;
        }
        const auto deadline = client->last_heard() + timeout;
        if (std::chrono::steady_clock::now() >= deadline) {
            slot.gone = lost_who;
            slot.client.reset();
            slot.lost_before = true;
            slot.waiting.reset();
            lock.unlock();
            client->set_results_to({});
            const train::RemoteLoss silent { train::RemoteLoss::Kind::Silent, worker_timeout_s_, lost_who };
            client->close_for("worker " + std::to_string(worker) + " of job " + std::to_string(job_) + " "
                + silent.describe() + " and is lost; start it again to rejoin");
            return { std::nullopt, silent };
        }
        changed_.wait_until(lock, deadline, answered);
    }
    slot.waiting.reset();
    if (!slot.result && given_up() && slot.client == client && !closed_) {
        ++slot.discard; // its result is still to come
        return { std::nullopt, { train::RemoteLoss::Kind::Excluded, 0, {} } };
    }
    if (!slot.result)
        return { std::nullopt, { train::RemoteLoss::Kind::Disconnected, 0, lost_who } };
    const protocol::WorkerResult result = std::move(*slot.result);
    slot.result.reset();
    if (result.gradient.size() != gradient.size() || result.batch_size != batch_size) {
        // A worker built from another model, or a broken one: it takes no further part.
        slot.gone = lost_who;
        slot.client.reset();
        slot.lost_before = true;
        lock.unlock();
        client->send(protocol::ProtocolError { { "wrong-result",
            "a gradient of " + std::to_string(result.gradient.size()) + " values for batch "
                + std::to_string(result.batch_size) + "; the task wanted " + std::to_string(gradient.size())
                + " for batch " + std::to_string(batch_size) + ". This worker is dropped from the job",
            "" } });
        return { std::nullopt, { train::RemoteLoss::Kind::Disconnected, 0, lost_who } };
    }
    std::memcpy(gradient.data(), result.gradient.data(), gradient.size_bytes());
    return { train::RemoteBatch { result.loss, result.compute_s, result.cpu_share, result.memory_share, result.gpu },
        {} };
}

} // namespace fulcrum::daemon
