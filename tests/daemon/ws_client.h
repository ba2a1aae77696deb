#pragma once

// A small blocking WebSocket client for the daemon tests (Boost.Beast), speaking the
// protocol through the same codec as the console.

#include "protocol/codec.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace fulcrum::testing_support {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;

class WsClient {
public:
    // Connects and upgrades; an empty token sends no Authorization header.
    // Throws boost::system::system_error when the server refuses the upgrade.
    WsClient(unsigned short port, const std::string& token)
        : ws_(io_)
    {
        net::ip::tcp::resolver resolver(io_);
        net::connect(ws_.next_layer(), resolver.resolve("127.0.0.1", std::to_string(port)));
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

    websocket::stream<net::ip::tcp::socket>& stream() { return ws_; }

private:
    net::io_context io_;
    websocket::stream<net::ip::tcp::socket> ws_;
};

} // namespace fulcrum::testing_support
