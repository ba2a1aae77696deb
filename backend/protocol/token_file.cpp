#include "protocol/token_file.h"

#include "common/error.h"
#include "protocol/codec.h"

#include <fstream>
#include <sstream>

namespace fulcrum::protocol {

std::vector<TokenLine> read_token_file(const std::filesystem::path& path)
{
    std::ifstream in(path);
    if (!in)
        throw InputError(path.string(), "", "cannot be read");
    std::vector<TokenLine> lines;
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        if (const auto hash = line.find('#'); hash != std::string::npos)
            line.erase(hash);
        std::istringstream fields(line);
        std::string first, second, extra;
        if (!(fields >> first))
            continue;
        const std::string where = "line " + std::to_string(number);
        TokenLine entry;
        if (fields >> second) {
            if (fields >> extra)
                throw InputError(path.string(), where, "expected 'ROLE TOKEN'");
            for (const Role role : { Role::Operator, Role::Viewer, Role::Worker })
                if (first == to_string(role))
                    entry.role = role;
            if (!entry.role)
                throw InputError(path.string(), where, "role must be operator, viewer or worker, got '" + first + "'");
            entry.token = second;
        } else {
            entry.token = first;
        }
        if (entry.token.size() < 16)
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

} // namespace fulcrum::protocol
