#include "daemon/replay_manager.h"

#include "common/error.h"
#include "daemon/replay_session.h"
#include "daemon/replies.h"
#include "daemon/run_catalogue.h"
#include "daemon/stream_hub.h"
#include "daemon/task_threads.h"

#include <algorithm>
#include <vector>

namespace fulcrum::daemon {

using namespace protocol;

ReplayManager::ReplayManager(const RunCatalogue& catalogue, TaskThreads& disk, int per_client)
    : catalogue_(catalogue)
    , disk_(disk)
    , per_client_(per_client)
{
}

ReplayManager::~ReplayManager() = default;

void ReplayManager::open(const std::shared_ptr<Client>& client, const OpenReplay& open)
{
    const auto path = catalogue_.run_store(open.database);
    std::int64_t id = 0;
    {
        std::lock_guard lock(mutex_);
        const auto mine = std::count_if(replays_.begin(), replays_.end(), [&](const auto& r) {
            return r.second->client() == client->id();
        }) + opening_[client->id()];
        if (mine >= per_client_)
            throw RefusedRequest("too-many-replays",
                "this client already has " + std::to_string(mine) + " replays open; close one first (close-replay)");
        id = next_replay_++;
        ++opening_[client->id()];
    }
    disk_.post([this, id, path, open, client] {
        std::unique_ptr<ReplaySession> session;
        try {
            try {
                session = std::make_unique<ReplaySession>(id, client, path, open.database, open);
            } catch (const InputError& e) {
                throw RefusedRequest(e.field() == "run" ? "unknown-run" : "unreadable-run-store", e.what());
            }
        } catch (...) {
            {
                std::lock_guard lock(mutex_);
                if (const auto it = opening_.find(client->id()); it != opening_.end())
                    --it->second;
            }
            client->send(failure_of(open.id, std::current_exception()));
            return;
        }
        Reply reply = ok(open.id);
        reply.replay = id;
        client->send(reply);
        session->start();
        std::unique_lock lock(mutex_);
        const auto it = opening_.find(client->id());
        if (it == opening_.end()) { // the client left meanwhile: its replay ends here
            lock.unlock();
            return;
        }
        --it->second;
        replays_[id] = std::move(session);
    });
}

void ReplayManager::command(Client& client, const ReplayCommand& command)
{
    std::unique_ptr<ReplaySession> closed; // destroyed after the lock: it joins its thread
    std::lock_guard lock(mutex_);
    const auto it = replays_.find(command.replay);
    if (it == replays_.end() || it->second->client() != client.id())
        throw RefusedRequest("unknown-replay", "this client has no replay " + std::to_string(command.replay));
    it->second->check(command);
    client.send(ok(command.id)); // the reply goes before anything the command makes the replay send
    it->second->command(command);
    if (command.action == ReplayAction::Close) {
        closed = std::move(it->second);
        replays_.erase(it);
    }
}

void ReplayManager::client_left(std::uint64_t client)
{
    std::vector<std::unique_ptr<ReplaySession>> closing;
    std::lock_guard lock(mutex_);
    opening_.erase(client);
    for (auto it = replays_.begin(); it != replays_.end();)
        if (it->second->client() == client) {
            closing.push_back(std::move(it->second));
            it = replays_.erase(it);
        } else {
            ++it;
        }
}

} // namespace fulcrum::daemon
