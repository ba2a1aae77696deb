#include "ws_client/blocking_connection.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <chrono>
#include <variant>

namespace fulcrum::ws_client {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;

namespace {

using PlainStream = websocket::stream<beast::tcp_stream>;
using TlsStream = websocket::stream<beast::ssl_stream<beast::tcp_stream>>;

void load_trust(net::ssl::context& tls, const ConnectOptions& o)
{
    tls.set_verify_mode(net::ssl::verify_peer);
    beast::error_code ec;
    if (o.trusted.empty())
        tls.set_default_verify_paths(ec);
    else
        tls.load_verify_file(o.trusted.string(), ec);
    if (ec)
        throw ConnectError(ConnectError::Kind::Unreachable,
            (o.trusted.empty() ? std::string("the system's certificates") : o.trusted.string())
                + ": cannot be loaded to check the server: " + ec.message());
}

} // namespace

struct BlockingConnection::Impl {
    net::io_context io;
    net::ssl::context tls { net::ssl::context::tls_client };
    std::variant<std::monostate, PlainStream, TlsStream> ws;
    bool abandoned = false; // a read was cancelled by its stop flag: the stream is not usable

    template <class F> decltype(auto) visit(F&& f)
    {
        if (auto* plain = std::get_if<PlainStream>(&ws))
            return f(*plain);
        return f(std::get<TlsStream>(ws));
    }
};

BlockingConnection::BlockingConnection(const ConnectOptions& o)
    : impl_(std::make_unique<Impl>())
{
    const std::string where = o.host + ":" + std::to_string(o.port);
    tcp::resolver resolver(impl_->io);
    beast::error_code ec;
    const auto endpoints = resolver.resolve(o.host, std::to_string(o.port), ec);
    if (ec)
        throw ConnectError(ConnectError::Kind::Unreachable, "cannot resolve " + o.host + ": " + ec.message());
    if (o.tls) {
        load_trust(impl_->tls, o);
        impl_->ws.emplace<TlsStream>(impl_->io, impl_->tls);
    } else {
        impl_->ws.emplace<PlainStream>(impl_->io);
    }
    impl_->visit([&](auto& ws) {
        beast::get_lowest_layer(ws).connect(endpoints, ec);
        if (ec)
            throw ConnectError(ConnectError::Kind::Unreachable, "cannot connect to " + where + ": " + ec.message());
        if constexpr (std::is_same_v<std::decay_t<decltype(ws)>, TlsStream>) {
            ws.next_layer().set_verify_callback(net::ssl::host_name_verification(o.host));
            SSL_set_tlsext_host_name(ws.next_layer().native_handle(), o.host.c_str());
            ws.next_layer().handshake(net::ssl::stream_base::client, ec);
            if (ec)
                throw ConnectError(ConnectError::Kind::Unreachable,
                    "TLS handshake with " + where + " failed: " + ec.message()
                        + " (a self-signed server certificate is trusted with --ca-file)");
        }
        ws.set_option(websocket::stream_base::decorator(
            [token = o.token, agent = o.user_agent](websocket::request_type& request) {
                request.set(beast::http::field::user_agent, agent);
                request.set(beast::http::field::authorization, "Bearer " + token);
            }));
        websocket::response_type response;
        ws.handshake(response, o.host, "/", ec);
        if (ec) {
            if (response.result() == beast::http::status::unauthorized)
                throw ConnectError(
                    ConnectError::Kind::Unauthorized, "fulcrumd refused the token (HTTP 401): " + o.token_hint);
            throw ConnectError(
                ConnectError::Kind::Unreachable, "WebSocket handshake with " + where + " failed: " + ec.message());
        }
        ws.read_message_max(o.max_frame_bytes);
    });
}

BlockingConnection::~BlockingConnection() = default;

void BlockingConnection::send_text(const std::string& text)
{
    impl_->visit([&](auto& ws) {
        ws.binary(false);
        ws.write(net::buffer(text));
    });
}

void BlockingConnection::send_binary(const std::string& bytes)
{
    impl_->visit([&](auto& ws) {
        ws.binary(true);
        ws.write(net::buffer(bytes));
    });
}

std::optional<std::string> BlockingConnection::read(bool* binary, const std::atomic<bool>* stop)
{
    if (impl_->abandoned)
        return std::nullopt;
    return impl_->visit([&](auto& ws) -> std::optional<std::string> {
        beast::flat_buffer buffer;
        std::optional<beast::error_code> done;
        // Read asynchronously and look at `stop` between short runs: a blocking read would
        // sleep through a signal (SA_RESTART) until the server's next frame.
        ws.async_read(buffer, [&done](beast::error_code ec, std::size_t) { done = ec; });
        constexpr auto kLook = std::chrono::milliseconds(100);
        while (!done) {
            impl_->io.restart();
            impl_->io.run_for(kLook);
            if (!done && stop && stop->load()) {
                beast::get_lowest_layer(ws).cancel();
                impl_->abandoned = true;
                impl_->io.restart();
                while (!done && impl_->io.run_one() > 0) { }
                return std::nullopt;
            }
        }
        if (*done)
            return std::nullopt;
        *binary = ws.got_binary();
        return beast::buffers_to_string(buffer.data());
    });
}

void BlockingConnection::close()
{
    impl_->visit([&](auto& ws) {
        beast::error_code ec;
        if (impl_->abandoned) // no close handshake on a stream whose read was cancelled
            beast::get_lowest_layer(ws).socket().close(ec);
        else
            ws.close(websocket::close_code::normal, ec);
    });
}

} // namespace fulcrum::ws_client
