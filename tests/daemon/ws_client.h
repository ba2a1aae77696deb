#pragma once

// A small blocking WebSocket client for the daemon tests (Boost.Beast), speaking the
// protocol through the same codec as the console, over plain TCP or TLS.

#include "protocol/codec.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <chrono>
#include <deque>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <sys/socket.h>
#include <sys/time.h>

namespace fulcrum::testing_support {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;

template <class Next> class BasicWsClient {
    static constexpr bool kTls = std::is_same_v<Next, beast::ssl_stream<net::ip::tcp::socket>>;

public:
    // Connects and upgrades; an empty token sends no Authorization header. Over TLS the
    // server's certificate must chain to `trusted` and name 127.0.0.1.
    // Throws boost::system::system_error when the server refuses the handshake or upgrade.
    // `receive_buffer` (bytes, 0: the system's) is set before connecting, so that TCP
    // negotiates its window for it: a small one makes a client that stops reading stall the
    // server's sends at once.
    BasicWsClient(unsigned short port, const std::string& token, const std::filesystem::path& trusted = {},
        int receive_buffer = 0)
        : tls_(net::ssl::context::tls_client)
        , ws_(make_stream(trusted))
    {
        auto& socket = beast::get_lowest_layer(ws_);
        const net::ip::tcp::endpoint server(net::ip::make_address("127.0.0.1"), port);
        socket.open(server.protocol());
        if (receive_buffer > 0)
            socket.set_option(net::socket_base::receive_buffer_size(receive_buffer));
        socket.connect(server);
        if constexpr (kTls) {
            ws_.next_layer().set_verify_callback(net::ssl::host_name_verification("127.0.0.1"));
            ws_.next_layer().handshake(net::ssl::stream_base::client);
        }
        ws_.set_option(websocket::stream_base::decorator([token](websocket::request_type& request) {
            request.set(beast::http::field::user_agent, "fulcrum-test");
            if (!token.empty())
                request.set(beast::http::field::authorization, "Bearer " + token);
        }));
        ws_.handshake("127.0.0.1", "/");
    }

    void send(const protocol::ClientMessage& message) { send_text(protocol::encode(message)); }
    void send_text(const std::string& text)
    {
        ws_.text(true);
        ws_.write(net::buffer(text));
    }

    protocol::ServerMessage receive()
    {
        if (!held_.empty()) {
            protocol::ServerMessage m = std::move(held_.front());
            held_.pop_front();
            return m;
        }
        beast::flat_buffer buffer;
        ws_.read(buffer);
        const auto decoded = protocol::decode_server(beast::buffers_to_string(buffer.data()));
        if (!decoded)
            throw std::runtime_error("undecodable server frame: " + decoded.error.message);
        return *decoded.message;
    }

    // Reads until `match` accepts a message; returns it.
    template <class Message>
    Message receive_until(const std::function<bool(const Message&)>& match = [](const Message&) { return true; })
    {
        for (;;) {
            protocol::ServerMessage m = receive();
            if (const auto* wanted = std::get_if<Message>(&m); wanted && match(*wanted))
                return *wanted;
        }
    }

    protocol::Reply request(const protocol::ClientMessage& message, const std::string& id)
    {
        send(message);
        return receive_until<protocol::Reply>([&](const protocol::Reply& r) { return r.id == id; });
    }
    // As request, keeping what came before the reply for the next receives: a command's
    // consequence (a row its exclusion released, say) may be sent before its reply.
    protocol::Reply request_keeping(const protocol::ClientMessage& message, const std::string& id)
    {
        send(message);
        std::deque<protocol::ServerMessage> before;
        for (;;) {
            protocol::ServerMessage m = receive();
            if (const auto* r = std::get_if<protocol::Reply>(&m); r && r->id == id) {
                held_.insert(held_.begin(), before.begin(), before.end());
                return *r;
            }
            before.push_back(std::move(m));
        }
    }

    websocket::stream<Next>& stream() { return ws_; }

    struct Closed {
        int code = 0;
        std::string reason;
    };
    // Reads, discarding frames, until the server's close frame (its code and reason), the
    // connection dropping without one (code 1006), or `within` passing (nothing).
    std::optional<Closed> wait_closed(std::chrono::milliseconds within)
    {
        const timeval tv { static_cast<time_t>(within.count() / 1000),
            static_cast<suseconds_t>((within.count() % 1000) * 1000) };
        auto& socket = beast::get_lowest_layer(ws_);
        ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        const auto deadline = std::chrono::steady_clock::now() + within;
        while (std::chrono::steady_clock::now() < deadline) {
            beast::flat_buffer buffer;
            beast::error_code ec;
            ws_.read(buffer, ec);
            if (ec == websocket::error::closed)
                return Closed { static_cast<int>(ws_.reason().code), std::string(ws_.reason().reason.c_str()) };
            if (ec == net::error::would_block || ec == net::error::try_again)
                return std::nullopt;
            if (ec)
                return Closed { 1006, ec.message() };
        }
        return std::nullopt;
    }

private:
    std::deque<protocol::ServerMessage> held_; // read by request_keeping before its reply
    websocket::stream<Next> make_stream(const std::filesystem::path& trusted)
    {
        if constexpr (kTls) {
            tls_.set_verify_mode(net::ssl::verify_peer);
            if (!trusted.empty())
                tls_.load_verify_file(trusted.string());
            return websocket::stream<Next>(io_, tls_);
        } else {
            return websocket::stream<Next>(io_);
        }
    }

    net::io_context io_;
    net::ssl::context tls_;
    websocket::stream<Next> ws_;
};

using WsClient = BasicWsClient<net::ip::tcp::socket>;
using TlsWsClient = BasicWsClient<beast::ssl_stream<net::ip::tcp::socket>>;

// One HTTP request over plain TCP from `source` (a loopback address such as 127.0.0.2, so
// that a test has a second client host), with `token` as its bearer token: a WebSocket
// upgrade of "/" (answered 101 when the server lets the client in), or a GET of `target`.
// Returns the server's answer with its Retry-After and body.
struct HttpAnswer {
    int status = 0;
    std::string retry_after;
    std::string body;
};
inline HttpAnswer http_request(
    unsigned short port, const std::string& token, const std::string& source = "127.0.0.1", const std::string& get = {})
{
    net::io_context io;
    net::ip::tcp::socket socket(io);
    socket.open(net::ip::tcp::v4());
    socket.bind(net::ip::tcp::endpoint(net::ip::make_address(source), 0));
    socket.connect(net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    beast::http::request<beast::http::empty_body> request(beast::http::verb::get, get.empty() ? "/" : get, 11);
    request.set(beast::http::field::host, "127.0.0.1");
    if (get.empty()) {
        request.set(beast::http::field::upgrade, "websocket");
        request.set(beast::http::field::connection, "upgrade");
        request.set(beast::http::field::sec_websocket_key, "dGhlIHNhbXBsZSBub25jZQ==");
        request.set(beast::http::field::sec_websocket_version, "13");
    }
    request.set(beast::http::field::user_agent, "fulcrum-test-http");
    if (!token.empty())
        request.set(beast::http::field::authorization, "Bearer " + token);
    beast::http::write(socket, request);
    beast::flat_buffer buffer;
    beast::http::response<beast::http::string_body> response;
    beast::http::read(socket, buffer, response);
    // Closed with a reset: a flood's thousands of sockets bound to `source` would otherwise
    // wait in TIME_WAIT on their ports, where a test beside it binding the wildcard address
    // (torch.distributed's TCPStore) to a port it was just given would find them in use.
    // (Closed here: Asio's destructor would clear the linger option first.)
    socket.set_option(net::socket_base::linger(true, 0));
    beast::error_code ignored;
    socket.close(ignored);
    return { static_cast<int>(response.result_int()), std::string(response[beast::http::field::retry_after]),
        response.body() };
}

} // namespace fulcrum::testing_support
