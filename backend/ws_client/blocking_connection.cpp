#include "ws_client/blocking_connection.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <thread>
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
    // After the handshake every read and write of the stream runs on this thread (an implicit
    // strand), so a read is always pending: the server's pings are answered, and a heartbeat
    // goes out, while the caller's thread computes.
    std::thread io_thread;
    std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
    // Set once the io thread is done (closed, or a handler failed): nothing posted runs then.
    std::atomic<bool> io_over { false };

    // What the io thread read, for read(); it stops reading while kMaxIncoming wait.
    static constexpr std::size_t kMaxIncoming = 64;
    std::mutex mutex;
    std::condition_variable arrived;
    std::deque<std::pair<std::string, bool>> incoming;
    bool closed = false; // the server closed the connection, or it failed
    std::string close_reason; // what the server's close frame said
    bool reading = false; // io thread: an async_read is pending

    // The io thread's alone.
    struct Outgoing {
        std::shared_ptr<const std::string> bytes;
        bool binary = false;
        std::shared_ptr<std::promise<beast::error_code>> done; // null: a heartbeat
    };
    std::deque<Outgoing> outgoing;
    bool writing = false;
    beast::flat_buffer buffer;
    net::steady_timer heartbeat { io };
    bool closing = false;

    template <class F> decltype(auto) visit(F&& f)
    {
        if (auto* plain = std::get_if<PlainStream>(&ws))
            return f(*plain);
        return f(std::get<TlsStream>(ws));
    }

    void start()
    {
        work.emplace(net::make_work_guard(io));
        net::post(io, [this] { read_next(); });
        io_thread = std::thread([this] {
            try {
                io.run();
            } catch (...) { // a handler cannot throw but for memory: the connection is over
                std::lock_guard lock(mutex);
                closed = true;
            }
            io_over = true;
            arrived.notify_all();
        });
    }

    void read_next() // io thread
    {
        if (reading || closing)
            return;
        {
            std::lock_guard lock(mutex);
            if (closed || incoming.size() >= kMaxIncoming)
                return;
        }
        reading = true;
        visit([this](auto& stream) {
            stream.async_read(buffer, [this, &stream](beast::error_code ec, std::size_t) {
                reading = false;
                {
                    std::lock_guard lock(mutex);
                    if (ec) {
                        closed = true;
                        if (ec == websocket::error::closed)
                            close_reason = std::string(stream.reason().reason.c_str());
                    } else
                        incoming.emplace_back(beast::buffers_to_string(buffer.data()), stream.got_binary());
                }
                buffer.consume(buffer.size());
                arrived.notify_all();
                if (ec)
                    heartbeat.cancel();
                else
                    read_next();
            });
        });
    }

    void write_next() // io thread
    {
        if (writing || outgoing.empty())
            return;
        writing = true;
        visit([this](auto& stream) {
            stream.binary(outgoing.front().binary);
            stream.async_write(net::buffer(*outgoing.front().bytes), [this](beast::error_code ec, std::size_t) {
                writing = false;
                const Outgoing sent = std::move(outgoing.front());
                outgoing.pop_front();
                if (sent.done)
                    sent.done->set_value(ec);
                write_next();
            });
        });
    }

    void send(std::shared_ptr<const std::string> bytes, bool binary)
    {
        if (io_over)
            throw beast::system_error(net::error::not_connected);
        auto done = std::make_shared<std::promise<beast::error_code>>();
        std::future<beast::error_code> sent = done->get_future();
        net::post(io, [this, bytes = std::move(bytes), binary, done] {
            if (closing) {
                done->set_value(net::error::operation_aborted);
                return;
            }
            outgoing.push_back({ bytes, binary, done });
            write_next();
        });
        // The io thread may end before it runs what was posted (close() on another thread,
        // a failed handler): look at it between short waits.
        while (sent.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready)
            if (io_over)
                throw beast::system_error(net::error::not_connected);
        if (const beast::error_code ec = sent.get())
            throw beast::system_error(ec);
    }

    void beat(std::chrono::milliseconds every, const std::shared_ptr<const std::string>& text) // io thread
    {
        heartbeat.expires_after(every);
        heartbeat.async_wait([this, every, text](beast::error_code ec) {
            if (ec || closing)
                return;
            outgoing.push_back({ text, false, nullptr });
            write_next();
            beat(every, text);
        });
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
        beast::error_code ignored; // small frames go at once, not after the server's delayed ACK (see ws_server)
        beast::get_lowest_layer(ws).socket().set_option(tcp::no_delay(true), ignored);
        if constexpr (std::is_same_v<std::decay_t<decltype(ws)>, TlsStream>) {
            ws.next_layer().set_verify_callback(net::ssl::host_name_verification(o.host));
            beast::error_code literal;
            net::ip::make_address(o.host, literal);
            if (literal) // a name: the server's certificate for it (RFC 6066 sends no IP address)
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
        // An IPv6 host goes in brackets in the Host header (RFC 7230).
        ws.handshake(response, o.host.find(':') == std::string::npos ? o.host : "[" + o.host + "]", "/", ec);
        if (ec) {
            if (response.result() == beast::http::status::unauthorized)
                throw ConnectError(
                    ConnectError::Kind::Unauthorized, "fulcrumd refused the token (HTTP 401): " + o.token_hint);
            if (response.result() == beast::http::status::too_many_requests)
                throw ConnectError(ConnectError::Kind::Unauthorized,
                    "fulcrumd is refusing this address after too many failed tokens (HTTP 429); try again in "
                        + std::string(response[beast::http::field::retry_after]) + " s with a valid token");
            throw ConnectError(
                ConnectError::Kind::Unreachable, "WebSocket handshake with " + where + " failed: " + ec.message());
        }
        ws.read_message_max(o.max_frame_bytes);
    });
    impl_->start();
}

BlockingConnection::~BlockingConnection()
{
    try {
        close();
    } catch (...) { // a thread that cannot be joined: nothing more to do on the way out
    }
}

void BlockingConnection::send_text(const std::string& text)
{
    impl_->send(std::make_shared<const std::string>(text), false);
}

void BlockingConnection::send_binary(const std::string& bytes)
{
    impl_->send(std::make_shared<const std::string>(bytes), true);
}

std::optional<std::string> BlockingConnection::read(bool* binary, const std::atomic<bool>* stop,
    std::optional<std::chrono::steady_clock::time_point> until, bool* timed_out)
{
    std::unique_lock lock(impl_->mutex);
    // Look at `stop` between short waits: a signal handler sets it and notifies no one.
    constexpr auto kLook = std::chrono::milliseconds(100);
    if (timed_out)
        *timed_out = false;
    while (impl_->incoming.empty() && !impl_->closed && !(stop && stop->load())) {
        const auto now = std::chrono::steady_clock::now();
        if (until && now >= *until) {
            if (timed_out)
                *timed_out = true;
            break;
        }
        impl_->arrived.wait_until(lock, until ? std::min(*until, now + kLook) : now + kLook);
    }
    if (impl_->incoming.empty())
        return std::nullopt;
    auto [frame, was_binary] = std::move(impl_->incoming.front());
    impl_->incoming.pop_front();
    if (impl_->incoming.size() + 1 == Impl::kMaxIncoming) // reading stopped for room: go on
        net::post(impl_->io, [impl = impl_.get()] { impl->read_next(); });
    *binary = was_binary;
    return std::move(frame);
}

std::string BlockingConnection::close_reason() const
{
    std::lock_guard lock(impl_->mutex);
    return impl_->close_reason;
}

void BlockingConnection::keep_alive(std::chrono::milliseconds every, const std::string& text)
{
    if (impl_->io_thread.joinable())
        net::post(impl_->io,
            [impl = impl_.get(), every, text = std::make_shared<const std::string>(text)] { impl->beat(every, text); });
}

void BlockingConnection::close()
{
    Impl& impl = *impl_;
    if (!impl.io_thread.joinable())
        return;
    // The close handshake, given two seconds: a server that does not answer (stopped, gone)
    // has its socket closed instead.
    net::steady_timer deadline(impl.io);
    net::post(impl.io, [&impl, &deadline] {
        impl.closing = true;
        impl.heartbeat.cancel();
        const auto shut = [&impl] {
            impl.visit([](auto& stream) {
                beast::error_code ignored;
                beast::get_lowest_layer(stream).socket().close(ignored);
            });
        };
        deadline.expires_after(std::chrono::seconds(2));
        deadline.async_wait([shut](beast::error_code ec) {
            if (!ec)
                shut();
        });
        bool over = false;
        {
            std::lock_guard lock(impl.mutex);
            over = impl.closed;
        }
        if (over) {
            deadline.cancel();
            shut();
        } else {
            impl.visit([&deadline, shut](auto& stream) {
                stream.async_close(websocket::close_code::normal, [&deadline, shut](beast::error_code) {
                    deadline.cancel();
                    shut();
                });
            });
        }
        impl.work.reset();
    });
    impl.io_thread.join();
    std::lock_guard lock(impl.mutex);
    impl.closed = true;
}

} // namespace fulcrum::ws_client
