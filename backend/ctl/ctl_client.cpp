#include "ctl/ctl_client.h"

#include "common/error.h"
#include "protocol/codec.h"
#include "protocol/token_file.h"
#include "ws_client/blocking_connection.h"

#include <charconv>
#include <cstdlib>

namespace fulcrum::ctl {

using namespace protocol;

std::string resolve_token(const std::optional<std::filesystem::path>& token_file)
{
    if (token_file) {
        try {
            const auto lines = read_token_file(*token_file);
            if (const auto token = pick_token(lines, { Role::Admin, Role::Operator, Role::Viewer }, true))
                return *token;
        } catch (const InputError& e) {
            throw CtlError(kBadInput, "--token-file " + e.source() + ": " + e.reason());
        }
        throw CtlError(kBadInput, "--token-file " + token_file->string() + ": no operator or viewer token in it");
    }
    if (const char* token = std::getenv("FULCRUM_TOKEN"); token && *token)
        return token;
    throw CtlError(kBadInput,
        "no token: give --token-file FILE (fulcrumd's token file, or a file holding your token) or set FULCRUM_TOKEN");
}

struct CtlClient::Impl {
    std::unique_ptr<ws_client::BlockingConnection> connection;

    std::optional<ServerMessage> next(
        std::optional<std::chrono::steady_clock::time_point> until = std::nullopt, bool* timed_out = nullptr)
    {
        for (;;) {
            bool binary = false;
            const auto frame = connection->read(&binary, nullptr, until, timed_out);
            if (!frame)
                return std::nullopt;
            if (binary)
                continue;
            auto decoded = decode_server(*frame);
            if (!decoded)
                throw CtlError(kFailed, "fulcrumd sent a frame fulcrumctl cannot read: " + decoded.error.message);
            return std::move(*decoded.message);
        }
    }
};

CtlClient::CtlClient(const ClientOptions& options)
    : impl_(std::make_unique<Impl>())
{
    ServerAddress address;
    try {
        address = parse_server_address(options.server);
    } catch (const InputError& e) {
        throw CtlError(kBadInput, e.what());
    }
    const ws_client::ConnectOptions c { .host = address.host,
        .port = address.port,
        .token = options.token,
        .tls = address.tls,
        .trusted = options.ca_file,
        .user_agent = "fulcrumctl/0.1",
        .max_frame_bytes = kMaxFrameBytes,
        .token_hint = "give an operator or viewer token (--token-file or FULCRUM_TOKEN)" };
    try {
        impl_->connection = std::make_unique<ws_client::BlockingConnection>(c);
    } catch (const ws_client::ConnectError& e) {
        throw CtlError(e.kind() == ws_client::ConnectError::Kind::Unauthorized ? kRefused : kUnreachable, e.what());
    }
    impl_->connection->send_text(encode(ClientMessage { Hello { kProtocolVersion, "fulcrumctl" } }));
    const auto first = impl_->next();
    if (!first)
        throw CtlError(kUnreachable, "fulcrumd closed the connection before its welcome");
    if (const auto* e = std::get_if<ProtocolError>(&*first))
        throw CtlError(kRefused, "fulcrumd refused the connection: " + e->error.code + ": " + e->error.message);
    const auto* welcome = std::get_if<Welcome>(&*first);
    if (!welcome)
        throw CtlError(kFailed, "fulcrumd did not begin with a welcome");
    welcome_ = *welcome;
}

CtlClient::~CtlClient()
{
    if (impl_ && impl_->connection)
        impl_->connection->close();
}

Reply CtlClient::request(ClientMessage message)
{
    const std::string id = "ctl-" + std::to_string(next_id_++);
    std::visit(
        [&](auto& m) {
            if constexpr (requires { m.id; })
                m.id = id;
        },
        message);
    impl_->connection->send_text(encode(message));
    for (;;) {
        auto m = impl_->next();
        if (!m)
            throw CtlError(kUnreachable, "fulcrumd closed the connection before it replied");
        if (auto* reply = std::get_if<Reply>(&*m); reply && reply->id == id) {
            if (reply->error)
                throw CtlError(kRefused,
                    "fulcrumd refused: " + reply->error->code + ": " + reply->error->message
                        + (reply->error->field.empty() ? "" : " (field " + reply->error->field + ")"));
            return std::move(*reply);
        }
        if (const auto* e = std::get_if<ProtocolError>(&*m))
            throw CtlError(kRefused, "fulcrumd: " + e->error.code + ": " + e->error.message);
    }
}

std::optional<ServerMessage> CtlClient::next(
    std::optional<std::chrono::steady_clock::time_point> until, bool* timed_out)
{
    return impl_->next(until, timed_out);
}

} // namespace fulcrum::ctl
