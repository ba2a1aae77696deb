#pragma once

#include "protocol/messages.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

namespace fulcrum::daemon {

class Client;
class TaskThreads;
class ReplaySession;
class RunCatalogue;

// The replays clients have open: at most `per_client` each, opened on the disk threads
// (reading a run store never holds the I/O threads), steered by replay commands, closed
// with their client.
class ReplayManager {
public:
    ReplayManager(const RunCatalogue& catalogue, TaskThreads& disk, int per_client);
    ~ReplayManager();
    ReplayManager(const ReplayManager&) = delete;
    ReplayManager& operator=(const ReplayManager&) = delete;

    // Refuses at once (RefusedRequest: unknown-run, too-many-replays); otherwise the reply
    // (with the replay's id, or the failure) goes to the client once the store is read.
    void open(const std::shared_ptr<Client>& client, const protocol::OpenReplay& open);
    // Replies, then applies the command. Throws RefusedRequest ("unknown-replay", or the
    // session's refusal of a bad command).
    void command(Client& client, const protocol::ReplayCommand& command);
    // The client is gone: its replays end (each joins its thread), and one still opening
    // ends when it has opened.
    void client_left(std::uint64_t client);

private:
    const RunCatalogue& catalogue_;
    TaskThreads& disk_;
    const int per_client_;
    std::mutex mutex_;
    std::map<std::int64_t, std::unique_ptr<ReplaySession>> replays_;
    std::map<std::uint64_t, int> opening_; // replays each client is opening on the disk threads
    std::int64_t next_replay_ = 1;
};

} // namespace fulcrum::daemon
