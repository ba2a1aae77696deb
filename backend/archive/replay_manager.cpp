#include "archive/replay_manager.h"

#include "archive/replay_session.h"
#include "archive/run_catalogue.h"
#include "common/error.h"
#include "serve/replies.h"
#include "serve/stream_hub.h"
#include "serve/task_threads.h"

#include <algorithm>
#include <vector>

namespace fulcrum::archive {

using namespace protocol;
using serve::Client;
using serve::failure;
using serve::failure_of;
using serve::ok;
using serve::TaskThreads;

ReplayManager::ReplayManager(const RunCatalogue& catalogue, TaskThreads& disk, int per_client)
    : catalogue_(catalogue)
    , disk_(disk)
    , per_client_(per_client)
{
}

ReplayManager::~ReplayManager() = default;

void ReplayManager::open(const std::shared_ptr<Client>& client, const OpenReplay& open)
{
    thread_.post([this, client, open] {
        if (stopping_) {
            client->send(failure(open.id, "shutting-down", "fulcrumd is shutting down"));
            return;
        }
        const auto mine = std::count_if(replays_.begin(), replays_.end(), [&](const auto& r) {
            return r.second->client() == client->id();
        }) + opening_[client->id()];
        if (mine >= per_client_) {
            client->send(failure(open.id, "too-many-replays",
                "this client already has " + std::to_string(mine) + " replays open; close one first (close-replay)"));
            return;
        }
        const std::int64_t id = next_replay_++;
        ++opening_[client->id()];
        disk_.post([this, id, open, client] {
            std::shared_ptr<ReplaySession> session;
            std::exception_ptr failed;
            try {
                try {
                    session = std::make_shared<ReplaySession>(
                        id, client, catalogue_.run_store(open.database), open.database, open);
                } catch (const InputError& e) {
                    throw RefusedRequest(e.field() == "run" ? "unknown-run" : "unreadable-run-store", e.what());
                }

            } catch (...) {
                failed = std::current_exception();
            }
            // Answered on this thread once the opening no longer counts against the client's
            // limit, and a replay stored before its reply and its first frames (a close sent
            // on the reply finds it).
            thread_.post([this, client, session, failed, open] {
                const auto it = opening_.find(client->id());
                if (it == opening_.end()) // the client left meanwhile: its replay ends here, unstarted
                    return;
                --it->second;
                if (failed) {
                    client->send(failure_of(open.id, failed));
                    return;
                }
                try {
                    session->start([&] {
                        Reply reply = ok(open.id);
                        reply.replay = session->id();
                        client->send(reply);
                    });
                } catch (const std::exception& e) { // no thread for it: nothing was sent
                    client->send(
                        failure(open.id, "replay-failed", std::string("the replay could not start: ") + e.what()));
                    return;
                }
                replays_[session->id()] = session;
            });
        });
    });
}

void ReplayManager::stop()
{
    stopping_ = true;
    thread_.call([] {}); // the openings posted before have handed their reads to the disk threads
}

void ReplayManager::command(const std::shared_ptr<Client>& client, const ReplayCommand& command)
{
    thread_.post([this, client, command] {
        try {
            const auto it = replays_.find(command.replay);
            if (it == replays_.end() || it->second->client() != client->id())
                throw RefusedRequest("unknown-replay", "this client has no replay " + std::to_string(command.replay));
            it->second->check(command);
            client->send(ok(command.id)); // the reply goes before anything the command makes the replay send
            it->second->command(command);
            if (command.action == ReplayAction::Close)
                replays_.erase(it); // on this thread: its reader's thread ends here
        } catch (...) {
            client->send(failure_of(command.id, std::current_exception()));
        }
    });
}

void ReplayManager::client_left(std::uint64_t client)
{
    thread_.post([this, client] {
        opening_.erase(client);
        std::erase_if(replays_, [&](const auto& r) { return r.second->client() == client; });
    });
}

} // namespace fulcrum::archive
