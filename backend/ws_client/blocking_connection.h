#pragma once

#include <atomic>
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

// One WebSocket connection to fulcrumd, opened by the constructor (throws ConnectError)
// and read and written from one thread at a time.
class BlockingConnection {
public:
    explicit BlockingConnection(const ConnectOptions& options);
    ~BlockingConnection();
    BlockingConnection(const BlockingConnection&) = delete;
    BlockingConnection& operator=(const BlockingConnection&) = delete;

    void send_text(const std::string& text);
    void send_binary(const std::string& bytes);
    // The next frame, or unset when the server closed the connection or `stop` was set while
    // waiting for it (the connection is then only closed: close() skips the handshake).
    std::optional<std::string> read(bool* binary, const std::atomic<bool>* stop = nullptr);
    void close();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace fulcrum::ws_client
