#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace fulcrum::ws_client {

struct ConnectOptions {
    std::string host = "127.0.0.1";
    unsigned short port = 7480;
    std::string token; // sent as "Authorization: Bearer TOKEN"
    bool tls = false;
    std::filesystem::path trusted; // TLS: PEM certificates to trust; empty: the system's
    std::string user_agent = "fulcrum";
    std::size_t max_frame_bytes = 1u << 20;
    // What to tell a person whose token fulcrumd refused (HTTP 401).
    std::string token_hint = "give a token from fulcrumd's token file";
};

// Why a connection could not be opened: the server could not be reached (no such host,
// nothing listening, TLS failed) or it refused the token.
class ConnectError : public std::runtime_error {
public:
    enum class Kind { Unreachable, Unauthorized };
    ConnectError(Kind kind, const std::string& message)
        : std::runtime_error(message)
        , kind_(kind)
    {
    }
    Kind kind() const { return kind_; }

private:
    Kind kind_;
};

// One WebSocket connection to fulcrumd, opened by the constructor (throws ConnectError).
// After the handshake the connection has a thread of its own that reads and writes it, so
// the server's pings are answered and a heartbeat goes out (keep_alive) however long the
// caller computes between two reads. read() from one thread at a time; send_*() from any.
class BlockingConnection {
public:
    explicit BlockingConnection(const ConnectOptions& options);
    ~BlockingConnection();
    BlockingConnection(const BlockingConnection&) = delete;
    BlockingConnection& operator=(const BlockingConnection&) = delete;

    // Returns once the frame is written; throws boost::system::system_error when it cannot be.
    void send_text(const std::string& text);
    void send_binary(const std::string& bytes);
    // The next frame, or unset when the server closed the connection, `stop` was set while
    // waiting for it, or `until` passed first (then *timed_out, when given, is set).
    std::optional<std::string> read(bool* binary, const std::atomic<bool>* stop = nullptr,
        std::optional<std::chrono::steady_clock::time_point> until = std::nullopt, bool* timed_out = nullptr);
    // Why the server closed the connection, as its close frame said ("" if it said nothing).
    std::string close_reason() const;
    // From now on `text` goes out as a text frame every `every`, until close().
    void keep_alive(std::chrono::milliseconds every, const std::string& text);
    // The close handshake (at most two seconds), then the socket is closed. Idempotent.
    void close();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace fulcrum::ws_client
