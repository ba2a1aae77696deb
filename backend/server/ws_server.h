#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

namespace fulcrum::access {
class TokenStore;
}

namespace fulcrum::daemon {
class Daemon;
} // namespace fulcrum::daemon

namespace fulcrum::server {

// Who may read GET /metrics (the Prometheus text format) on the server's port: anyone with
// a valid token of any role (Prometheus sends it as a bearer token), anyone connecting from
// a loopback address with no token, or nobody (404).
enum class MetricsAccess { Token, Loopback, Off };

struct ServerOptions {
    std::string host = "127.0.0.1";
    unsigned short port = 7480; // 0: any free port (tests)
    int threads = 2;
    // TLS (wss://) when both are set: PEM files, the certificate chain and its private key.
    std::filesystem::path tls_certificate;
    std::filesystem::path tls_key;
    MetricsAccess metrics = MetricsAccess::Token;
};

// fulcrumd's WebSocket endpoint (Boost.Beast), over TLS when a certificate and key are
// configured: checks the bearer token in the upgrade
// request, then carries text frames between each client and the Daemon. One strand per
// connection, one write in flight, the rest in the client's bounded SendQueue. Beast's
// headers stay in ws_server.cpp.
class WebSocketServer {
public:
    // Binds at once: throws std::runtime_error naming the address if it cannot listen, or
    // the file if the TLS certificate or key cannot be used.
    WebSocketServer(daemon::Daemon& daemon, const access::TokenStore& tokens, ServerOptions options);
    ~WebSocketServer(); // stop() and join
    WebSocketServer(const WebSocketServer&) = delete;
    WebSocketServer& operator=(const WebSocketServer&) = delete;

    unsigned short port() const;
    bool tls() const;
    // SIGINT and SIGTERM stop the server through Asio's signal_set, so `on_signal` runs on
    // an I/O thread (not in a signal handler) before the server closes. Before start().
    void stop_on_signals(std::function<void(int signal)> on_signal);
    void start(); // serves on background threads
    void stop(); // closes the listener and every connection
    void wait(); // until stopped

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace fulcrum::server
