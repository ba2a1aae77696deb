#pragma once

#include "protocol/messages.h"

#include <QObject>
#include <QString>
#include <QUrl>
#include <memory>
#include <optional>

namespace fulcrum::ui {

// Where the console connects: fulcrumd's ws:// or wss:// URL, a bearer token from its
// token file and, for a self-signed certificate, the CA (or the certificate itself) to
// trust.
struct ServerAddress {
    QUrl url;
    QString token;
    QString ca_file;

    bool operator==(const ServerAddress&) const = default;
};

// fulcrumd's URL from what an operator typed or passed (--server, the Connect dialog), in
// any form every Fulcrum program takes (protocol::kServerForms: ws://, wss:// or HOST:PORT);
// nothing, with the reason in `problem`, for anything else.
std::optional<QUrl> server_url(const QString& text, QString* problem = nullptr, const char* field = "server");
// $FULCRUM_SERVER when set, else ws://127.0.0.1:7480: what the Connect dialog offers first.
QString default_server();

// The console's one connection to fulcrumd and the one place JSON is read or written:
// frames are decoded by the protocol codec and handed on as typed messages. It says hello,
// keeps the subscription across reconnects and reconnects with exponential back-off after a
// drop. A wrong token, a refused TLS certificate and a protocol version mismatch are not
// retried: they need the operator.
class ProtocolClient : public QObject {
    Q_OBJECT
public:
    enum class State { Disconnected, Connecting, Connected, WaitingToReconnect, Failed };

    explicit ProtocolClient(QObject* parent = nullptr);
    ~ProtocolClient() override;

    void open(ServerAddress address);
    void close();
    State state() const { return state_; }
    const ServerAddress& address() const { return address_; }
    // The status bar's line: "connected to fulcrumd 0.1.0 at ws://…, as operator",
    // "connection lost (…); reconnecting in 4 s (attempt 3)", "wrong token: …".
    QString status_text() const { return status_; }
    std::optional<protocol::Role> role() const { return role_; }

    // Sends a request now, giving it a fresh id when it has none, and returns the id; empty
    // when not connected (nothing is queued: a command must not fire minutes later).
    std::string send(protocol::ClientMessage message);
    // Sent after every welcome, so a reconnect resumes the same streams with a new snapshot.
    void set_subscription(protocol::Subscribe subscription);

    // Back-off before reconnect attempt `attempt` (1, 2, ...): 1 s doubling to 30 s.
    static int reconnect_delay_ms(int attempt);

signals:
    void stateChanged();
    // Every decoded server message, in order.
    void received(const fulcrum::protocol::ServerMessage& message);
    // The welcome was received: commands may be sent (after each reconnect too).
    void sessionStarted();
    // The connection dropped after a welcome; requests in flight may or may not have been
    // applied.
    void sessionLost(const QString& why);
    // The subscription's snapshot has arrived in full (after each (re)connect): the models
    // now show the server's current state.
    void snapshotReceived();

private:
    struct Impl;
    void set_state(State state, QString status);
    void on_connected();
    void on_text(const QString& frame);
    void on_disconnected();
    void schedule_reconnect(const QString& why);
    void fail(const QString& why);

    std::unique_ptr<Impl> impl_;
    ServerAddress address_;
    State state_ = State::Disconnected;
    QString status_ = QStringLiteral("not connected");
    std::optional<protocol::Role> role_;
    std::optional<protocol::Subscribe> subscription_;
    std::string subscription_id_;
    bool welcomed_ = false;
    int attempt_ = 0;
    std::uint64_t next_id_ = 1;
};

QString describe(ProtocolClient::State state);

} // namespace fulcrum::ui
