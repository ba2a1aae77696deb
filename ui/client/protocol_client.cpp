#include "ui/client/protocol_client.h"

#include "common/error.h"
#include "protocol/codec.h"
#include "protocol/server_address.h"

#include <QFile>
#include <QHostInfo>
#include <QNetworkRequest>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QTimer>
#include <QWebSocket>
#include <algorithm>

namespace fulcrum::ui {

std::optional<QUrl> server_url(const QString& text, QString* problem, const char* field)
{
    try {
        return QUrl(QString::fromStdString(protocol::parse_server_address(text.trimmed().toStdString(), field).url()));
    } catch (const InputError& e) {
        if (problem)
            *problem = QString::fromStdString(e.what());
        return std::nullopt;
    }
}

QString default_server()
{
    const QByteArray env = qgetenv("FULCRUM_SERVER");
    return env.isEmpty() ? QString::fromLatin1(protocol::kDefaultServer.data(), protocol::kDefaultServer.size())
                         : QString::fromLocal8Bit(env);
}

struct ProtocolClient::Impl {
    QWebSocket socket;
    QTimer reconnect;
    bool closing = false;
};

namespace {

// Qt 6.4 reports a refused upgrade only through the error text ("Unhandled http status code:
// 401 (Unauthorized)"); fulcrumd answers a missing or wrong token with 401.
bool is_unauthorized(const QString& error)
{
    return error.contains(QStringLiteral("401"));
}

QString role_name(protocol::Role role)
{
    return QString::fromStdString(std::string(protocol::to_string(role)));
}

} // namespace

QString describe(ProtocolClient::State state)
{
    switch (state) {
    case ProtocolClient::State::Disconnected:
        return QStringLiteral("not connected");
    case ProtocolClient::State::Connecting:
        return QStringLiteral("connecting");
    case ProtocolClient::State::Connected:
        return QStringLiteral("connected");
    case ProtocolClient::State::WaitingToReconnect:
        return QStringLiteral("reconnecting");
    case ProtocolClient::State::Failed:
        return QStringLiteral("failed");
    }
    return {};
}

ProtocolClient::ProtocolClient(QObject* parent)
    : QObject(parent)
    , impl_(std::make_unique<Impl>())
{
    impl_->socket.setMaxAllowedIncomingMessageSize(protocol::kMaxFrameBytes);
    impl_->reconnect.setSingleShot(true);
    connect(&impl_->reconnect, &QTimer::timeout, this, [this] { open(address_); });
    connect(&impl_->socket, &QWebSocket::connected, this, &ProtocolClient::on_connected);
    connect(&impl_->socket, &QWebSocket::textMessageReceived, this, &ProtocolClient::on_text);
    connect(&impl_->socket, &QWebSocket::disconnected, this, &ProtocolClient::on_disconnected);
    connect(&impl_->socket, qOverload<QAbstractSocket::SocketError>(&QWebSocket::error), this,
        [this](QAbstractSocket::SocketError) {
            const QString why = impl_->socket.errorString();
            if (is_unauthorized(why))
                return fail(QStringLiteral(
                    "wrong token: %1 refused the token (HTTP 401). Use a token from fulcrumd's token file.")
                                .arg(address_.url.toString()));
            if (state_ == State::Connecting)
                schedule_reconnect(why);
        });
    connect(&impl_->socket, &QWebSocket::sslErrors, this, [this](const QList<QSslError>& errors) {
        QStringList texts;
        for (const QSslError& e : errors)
            texts << e.errorString();
        fail(QStringLiteral(
            "TLS certificate of %1 refused: %2. Give the CA file that signed it (or the certificate itself).")
                 .arg(address_.url.host(), texts.join(QStringLiteral("; "))));
    });
}

ProtocolClient::~ProtocolClient()
{
    impl_->closing = true;
    impl_->socket.disconnect(this);
    impl_->socket.abort();
}

int ProtocolClient::reconnect_delay_ms(int attempt)
{
    const int shift = std::clamp(attempt - 1, 0, 5);
    return std::min(1000 << shift, 30000);
}

void ProtocolClient::set_state(State state, QString status)
{
    state_ = state;
    status_ = std::move(status);
    emit stateChanged();
}

void ProtocolClient::open(ServerAddress address)
{
    if (!(address == address_))
        attempt_ = 0;
    address_ = std::move(address);
    impl_->reconnect.stop();
    // Leave the old connection quietly: its drop is no reason to reconnect.
    impl_->closing = true;
    impl_->socket.abort();
    impl_->closing = false;
    if (welcomed_) {
        welcomed_ = false;
        emit sessionLost(QStringLiteral("the console switched to %1").arg(address_.url.toString()));
    }
    role_.reset();
    const QString scheme = address_.url.scheme();
    if (!address_.url.isValid() || (scheme != QStringLiteral("ws") && scheme != QStringLiteral("wss"))
        || address_.url.host().isEmpty())
        return fail(QStringLiteral("server address '%1': expected ws://HOST:PORT or wss://HOST:PORT")
                        .arg(address_.url.toString()));

    QNetworkRequest request(address_.url);
    request.setRawHeader("Authorization", "Bearer " + address_.token.trimmed().toUtf8());
    request.setTransferTimeout(10000);
    if (scheme == QStringLiteral("wss")) {
        QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
        if (!address_.ca_file.isEmpty()) {
            QFile file(address_.ca_file);
            if (!file.open(QIODevice::ReadOnly))
                return fail(
                    QStringLiteral("CA file %1: cannot be read (%2)").arg(address_.ca_file, file.errorString()));
            const QList<QSslCertificate> certificates = QSslCertificate::fromDevice(&file, QSsl::Pem);
            if (certificates.isEmpty())
                return fail(QStringLiteral("CA file %1: no PEM certificate in it").arg(address_.ca_file));
            tls.addCaCertificates(certificates);
        }
        impl_->socket.setSslConfiguration(tls);
    }
    set_state(State::Connecting,
        attempt_ == 0 ? QStringLiteral("connecting to %1").arg(address_.url.toString())
                      : QStringLiteral("reconnecting to %1 (attempt %2)").arg(address_.url.toString()).arg(attempt_));
    impl_->socket.open(request);
}

void ProtocolClient::close()
{
    impl_->reconnect.stop();
    impl_->closing = true;
    const bool had_session = welcomed_;
    welcomed_ = false;
    impl_->socket.close();
    set_state(State::Disconnected, QStringLiteral("not connected"));
    if (had_session)
        emit sessionLost(QStringLiteral("closed by the operator"));
}

void ProtocolClient::on_connected()
{
    const std::string client = "fulcrum " FULCRUM_VERSION " on " + QHostInfo::localHostName().toStdString();
    impl_->socket.sendTextMessage(QString::fromStdString(
        protocol::encode(protocol::ClientMessage { protocol::Hello { protocol::kProtocolVersion, client } })));
}

void ProtocolClient::on_text(const QString& frame)
{
    const auto decoded = protocol::decode_server(frame.toStdString());
    if (!decoded) {
        // A server that sends what this console cannot read: say so, keep the connection.
        status_ = QStringLiteral("unreadable message from the server: %1 (%2)")
                      .arg(QString::fromStdString(decoded.error.message), QString::fromStdString(decoded.error.field));
        emit stateChanged();
        return;
    }
    const protocol::ServerMessage& message = *decoded.message;
    if (const auto* welcome = std::get_if<protocol::Welcome>(&message)) {
        welcomed_ = true;
        attempt_ = 0;
        role_ = welcome->role;
        // "as operator of tenant ml", "as admin (every tenant)"; a server of the last release
        // names no tenant, and its clients reach every job.
        const QString tenant = welcome->all_tenants ? QStringLiteral(" (every tenant)")
            : welcome->tenant == protocol::kDefaultTenant
            ? QString()
            : QStringLiteral(" of tenant %1").arg(QString::fromStdString(welcome->tenant));
        set_state(State::Connected,
            QStringLiteral("connected to %1 at %2, as %3%4")
                .arg(QString::fromStdString(welcome->server), address_.url.toString(), role_name(welcome->role),
                    tenant));
        if (subscription_)
            subscription_id_ = send(*subscription_);
        send(protocol::ListCapabilities { "capabilities" }); // what the dialogs may offer
        emit sessionStarted();
    } else if (const auto* error = std::get_if<protocol::ProtocolError>(&message);
               error && error->error.code == "version-mismatch") {
        emit received(message);
        return fail(QStringLiteral("version mismatch: %1. Use a console of the server's version.")
                        .arg(QString::fromStdString(error->error.message)));
    }
    emit received(message);
    if (const auto* end = std::get_if<protocol::SnapshotEnd>(&message);
        end && !subscription_id_.empty() && end->id == subscription_id_)
        emit snapshotReceived();
}

void ProtocolClient::on_disconnected()
{
    if (impl_->closing || state_ == State::Failed || state_ == State::WaitingToReconnect)
        return;
    const QString why
        = impl_->socket.closeReason().isEmpty() ? impl_->socket.errorString() : impl_->socket.closeReason();
    schedule_reconnect(why.isEmpty() ? QStringLiteral("the server closed the connection") : why);
}

void ProtocolClient::schedule_reconnect(const QString& why)
{
    const bool had_session = welcomed_;
    welcomed_ = false;
    role_.reset();
    ++attempt_;
    const int delay = reconnect_delay_ms(attempt_);
    set_state(State::WaitingToReconnect,
        QStringLiteral("%1 (%2); reconnecting in %3 s (attempt %4)")
            .arg(had_session ? QStringLiteral("connection lost")
                             : QStringLiteral("cannot connect to %1").arg(address_.url.toString()),
                why)
            .arg(delay / 1000)
            .arg(attempt_));
    impl_->reconnect.start(delay);
    if (had_session)
        emit sessionLost(why);
}

void ProtocolClient::fail(const QString& why)
{
    impl_->reconnect.stop();
    impl_->closing = true;
    const bool had_session = welcomed_;
    welcomed_ = false;
    role_.reset();
    impl_->socket.abort();
    set_state(State::Failed, why);
    if (had_session)
        emit sessionLost(why);
}

std::string ProtocolClient::send(protocol::ClientMessage message)
{
    if (!welcomed_)
        return {};
    std::string id = std::visit(
        [this](auto& m) -> std::string {
            if constexpr (requires { m.id; }) {
                if (m.id.empty())
                    m.id = "c" + std::to_string(next_id_++);
                return m.id;
            } else {
                return {};
            }
        },
        message);
    impl_->socket.sendTextMessage(QString::fromStdString(protocol::encode(message)));
    return id;
}

void ProtocolClient::set_subscription(protocol::Subscribe subscription)
{
    subscription_ = std::move(subscription);
    if (!welcomed_)
        return;
    if (!subscription_id_.empty())
        send(protocol::Unsubscribe { subscription_id_ });
    subscription_id_ = send(*subscription_);
}

} // namespace fulcrum::ui
