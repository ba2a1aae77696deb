#include "server/ws_server.h"

#include "access/auth.h"
#include "daemon/daemon.h"
#include "log/log.h"
#include "protocol/codec.h"
#include "protocol/worker_frames.h"
#include "serve/thread_role.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <cmath>
#include <csignal>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

namespace fulcrum::server {

using daemon::Daemon;
using serve::Client;
using serve::close_reason_that_fits;
using serve::Frame;

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;

namespace {

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// Frames are read in parts of this size, so that one above its limit is answered with
// frame-too-large before the 1009 close, and never held whole.
constexpr std::size_t kReadPart = 64u << 10;

// "127.0.0.1:40312", "[::1]:40312".
std::string peer_text(const tcp::endpoint& peer)
{
    const net::ip::address a = peer.address();
    const std::string host = a.is_v6() ? "[" + a.to_string() + "]" : a.to_string();
    return host + ":" + std::to_string(peer.port());
}

// What stop() and a token's revocation need of a session, whichever stream it runs on.
class Closable {
public:
    virtual ~Closable() = default;
    // Ends the connection at once (the server stops).
    virtual void close() = 0;
    // Ends it with a close frame that says why (1008, policy violation): frames still queued
    // are dropped and what the client sends meanwhile is ignored.
    virtual void close_for(std::string reason) = 0;
    // The token the session was let in with (empty before the upgrade), and what it granted then.
    virtual std::string token() const = 0;
    virtual access::Grant grant() const = 0;
};

// The sessions alive, so stop() can close them.
struct Sessions {
    std::mutex mutex; // a hand-off (IoPath): held to add or remove one, or for the token re-check's scan
    std::set<std::shared_ptr<Closable>> open;
};

// One connection: the upgrade (after the TLS handshake on a TLS port), the token check,
// then frames both ways. `Next` is the WebSocket's next layer: plain TCP or TLS over TCP.
template <class Next> class Session : public Closable, public std::enable_shared_from_this<Session<Next>> {
public:
    Session(tcp::socket socket, net::ssl::context* tls, Daemon& daemon, const access::TokenStore& tokens,
        Sessions& sessions, MetricsAccess metrics)
        : ws_(make_stream(std::move(socket), tls))
        , daemon_(daemon)
        , tokens_(tokens)
        , sessions_(sessions)
        , metrics_(metrics)
        , auth_(daemon.auth_limiter())
    {
        beast::error_code ec;
        const auto remote = beast::get_lowest_layer(ws_).socket().remote_endpoint(ec);
        if (!ec) {
            peer_ = peer_text(remote);
            source_ = access::AuthLimiter::source_of(remote.address().to_string());
        }
    }

    void start()
    {
        net::dispatch(ws_.get_executor(), [self = this->shared_from_this()] { self->handshake(); });
    }

    std::string token() const override
    {
        std::lock_guard lock(token_mutex_);
        return token_;
    }

    access::Grant grant() const override
    {
        std::lock_guard lock(token_mutex_);
        return grant_;
    }

    void close_for(std::string reason) override
    {
        net::post(ws_.get_executor(), [self = this->shared_from_this(), reason = std::move(reason)]() mutable {
            if (self->finished_)
                return;
            if (!self->ws_.is_open()) { // not upgraded yet: nothing to say it with
                beast::error_code ec;
                beast::get_lowest_layer(self->ws_).socket().close(ec);
                return;
            }
            self->ending_ = true;
            self->why_closed_ = reason;
            self->close_code_ = websocket::close_code::policy_error;
            self->close_text_ = close_reason_that_fits(std::move(reason)); // Beast throws past 123 bytes
            self->closing_ = true; // nothing it sends is read from here on (on_read)
            self->write_next();
        });
    }

    void close() override
    {
        net::post(ws_.get_executor(), [self = this->shared_from_this()] {
            if (self->why_closed_.empty())
                self->why_closed_ = "fulcrumd stopping";
            beast::error_code ec;
            auto& socket = beast::get_lowest_layer(self->ws_).socket();
            if (socket.is_open())
                socket.shutdown(tcp::socket::shutdown_both, ec);
            socket.close(ec);
        });
    }

private:
    static Next make_stream(tcp::socket socket, net::ssl::context* tls)
    {
        if constexpr (std::is_same_v<Next, TlsStream>)
            return Next(beast::tcp_stream(std::move(socket)), *tls);
        else
            return Next(std::move(socket));
    }

    auto shared_from_this() { return std::enable_shared_from_this<Session<Next>>::shared_from_this(); }

    void handshake()
    {
        if constexpr (std::is_same_v<Next, TlsStream>) {
            beast::get_lowest_layer(ws_).expires_after(std::chrono::seconds(30));
            ws_.next_layer().async_handshake(
                net::ssl::stream_base::server, [self = shared_from_this()](beast::error_code ec) {
                    if (ec) { // not TLS, or a certificate the client refused
                        log::debug("tls handshake failed", { { "peer", self->peer() }, { "reason", ec.message() } });
                        return self->finish();
                    }
                    self->read_upgrade();
                });
        } else {
            read_upgrade();
        }
    }

    void read_upgrade()
    {
        beast::get_lowest_layer(ws_).expires_after(std::chrono::seconds(30));
        http::async_read(ws_.next_layer(), buffer_, request_,
            [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_upgrade(ec); });
    }

    // The request refused, said in the log (never its token) and to the client. A failed
    // token is a warning (20 a source at most: the limit follows); anything else anyone may
    // send without a token (a scanner's GET) is a debug line, so it cannot flood the log.
    void reject(http::status status, std::string why, std::string_view logged_reason)
    {
        constexpr std::size_t kTargetShown = 200;
        const std::string_view target = request_.target();
        log::write(status == http::status::unauthorized ? log::Level::Warning : log::Level::Debug, "request refused",
            { { "peer", peer() }, { "target", target.substr(0, std::min(target.size(), kTargetShown)) },
                { "status", static_cast<int>(status) }, { "reason", logged_reason } });
        respond(status, "text/plain", std::move(why) + "\n");
    }

    // A failed token, counted against its source before it is answered (the next attempt
    // must find the limit), then refused; a limit it begins is logged after the refusal.
    void refuse_token(std::string why, std::string_view logged_reason)
    {
        const bool began = auth_.failed(source_, access::AuthLimiter::Clock::now());
        reject(http::status::unauthorized, std::move(why), logged_reason);
        if (began)
            log::warning("source limited",
                { { "source", source_ }, { "failures", auth_.options().failures },
                    { "for_s", std::chrono::duration<double>(auth_.options().window).count() },
                    { "reason", "too many failed upgrades: answered 429 until the limit ends" } });
    }

    // The source is limited: 429 with when to come back, its token not read.
    bool refuse_if_limited()
    {
        const auto left = auth_.limited(source_, access::AuthLimiter::Clock::now());
        if (!left)
            return false;
        const auto seconds = std::chrono::ceil<std::chrono::seconds>(*left).count();
        retry_after_ = std::to_string(std::max<long long>(1, seconds));
        respond(http::status::too_many_requests, "text/plain",
            "too many failed upgrades from " + source_ + ": try again in " + retry_after_ + " s\n");
        return true;
    }

    std::string peer() const { return peer_; }

    // One HTTP answer, then the connection closes.
    void respond(http::status status, const char* content_type, std::string body)
    {
        auto response = std::make_shared<http::response<http::string_body>>(status, request_.version());
        response->set(http::field::server, "fulcrumd");
        if (!retry_after_.empty())
            response->set(http::field::retry_after, retry_after_);
        response->set(http::field::content_type, content_type);
        response->keep_alive(false);
        response->body() = std::move(body);
        response->prepare_payload();
        http::async_write(
            ws_.next_layer(), *response, [self = shared_from_this(), response](beast::error_code, std::size_t) {
                beast::error_code ec;
                beast::get_lowest_layer(self->ws_).socket().shutdown(tcp::socket::shutdown_send, ec);
                self->finish();
            });
    }

    // GET /metrics for Prometheus: built from the daemon's memory, so the strand never waits.
    void serve_metrics()
    {
        if (metrics_ == MetricsAccess::Off)
            return reject(http::status::not_found, "metrics are off on this fulcrumd (--metrics off)", "metrics off");
        // A token sees the series of the tenants it reaches; loopback without one sees all.
        std::optional<access::TenantReach> reach;
        if (metrics_ == MetricsAccess::Token) {
            if (refuse_if_limited())
                return;
            const std::optional<access::Grant> grant = tokens_.authorize(request_[http::field::authorization]);
            if (!grant) {
                return refuse_token(
                    "a valid token is required for /metrics: send 'Authorization: Bearer TOKEN' (a viewer token will "
                    "do)",
                    "no valid token");
            }
            reach = grant->reach;
        }
        if (metrics_ == MetricsAccess::Loopback) {
            beast::error_code peer_ec;
            const auto peer = beast::get_lowest_layer(ws_).socket().remote_endpoint(peer_ec);
            if (peer_ec || !peer.address().is_loopback())
                return reject(http::status::forbidden,
                    "/metrics is served to loopback addresses only (--metrics loopback)", "metrics for loopback only");
            if (const auto grant = tokens_.authorize(request_[http::field::authorization]))
                reach = grant->reach;
        }
        respond(http::status::ok, "text/plain; version=0.0.4; charset=utf-8", daemon_.metrics_text(reach));
    }

    void on_upgrade(beast::error_code ec)
    {
        if (ec)
            return finish();
        if (!websocket::is_upgrade(request_) && request_.method() == http::verb::get && request_.target() == "/metrics")
            return serve_metrics();
        if (!websocket::is_upgrade(request_))
            return reject(http::status::bad_request,
                "fulcrumd speaks WebSocket here (protocol version " + std::to_string(protocol::kProtocolVersion)
                    + "); see docs/protocol.md",
                "not a WebSocket upgrade");
        if (refuse_if_limited())
            return;
        const std::string_view authorization = request_[http::field::authorization];
        const std::optional<access::Grant> grant = tokens_.authorize(authorization);
        if (!grant)
            return refuse_token("a valid token is required: send 'Authorization: Bearer TOKEN'",
                authorization.empty() ? "no token" : "unknown token");
        const protocol::Role role = grant->role;
        {
            std::lock_guard lock(token_mutex_);
            token_ = std::string(access::bearer_token(authorization).value_or(""));
            grant_ = *grant;
        }
        beast::error_code peer_ec;
        const auto peer = beast::get_lowest_layer(ws_).socket().remote_endpoint(peer_ec);
        const std::string program
            = std::string(request_[http::field::user_agent].empty() ? "client" : request_[http::field::user_agent]);
        const std::string name = program + "@"
            + (peer_ec ? std::string("?") : peer.address().to_string() + ":" + std::to_string(peer.port()));
        client_ = daemon_.connect(role, name, grant->name, grant->reach);
        program_ = program;
        opened_ = std::chrono::steady_clock::now();
        log::info("connection opened",
            { { "peer", peer_ }, { "agent", program_ }, { "role", protocol::to_string(role) }, { "token", grant->name },
                { "tenant", grant->reach.all ? std::string("*") : grant->reach.tenant },
                { "client", static_cast<std::int64_t>(client_->id()) } });
        beast::get_lowest_layer(ws_).expires_never();
        ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
        frame_limit_ = role == protocol::Role::Worker ? protocol::kMaxWorkerFrameBytes : protocol::kMaxFrameBytes;
        ws_.read_message_max(frame_limit_ + kReadPart + 1); // never reached: read_part refuses first
        ws_.async_accept(request_, [self = shared_from_this()](beast::error_code accept_ec) {
            if (accept_ec) {
                self->why_closed_ = "upgrade failed: " + accept_ec.message();
                return self->finish();
            }
            std::weak_ptr<Session> weak = self;
            self->client_->set_wake([weak] {
                if (auto s = weak.lock())
                    net::post(s->ws_.get_executor(), [s] { s->write_next(); });
            });
            self->client_->set_closer([weak](const std::string& reason) {
                if (auto s = weak.lock())
                    s->close_for(reason);
            });
            self->read();
        });
    }

    void read()
    {
        ws_.async_read_some(
            buffer_, kReadPart, [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
    }

    void on_read(beast::error_code ec)
    {
        if (finished_) // a write failed first: the session is over, and what it read is not handled
            return;
        if (ec) {
            if (why_closed_.empty())
                why_closed_ = ec == websocket::error::closed ? "closed by the client"
                    : ec == net::error::eof || ec == net::error::connection_reset
                    ? "dropped by the client (no close frame)"
                    : "read: " + ec.message();
            return finish();
        }
        client_->heard(); // each part: a large result under way is no silence
        if (buffer_.size() > frame_limit_) {
            // Said before the close: a client learns why, not only that (protocol.md).
            client_->send(protocol::ProtocolError { { "frame-too-large",
                "frames are limited to " + std::to_string(frame_limit_) + " bytes; the connection is closed", "" } });
            close_code_ = websocket::close_code::too_big;
            close_text_ = "frame too large";
            why_closed_ = "frame too large";
            closing_ = true;
            write_next();
            return;
        }
        if (!ws_.is_message_done())
            return read();
        if (ending_) { // its rights are gone: what it still sends is not read
            buffer_.consume(buffer_.size());
            return read();
        }
        if (!ws_.got_text()) {
            if (client_->role() == protocol::Role::Worker) {
                const auto data = buffer_.data();
                daemon_.receive_binary(*client_, std::string_view(static_cast<const char*>(data.data()), data.size()));
            } else {
                client_->send(
                    protocol::ProtocolError { { "wrong-type", "fulcrumd reads text frames carrying JSON", "" } });
            }
        } else {
            const std::string frame = beast::buffers_to_string(buffer_.data());
            if (daemon_.receive(*client_, frame) == Daemon::After::Close) {
                closing_ = true;
                why_closed_ = "protocol version mismatch";
            }
        }
        buffer_.consume(buffer_.size());
        if (closing_)
            return write_next();
        read();
    }

    void write_next()
    {
        if (writing_ || finished_)
            return;
        auto frame = ending_ ? std::nullopt : client_->queue().pop();
        if (!frame) {
            if (closing_) {
                ws_.async_close(websocket::close_reason(close_code_, close_text_),
                    [self = shared_from_this()](beast::error_code) { self->finish(); });
                closing_ = false;
            }
            return;
        }
        writing_ = true;
        current_ = *frame;
        ws_.binary(protocol::is_worker_frame(*current_));
        ws_.async_write(net::buffer(*current_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
            self->writing_ = false;
            self->current_.reset();
            if (ec) {
                if (self->why_closed_.empty())
                    self->why_closed_ = "write: " + ec.message();
                return self->finish();
            }
            self->write_next();
        });
    }

    void finish()
    {
        if (finished_)
            return;
        finished_ = true;
        if (client_) {
            client_->set_wake({});
            client_->set_closer({});
            daemon_.disconnect(*client_);
            log::info("connection closed",
                { { "peer", peer_ }, { "agent", program_ }, { "role", protocol::to_string(client_->role()) },
                    { "token", client_->person() }, { "client", static_cast<std::int64_t>(client_->id()) },
                    { "reason", why_closed_.empty() ? std::string("closed") : why_closed_ },
                    { "seconds", // to the millisecond
                        std::round(
                            std::chrono::duration<double>(std::chrono::steady_clock::now() - opened_).count() * 1000)
                            / 1000 } });
        }
        std::lock_guard lock(sessions_.mutex);
        sessions_.open.erase(std::static_pointer_cast<Closable>(shared_from_this()));
    }

    websocket::stream<Next> ws_;
    beast::flat_buffer buffer_;
    http::request<http::string_body> request_;
    Daemon& daemon_;
    const access::TokenStore& tokens_;
    Sessions& sessions_;
    const MetricsAccess metrics_;
    access::AuthLimiter& auth_;
    std::string peer_ = "?", source_ = "?"; // the remote end, and what the limit counts it as
    std::string program_; // the client's User-Agent
    std::string retry_after_; // a 429's Retry-After, in seconds
    std::chrono::steady_clock::time_point opened_ {};
    std::string why_closed_; // for the log line: the first reason the connection ended
    std::shared_ptr<Client> client_;
    mutable std::mutex token_mutex_; // a hand-off (IoPath): token() is read from the revocation check
    std::string token_;
    access::Grant grant_;
    std::size_t frame_limit_ = protocol::kMaxFrameBytes;
    Frame current_;
    bool writing_ = false, closing_ = false, finished_ = false;
    bool ending_ = false; // closing for a lost right: nothing more is sent or read
    websocket::close_code close_code_ = websocket::close_code::policy_error;
    std::string close_text_;
};

// A TLS context from the configured PEM files; throws std::runtime_error naming the file.
std::unique_ptr<net::ssl::context> tls_context(const ServerOptions& options)
{
    if (options.tls_certificate.empty() && options.tls_key.empty())
        return nullptr;
    if (options.tls_certificate.empty() || options.tls_key.empty())
        throw std::runtime_error("TLS needs both a certificate and a key (tls_certificate and tls_key)");
    auto context = std::make_unique<net::ssl::context>(net::ssl::context::tls_server);
    context->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2
        | net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 | net::ssl::context::no_tlsv1_1
        | net::ssl::context::single_dh_use);
    beast::error_code ec;
    context->use_certificate_chain_file(options.tls_certificate.string(), ec);
    if (ec)
        throw std::runtime_error(options.tls_certificate.string()
            + ": cannot use it as the TLS certificate chain (PEM expected): " + ec.message());
    context->use_private_key_file(options.tls_key.string(), net::ssl::context::pem, ec);
    if (ec)
        throw std::runtime_error(options.tls_key.string()
            + ": cannot use it as the TLS private key (PEM expected, matching " + options.tls_certificate.string()
            + "): " + ec.message());
    return context;
}

} // namespace

struct WebSocketServer::Impl {
    Impl(Daemon& d, const access::TokenStore& t, ServerOptions o)
        : daemon(d)
        , tokens(t)
        , options(std::move(o))
        , tls(tls_context(options))
        , acceptor(io)
    {
        const tcp::endpoint endpoint(net::ip::make_address(options.host), options.port);
        beast::error_code ec;
        acceptor.open(endpoint.protocol(), ec);
        if (!ec)
            acceptor.set_option(net::socket_base::reuse_address(true), ec);
        if (!ec)
            acceptor.bind(endpoint, ec);
        if (!ec)
            acceptor.listen(net::socket_base::max_listen_connections, ec);
        if (ec)
            throw std::runtime_error(
                "cannot listen on " + options.host + ":" + std::to_string(options.port) + ": " + ec.message());
    }

    // Every second: the token file read again if it changed, and the sessions whose token
    // it no longer holds, or holds with another role, closed with the reason (a revocation
    // or a demotion needs no restart; the client connects again with its new rights).
    void watch_tokens()
    {
        token_timer.expires_after(std::chrono::seconds(1));
        token_timer.async_wait([this](beast::error_code ec) {
            // Cancelled by stop(), or due just as it stopped: a wait armed after stop() ran
            // would keep the I/O threads, and the server's destructor, waiting for ever.
            if (ec || stopping.load())
                return;
            // An upgrade may have read the change first: the counts say what happened since
            // the last check, whoever read the file.
            tokens.reload_if_changed();
            const access::TokenStore::Changes changes = tokens.changes();
            const bool reread = changes.reads != checked.reads, failed = changes.failures != checked.failures;
            checked = changes;
            if (reread) {
                log::info("token file read again");
                access::warn_unconfined(tokens);
                std::vector<std::pair<std::shared_ptr<Closable>, std::string>> lost;
                {
                    std::lock_guard lock(sessions.mutex);
                    for (const auto& s : sessions.open) {
                        const std::string t = s->token();
                        if (t.empty())
                            continue;
                        const std::optional<access::Grant> now = tokens.grant_of(t);
                        if (!now)
                            lost.emplace_back(s, "token revoked");
                        else if (const access::Grant then = s->grant(); now->role != then.role)
                            lost.emplace_back(s,
                                "token's role changed from " + std::string(protocol::to_string(then.role)) + " to "
                                    + std::string(protocol::to_string(now->role)) + "; connect again");
                        else if (now->reach != then.reach)
                            lost.emplace_back(s,
                                "token's tenant changed from '" + then.reach.tenant + "' (reaching "
                                    + then.reach.describe() + ") to '" + now->reach.tenant + "' (reaching "
                                    + now->reach.describe() + "); connect again");
                    }
                }
                for (const auto& [s, why] : lost)
                    s->close_for(why);
            }
            if (failed) {
                log::error("token file unreadable",
                    { { "reason", changes.problem }, { "effect", "the tokens read before stay in force" } });
            }
            watch_tokens();
        });
    }

    void accept()
    {
        acceptor.async_accept(net::make_strand(io), [this](beast::error_code ec, tcp::socket socket) {
            if (ec || stopping.load())
                return; // closed by stop(), or accepted as it stopped: the socket closes here
            // A worker's push or a reply is one small write after another: with Nagle's
            // algorithm each waited for the peer's delayed ACK (40 ms on Linux), which made a
            // remote worker's pull and push on loopback take 1, 44 or 87 ms at random.
            beast::error_code ignored;
            socket.set_option(tcp::no_delay(true), ignored);
            if (tls)
                open(std::make_shared<Session<TlsStream>>(
                    std::move(socket), tls.get(), daemon, tokens, sessions, options.metrics));
            else
                open(std::make_shared<Session<PlainStream>>(
                    std::move(socket), nullptr, daemon, tokens, sessions, options.metrics));
            accept();
        });
    }

    template <class S> void open(std::shared_ptr<S> session)
    {
        {
            std::lock_guard lock(sessions.mutex);
            sessions.open.insert(session);
        }
        session->start();
        if (stopping.load()) // stop() may have closed the open sessions before this one was
            session->close();
    }

    Daemon& daemon;
    const access::TokenStore& tokens;
    ServerOptions options;
    std::unique_ptr<net::ssl::context> tls;
    net::io_context io;
    tcp::acceptor acceptor;
    Sessions sessions;
    std::vector<std::thread> threads;
    std::optional<net::signal_set> signals;
    net::steady_timer token_timer { io };
    access::TokenStore::Changes checked; // the token file's changes as the last check found them
    std::once_flag stopped;
    std::atomic<bool> stopping { false };
};

WebSocketServer::WebSocketServer(Daemon& daemon, const access::TokenStore& tokens, ServerOptions options)
    : impl_(std::make_unique<Impl>(daemon, tokens, std::move(options)))
{
}

WebSocketServer::~WebSocketServer()
{
    try {
        stop();
        wait();
    } catch (...) { // a destructor cannot report it; the process is ending the server anyway
    }
}

unsigned short WebSocketServer::port() const
{
    return impl_->acceptor.local_endpoint().port();
}
bool WebSocketServer::tls() const
{
    return impl_->tls != nullptr;
}

void WebSocketServer::stop_on_signals(std::function<void(int)> on_signal)
{
    impl_->signals.emplace(impl_->io, SIGINT, SIGTERM);
    impl_->signals->async_wait([this, on_signal = std::move(on_signal)](const beast::error_code& ec, int signal) {
        if (ec) // cancelled: the server stopped for another reason
            return;
        on_signal(signal);
        stop();
    });
}

void WebSocketServer::start()
{
    impl_->accept();
    impl_->watch_tokens();
    for (int i = 0; i < std::max(1, impl_->options.threads); ++i)
        impl_->threads.emplace_back([this] {
            serve::take_role(serve::ThreadRole::io);
            impl_->io.run();
        });
}

void WebSocketServer::stop()
{
    std::call_once(impl_->stopped, [this] {
        impl_->stopping = true;
        net::post(impl_->io, [this] {
            beast::error_code ec;
            impl_->acceptor.close(ec);
            if (impl_->signals)
                impl_->signals->cancel(ec);
            impl_->token_timer.cancel();
            std::set<std::shared_ptr<Closable>> open;
            {
                std::lock_guard lock(impl_->sessions.mutex);
                open = impl_->sessions.open;
            }
            for (const auto& s : open)
                s->close();
        });
    });
}

void WebSocketServer::wait()
{
    for (std::thread& t : impl_->threads)
        if (t.joinable())
            t.join();
    impl_->threads.clear();
}

} // namespace fulcrum::server
