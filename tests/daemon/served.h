#pragma once

// fulcrumd's Daemon behind its real WebSocket server, for tests whose clients are processes
// or sockets (fulcrum-worker, WsClient).

#include "access/auth.h"
#include "daemon/daemon.h"
#include "server/ws_server.h"

#include <filesystem>

namespace fulcrum::testing_support {

// A daemon serving plain WebSocket on a free loopback port, with a fresh token file.
struct Served {
    daemon::Daemon daemon;
    access::TokenStore tokens;
    server::WebSocketServer server;

    static server::ServerOptions any_port()
    {
        server::ServerOptions o;
        o.port = 0;
        return o;
    }
    Served(daemon::DaemonOptions options, const std::filesystem::path& token_file)
        : daemon(std::move(options))
        , tokens(access::TokenStore::load_or_create(token_file))
        , server(daemon, tokens, any_port())
    {
        server.start();
    }
};

} // namespace fulcrum::testing_support
