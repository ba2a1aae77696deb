#pragma once

#include "protocol/messages.h"
#include "serve/core_thread.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>

namespace fulcrum::serve {
class Client;
class TaskThreads;
} // namespace fulcrum::serve

namespace fulcrum::archive {

class ReplaySession;
class RunCatalogue;

// The replays clients have open: at most `per_client` each, opened on the disk threads
// (reading a run store never holds the I/O threads), steered by replay commands, closed
// with their client. Its table lives on a thread of its own (a CoreThread), where each call
// posts its work and the replies are sent from: a frame handler never waits for a replay's
// reader, nor for a closing replay's thread to end.
class ReplayManager {
public:
    ReplayManager(const RunCatalogue& catalogue, serve::TaskThreads& disk, int per_client);
    ~ReplayManager();
    ReplayManager(const ReplayManager&) = delete;
    ReplayManager& operator=(const ReplayManager&) = delete;

    // The reply (with the replay's id, or the failure: unknown-run, too-many-replays,
    // unreadable-run-store) goes to the client once the store is read.
    void open(const std::shared_ptr<serve::Client>& client, const protocol::OpenReplay& open);
    // Replies, then applies the command; or refuses it ("unknown-replay", or the session's
    // refusal of a bad command).
    void command(const std::shared_ptr<serve::Client>& client, const protocol::ReplayCommand& command);
    // The client is gone: its replays end (each joins its thread), and one still opening
    // ends when it has opened.
    void client_left(std::uint64_t client);
    // Before the disk threads go: an opening asked after this is refused ("shutting-down").
    void stop();

private:
    const RunCatalogue& catalogue_;
    serve::TaskThreads& disk_;
    const int per_client_;
    std::map<std::int64_t, std::shared_ptr<ReplaySession>> replays_;
    std::map<std::uint64_t, int> opening_; // replays each client is opening on the disk threads
    std::int64_t next_replay_ = 1;
    std::atomic<bool> stopping_ { false };
    // Last: it ends (running what was posted) before the tables go.
    serve::CoreThread thread_ { "the replays' thread", serve::ThreadRole::replay };
};

} // namespace fulcrum::archive
