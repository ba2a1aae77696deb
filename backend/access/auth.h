#pragma once

#include "access/tenancy.h"
#include "protocol/messages.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fulcrum::access {

// Who a token belongs to: the role it grants, the tenants whose jobs it reaches and, for a
// "ROLE NAME TOKEN" line, the person or program it was given to (named in the audit trail).
struct Grant {
    protocol::Role role = protocol::Role::Viewer;
    std::string name; // empty for a "ROLE TOKEN" line
    TenantReach reach;
    bool operator==(const Grant&) const = default;
};

// The bearer tokens fulcrumd accepts and what each grants, from its token file: one token a
// line, "ROLE NAME TOKEN [tenant=T]" or "ROLE TOKEN [tenant=T]" with ROLE admin, operator,
// viewer or worker (TenantReach says what a line without a tenant reaches); '#' starts a
// comment. The file is read again when it changes, so a line removed revokes its token
// without a restart. Copies share one state; every method may be called from any thread.
class TokenStore {
public:
    // Reads the file; when it does not exist, writes one with a new operator, viewer and
    // worker token (mode 0600) and sets `created`. Throws InputError naming the file
    // and line for a malformed one.
    static TokenStore load_or_create(const std::filesystem::path& path, bool* created = nullptr);
    // Appends a new "ROLE NAME TOKEN [tenant=T]" line to the file (created, mode 0600, if
    // missing) and returns the token. Throws InputError for a name that cannot name a holder,
    // a tenant that cannot name one, an operator without a tenant in a file that names tenants
    // (it would reach every tenant: say admin), or a file that cannot be written.
    static std::string add_token(const std::filesystem::path& path, protocol::Role role, const std::string& name,
        const std::optional<std::string>& tenant = std::nullopt);

    // The grant of a `Bearer TOKEN` Authorization header value, or nothing. Every token is
    // compared in constant time, so the time taken tells nothing about how close a guess was.
    std::optional<Grant> authorize(std::string_view authorization_header) const;
    // What `token` grants in the file as last read: nothing once revoked, a new role once
    // its line changed.
    std::optional<Grant> grant_of(const std::string& token) const;
    std::optional<std::string> token_for(protocol::Role role) const;
    // The holders of operator lines that name no tenant, once some line names a tenant other
    // than the default: they reach every tenant's jobs (TenantReach), which fulcrumd warns of.
    std::vector<std::string> unconfined_operators() const;
    // Reads the file again when its modification time or size changed since the last read.
    // True when the tokens changed; a file that no longer reads keeps the tokens in force
    // and says why in `problem`. Every upgrade calls it (a token just added works at once),
    // so a reader that must act on each change (the server's revocation check) follows
    // changes() instead of this answer.
    bool reload_if_changed(std::string* problem = nullptr) const;
    // Counts of the tokens read and of the reads that failed since the file was first read,
    // whoever read it, and why the last failed one did.
    struct Changes {
        std::uint64_t reads = 0, failures = 0;
        std::string problem;
    };
    Changes changes() const;

private:
    struct State;
    std::shared_ptr<State> state_;
};

// The token of an Authorization header value "Bearer TOKEN", the scheme matched in any case
// (RFC 7235 §2.1) and the spaces after it skipped; nothing for another scheme or no token.
std::optional<std::string_view> bearer_token(std::string_view authorization_header);

// 32 random bytes from the system's generator, as 64 hex digits.
std::string generate_token();

// A warning in fulcrumd's log for each of the file's unconfined operators (at start and at
// each change of the file), saying how to confine it.
void warn_unconfined(const TokenStore& tokens);

} // namespace fulcrum::access
