#pragma once

#include "protocol/messages.h"
#include "protocol/server_address.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace fulcrum::ctl {

// fulcrumctl's exit statuses (documented in its --help and docs/operations.md).
enum ExitStatus : int { kOk = 0, kFailed = 1, kBadInput = 2, kRefused = 3, kUnreachable = 4 };

// A failure with the exit status it maps to.
class CtlError : public std::runtime_error {
public:
    CtlError(ExitStatus status, const std::string& message)
        : std::runtime_error(message)
        , status_(status)
    {
    }
    ExitStatus status() const { return status_; }

private:
    ExitStatus status_;
};

struct ClientOptions {
    // fulcrumd's address in any of protocol::kServerForms (protocol/server_address.h).
    std::string server = std::string(protocol::kDefaultServer);
    std::string token;
    std::filesystem::path ca_file; // wss://: trust this CA (PEM); empty: the system's
};

// The token to use: from --token-file (its operator token, else its viewer token, else a
// bare one), else $FULCRUM_TOKEN. Throws CtlError(kBadInput) naming the file.
std::string resolve_token(const std::optional<std::filesystem::path>& token_file);

// One connection to fulcrumd: said hello to, then requests and their replies, or the
// streams of a subscription. Throws CtlError: kUnreachable when fulcrumd cannot be reached
// or drops the connection, kRefused when it refuses the token or a request.
class CtlClient {
public:
    explicit CtlClient(const ClientOptions& options);
    ~CtlClient();
    CtlClient(const CtlClient&) = delete;
    CtlClient& operator=(const CtlClient&) = delete;

    const protocol::Welcome& welcome() const { return welcome_; }
    // Sends the request with a fresh id and returns its reply; stream messages that come
    // before it are dropped. A reply with an error throws CtlError(kRefused) naming its
    // code and field.
    protocol::Reply request(protocol::ClientMessage message);
    // The next message from the server; unset when it closed the connection, or when `until`
    // passed first (then *timed_out is set).
    std::optional<protocol::ServerMessage> next(
        std::optional<std::chrono::steady_clock::time_point> until = std::nullopt, bool* timed_out = nullptr);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    protocol::Welcome welcome_;
    int next_id_ = 1;
};

} // namespace fulcrum::ctl
