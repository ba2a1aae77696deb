#pragma once

#include "protocol/messages.h"

#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace fulcrum::protocol {

// One token of fulcrumd's token file: "ROLE NAME TOKEN" (the person or program it was given
// to, named in the audit trail), "ROLE TOKEN", or a line holding a token alone (a file
// handed to one fulcrum-worker may hold only its token); a line with a role may end with
// "tenant=T", the tenant whose jobs the token reaches.
struct TokenLine {
    std::optional<Role> role;
    std::string name; // empty when the line names no one
    std::string token;
    std::optional<std::string> tenant; // none: the line names no tenant (see access::Grant)
};

// The one reader of token files, for fulcrumd, the console and fulcrum-worker: lines
// "admin|operator|viewer|worker [NAME] TOKEN [tenant=T]", '#' comments and blank lines
// skipped. Throws InputError naming the file, the line and what was expected (a role, a
// name or tenant of letters, digits and . _ - @ +, a token of at least 16 characters); a
// file that cannot be read or holds no token is refused too. Read as a stream: a client's
// --token-file may be a pipe (`<(pass show fulcrum)`).
std::vector<TokenLine> read_token_file(const std::filesystem::path& path);
// fulcrumd's own token file, read again at every change: a regular file only (read_file_text),
// since a FIFO in its place would hang the I/O thread that reads it at an upgrade.
std::vector<TokenLine> read_kept_token_file(const std::filesystem::path& path);
// The lines of a token file's text; `path` names it in errors.
std::vector<TokenLine> parse_token_text(const std::string& text, const std::filesystem::path& path);
// Whether `name` can name a token's holder: 1 to 64 of letters, digits and . _ - @ +.
bool valid_token_name(std::string_view name);
// Whether `name` can name a tenant: the same characters as a holder's name.
bool valid_tenant_name(std::string_view name);

// The first token of the first role in `preference` that the file has; a bare token when
// `bare` allows one and no role matched.
std::optional<std::string> pick_token(
    const std::vector<TokenLine>& lines, std::initializer_list<Role> preference, bool bare = false);

} // namespace fulcrum::protocol
