#include "protocol/token_file.h"

#include "common/error.h"
#include "common/file_text.h"
#include "common/tenant_name.h"
#include "protocol/codec.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace fulcrum::protocol {

namespace {
constexpr std::size_t kMinTokenChars = 16;
}

std::vector<TokenLine> read_token_file(const std::filesystem::path& path)
{
    std::ifstream file(path);
    if (!file)
        throw InputError(path.string(), "", "cannot be read");
    std::ostringstream text;
    text << file.rdbuf();
    return parse_token_text(text.str(), path);
}

std::vector<TokenLine> read_kept_token_file(const std::filesystem::path& path)
{
    return parse_token_text(read_file_text(path, kMaxStateFileBytes), path);
}

std::vector<TokenLine> parse_token_text(const std::string& text, const std::filesystem::path& path)
{
    std::istringstream in(text);
    std::vector<TokenLine> lines;
    // A misplaced word is named in the error unless it is as long as a token could be: the
    // error goes to the log, and a token written in the wrong place must not follow it there.
    const auto shown = [](const std::string& word) {
        return word.size() < kMinTokenChars
            ? "'" + word + "'"
            : "a word of " + std::to_string(word.size()) + " characters (not shown: it may be a token)";
    };
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        if (const auto hash = line.find('#'); hash != std::string::npos)
            line.erase(hash);
        std::istringstream fields(line);
        std::vector<std::string> words;
        for (std::string word; fields >> word;)
            words.push_back(std::move(word));
        if (words.empty())
            continue;
        const std::string where = "line " + std::to_string(number);
        TokenLine entry;
        constexpr std::string_view kTenant = "tenant=";
        if (words.size() >= 3 && words.back().starts_with(kTenant)) {
            std::string tenant = words.back().substr(kTenant.size());
            if (!valid_tenant_name(tenant))
                throw InputError(
                    path.string(), where, "a tenant is 1 to 64 letters, digits and . _ - @ +, got " + shown(tenant));
            entry.tenant = std::move(tenant);
            words.pop_back();
        }
        if (words.size() > 3)
            throw InputError(path.string(), where, "expected 'ROLE NAME TOKEN [tenant=T]' or 'ROLE TOKEN [tenant=T]'");
        entry.token = words.back();
        if (words.size() >= 2) {
            entry.role = role_named(words[0]);
            if (!entry.role)
                throw InputError(
                    path.string(), where, "role must be admin, operator, viewer or worker, got " + shown(words[0]));
        }
        if (words.size() == 3) {
            if (!valid_token_name(words[1]))
                throw InputError(
                    path.string(), where, "a name is 1 to 64 letters, digits and . _ - @ +, got " + shown(words[1]));
            entry.name = words[1];
        }
        if (entry.token.size() < kMinTokenChars)
            throw InputError(path.string(), where, "a token must have at least 16 characters");
        lines.push_back(std::move(entry));
    }
    if (lines.empty())
        throw InputError(path.string(), "", "holds no token");
    return lines;
}

std::optional<std::string> pick_token(
    const std::vector<TokenLine>& lines, std::initializer_list<Role> preference, bool bare)
{
    for (const Role role : preference)
        for (const TokenLine& line : lines)
            if (line.role == role)
                return line.token;
    if (bare)
        for (const TokenLine& line : lines)
            if (!line.role)
                return line.token;
    return std::nullopt;
}

bool valid_tenant_name(std::string_view name)
{
    return fulcrum::valid_tenant_name(name);
}

bool valid_token_name(std::string_view name)
{
    return fulcrum::valid_tenant_name(name); // a holder's name takes the same characters
}

} // namespace fulcrum::protocol
