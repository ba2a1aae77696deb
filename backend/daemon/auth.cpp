#include "daemon/auth.h"

#include "common/error.h"
#include "protocol/token_file.h"

#include <fstream>
#include <random>
#include <sys/stat.h>

namespace fulcrum::daemon {

std::string generate_token()
{
    std::random_device device; // /dev/urandom on Linux
    static constexpr char kHex[] = "0123456789abcdef";
    std::string token;
    for (int i = 0; i < 32; ++i) {
        const unsigned byte = device() & 0xffu;
        token += kHex[byte >> 4];
        token += kHex[byte & 0xfu];
    }
    return token;
}

TokenStore TokenStore::from_entries(std::map<std::string, protocol::Role> entries)
{
    TokenStore store;
    store.tokens_ = std::move(entries);
    return store;
}

TokenStore TokenStore::load_or_create(const std::filesystem::path& path, bool* created)
{
    if (created)
        *created = false;
    if (!std::filesystem::exists(path)) {
        if (path.has_parent_path())
            std::filesystem::create_directories(path.parent_path());
        const mode_t old_mask = ::umask(077); // the file is born 0600: no window where others can read it
        std::ofstream out(path);
        ::umask(old_mask);
        if (!out)
            throw InputError(path.string(), "", "cannot create the token file");
        out << "# fulcrumd tokens: ROLE TOKEN (operator: streams and commands; viewer: streams only;\n"
            << "# worker: joins jobs as a remote worker, fulcrum-worker)\n"
            << "operator " << generate_token() << "\nviewer " << generate_token() << "\nworker " << generate_token()
            << "\n";
        out.close();
        std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
            std::filesystem::perm_options::replace);
        if (created)
            *created = true;
    }
    TokenStore store;
    for (const protocol::TokenLine& line : protocol::read_token_file(path)) {
        if (!line.role) // fulcrumd's own file names every token's role
            throw InputError(path.string(), "", "a token without its role: expected 'ROLE TOKEN' on every line");
        store.tokens_[line.token] = *line.role;
    }
    return store;
}

std::optional<protocol::Role> TokenStore::authorize(std::string_view header) const
{
    constexpr std::string_view kBearer = "Bearer ";
    if (header.substr(0, kBearer.size()) != kBearer)
        return std::nullopt;
    const auto it = tokens_.find(std::string(header.substr(kBearer.size())));
    if (it == tokens_.end())
        return std::nullopt;
    return it->second;
}

std::optional<std::string> TokenStore::token_for(protocol::Role role) const
{
    for (const auto& [token, r] : tokens_)
        if (r == role)
            return token;
    return std::nullopt;
}

} // namespace fulcrum::daemon
