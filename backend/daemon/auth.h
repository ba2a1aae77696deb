#pragma once

#include "protocol/messages.h"

#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace fulcrum::daemon {

// The bearer tokens fulcrumd accepts and the role each grants. The file has one token a
// line, "ROLE TOKEN" with ROLE operator, viewer or worker; '#' starts a comment.
class TokenStore {
public:
    // Reads the file; when it does not exist, writes one with a new operator, viewer and
    // worker token (mode 0600) and sets `created`. Throws InputError naming the file
    // and line for a malformed one.
    static TokenStore load_or_create(const std::filesystem::path& path, bool* created = nullptr);
    static TokenStore from_entries(std::map<std::string, protocol::Role> entries);

    // The role of a `Bearer TOKEN` Authorization header value, or nothing.
    std::optional<protocol::Role> authorize(std::string_view authorization_header) const;
    std::optional<std::string> token_for(protocol::Role role) const;

private:
    std::map<std::string, protocol::Role> tokens_;
};

// 32 random bytes from the system's generator, as 64 hex digits.
std::string generate_token();

} // namespace fulcrum::daemon
