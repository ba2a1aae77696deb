#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fulcrum::protocol {

inline constexpr std::uint16_t kDefaultPort = 7480;
// What every program's --server takes (fulcrumctl, fulcrum-worker, the console, the Python
// client), for their help and their errors.
inline constexpr std::string_view kServerForms = "ws://HOST:PORT, wss://HOST:PORT (TLS) or HOST:PORT";
inline constexpr std::string_view kDefaultServer = "ws://127.0.0.1:7480";

// fulcrumd's address as every program names it: ws://HOST:PORT, wss://HOST:PORT, or
// HOST:PORT for a plain WebSocket; a trailing "/" is allowed, a left-out port is 7480, and an
// IPv6 host is written in brackets ([::1]:7480).
struct ServerAddress {
    std::string host;
    std::uint16_t port = kDefaultPort;
    bool tls = false;

    std::string url() const; // ws://HOST:PORT or wss://HOST:PORT
    bool operator==(const ServerAddress&) const = default;
};

// Throws InputError naming `field` (the option or variable it came from) and the forms it
// takes.
ServerAddress parse_server_address(std::string_view text, std::string_view field = "--server");

// The server a program connects to: `given` (its --server) when set, else $FULCRUM_SERVER,
// else kDefaultServer; parsed, naming whichever it came from when it is bad.
ServerAddress server_address(const std::optional<std::string>& given);

} // namespace fulcrum::protocol
