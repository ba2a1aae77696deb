#pragma once

#include "protocol/messages.h"
#include "serve/io_path.h"

#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <thread>

namespace fulcrum::replay {
class ReplaySource;
}

namespace fulcrum::serve {
class Client;
}

namespace fulcrum::archive {

// One client's replay of a recorded run: a thread that sends the run's steps to that
// client paced by the run's clock times the speed, and obeys play, pause, seek and speed
// commands. It never lets the client's send queue fill: a slow reader slows the replay
// instead of losing rows, so a replay delivers every record. Thread-safe.
class ReplaySession {
public:
    // Throws InputError naming the file (missing, not a run store, no such run), and
    // RefusedRequest not-authorized for a run of a tenant the client's token does not reach.
    ReplaySession(std::int64_t id, std::shared_ptr<serve::Client> client, const std::filesystem::path& database,
        std::string database_name, const protocol::OpenReplay& open);
    ~ReplaySession(); // stops the thread
    ReplaySession(const ReplaySession&) = delete;
    ReplaySession& operator=(const ReplaySession&) = delete;

    // Starts its thread: the opening replay-state and snapshot, then the steps, none of them
    // before `first` (the open's reply) has run. Throws (nothing sent) when no thread can be
    // started.
    void start(const std::function<void()>& first);
    std::int64_t id() const { return id_; }
    std::uint64_t client() const;
    std::string tenant() const; // whose job the run recorded
    bool closed() const;
    // Throws RefusedRequest ("no-such-iteration") for a seek to an iteration that was not
    // recorded. Called before the request's reply is sent.
    void check(const protocol::ReplayCommand& command) const;
    // Queued for the replay thread, which answers with a replay-state (and, for a seek, a
    // snapshot ending in snapshot-end with the request's id).
    void command(const protocol::ReplayCommand& command);

private:
    void run();
    void apply(const protocol::ReplayCommand& command);
    void send_all(const std::vector<protocol::ServerMessage>& messages);
    void send_state(bool seeked);
    protocol::ReplayPhase phase() const;
    void anchor();

    const std::int64_t id_;
    std::shared_ptr<serve::Client> client_;
    std::unique_ptr<replay::ReplaySource> source_;
    std::thread thread_;

    mutable serve::StateMutex mutex_;
    std::condition_variable_any wake_;
    std::deque<protocol::ReplayCommand> commands_;
    bool closing_ = false;
    bool playing_ = true;
    double speed_ = 1;
    std::int64_t position_ = 0;
    bool finished_sent_ = false;
    // Pacing: the step with barrier time t is due at anchor_wall_ + (t - anchor_time_) / speed.
    std::chrono::steady_clock::time_point anchor_wall_;
    double anchor_time_ = 0;
};

} // namespace fulcrum::archive
