#include "access/auth.h"

#include "common/error.h"
#include "log/log.h"
#include "protocol/codec.h"
#include "protocol/token_file.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <fstream>
#include <mutex>
#include <openssl/crypto.h>
#include <random>
#include <sys/stat.h>

namespace fulcrum::access {

namespace {

struct Entry {
    std::string token;
    Grant grant;
};

// What the file holds now, and how to tell it changed.
struct FileStamp {
    std::filesystem::file_time_type modified;
    std::uintmax_t size = 0;
    bool operator==(const FileStamp&) const = default;
};

std::optional<FileStamp> stamp_of(const std::filesystem::path& path)
{
    std::error_code ec;
    const auto modified = std::filesystem::last_write_time(path, ec);
    if (ec)
        return std::nullopt;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec)
        return std::nullopt;
    return FileStamp { modified, size };
}

std::vector<Entry> read_entries(const std::filesystem::path& path)
{
    std::vector<Entry> entries;
    for (const protocol::TokenLine& line : protocol::read_kept_token_file(path)) {
        if (!line.role) // fulcrumd's own file names every token's role
            throw InputError(path.string(), "", "a token without its role: expected 'ROLE [NAME] TOKEN' on every line");
        entries.push_back({ line.token, Grant { *line.role, line.name, TenantReach::of(*line.role, line.tenant) } });
    }
    return entries;
}

// Equal in time independent of where they differ (tokens of equal length; a length
// mismatch says only that the length is wrong).
bool same_token(std::string_view a, std::string_view b)
{
    return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

// Creates the file readable by its owner only: no window where others can read it.
std::ofstream open_private(const std::filesystem::path& path, std::ios::openmode mode)
{
    if (path.has_parent_path())
        std::filesystem::create_directories(path.parent_path());
    const mode_t old_mask = ::umask(077);
    std::ofstream out(path, mode);
    ::umask(old_mask);
    return out;
}

} // namespace

// The entries are a published snapshot that every upgrade reads; a reload (the server's
// one-second check, or an upgrade that finds the file changed) reads the file with no lock
// held and replaces them whole.
struct TokenStore::State {
    std::filesystem::path path;
    std::mutex stamp_mutex; // a hand-off (IoPath): held to compare or set the stamp and the counts
    std::atomic<std::shared_ptr<const std::vector<Entry>>> entries;
    std::optional<FileStamp> stamp;
    TokenStore::Changes changes;
};

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

TokenStore TokenStore::load_or_create(const std::filesystem::path& path, bool* created)
{
    if (created)
        *created = false;
    if (!std::filesystem::exists(path)) {
        std::ofstream out = open_private(path, std::ios::out);
        if (!out)
            throw InputError(path.string(), "", "cannot create the token file");
        out << "# fulcrumd tokens: ROLE [NAME] TOKEN (operator: streams and commands; viewer: streams only;\n"
            << "# worker: joins jobs as a remote worker, fulcrum-worker). NAME, when given, is who holds the\n"
            << "# token: the audit trail names them. fulcrumd --add-token ROLE NAME adds one; delete a line\n"
            << "# to revoke its token (read again within seconds, open sessions closed).\n"
            << "operator " << generate_token() << "\nviewer " << generate_token() << "\nworker " << generate_token()
            << "\n";
        out.close();
        std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
            std::filesystem::perm_options::replace);
        if (created)
            *created = true;
    }
    TokenStore store;
    store.state_ = std::make_shared<State>();
    store.state_->path = path;
    store.state_->stamp = stamp_of(path);
    store.state_->entries.store(std::make_shared<const std::vector<Entry>>(read_entries(path)));
    return store;
}

std::string TokenStore::add_token(const std::filesystem::path& path, protocol::Role role, const std::string& name,
    const std::optional<std::string>& tenant)
{
    if (!protocol::valid_token_name(name))
        throw InputError("--add-token", "NAME", "a name is 1 to 64 letters, digits and . _ - @ +, got '" + name + "'");
    if (tenant && !protocol::valid_tenant_name(*tenant))
        throw InputError(
            "--add-token", "tenant", "a tenant is 1 to 64 letters, digits and . _ - @ +, got '" + *tenant + "'");
    if (std::filesystem::exists(path)) {
        const std::vector<Entry> entries = read_entries(path); // a malformed file is named before anything is appended
        const bool tenants = std::any_of(entries.begin(), entries.end(),
            [](const Entry& e) { return e.grant.reach.tenant != protocol::kDefaultTenant; });
        if (tenants && role == protocol::Role::Operator && !tenant)
            throw InputError("--add-token", "tenant",
                "this token file names tenants, and an operator line without one would reach every tenant's jobs: "
                "give tenant=T, or add an admin token if that is meant");
    }
    std::string token = generate_token();
    std::ofstream out = open_private(path, std::ios::out | std::ios::app);
    out << protocol::to_string(role) << ' ' << name << ' ' << token;
    if (tenant)
        out << " tenant=" << *tenant;
    out << '\n';
    out.close();
    if (!out)
        throw InputError(path.string(), "", "cannot append to the token file");
    return token;
}

std::optional<std::string_view> bearer_token(std::string_view header)
{
    constexpr std::string_view kScheme = "bearer";
    if (header.size() <= kScheme.size() || header[kScheme.size()] != ' ')
        return std::nullopt;
    for (std::size_t i = 0; i < kScheme.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(header[i])) != kScheme[i])
            return std::nullopt;
    std::string_view token = header.substr(kScheme.size());
    while (!token.empty() && token.front() == ' ')
        token.remove_prefix(1);
    if (token.empty())
        return std::nullopt;
    return token;
}

std::optional<Grant> TokenStore::authorize(std::string_view header) const
{
    reload_if_changed();
    const std::optional<std::string_view> token = bearer_token(header);
    if (!token)
        return std::nullopt;
    return grant_of(std::string(*token));
}

std::optional<Grant> TokenStore::grant_of(const std::string& token) const
{
    std::optional<Grant> found;
    for (const Entry& e : *state_->entries.load()) // every entry, whether or not one matched already
        if (same_token(e.token, token))
            found = e.grant;
    return found;
}

void warn_unconfined(const TokenStore& tokens)
{
    for (const std::string& name : tokens.unconfined_operators())
        log::warning("operator token reaches every tenant",
            { { "token", name }, { "why", "its line names no tenant, as the last release's lines did" },
                { "fix", "add tenant=T to confine it to a tenant, or write admin for operator" } });
}

std::vector<std::string> TokenStore::unconfined_operators() const
{
    const auto entries = state_->entries.load();
    const bool tenants = std::any_of(entries->begin(), entries->end(),
        [](const Entry& e) { return e.grant.reach.tenant != protocol::kDefaultTenant; });
    std::vector<std::string> out;
    if (tenants)
        for (const Entry& e : *entries)
            if (e.grant.role == protocol::Role::Operator && e.grant.reach.all)
                out.push_back(e.grant.name.empty() ? "(a line naming no one)" : e.grant.name);
    return out;
}

std::optional<std::string> TokenStore::token_for(protocol::Role role) const
{
    for (const Entry& e : *state_->entries.load())
        if (e.grant.role == role)
            return e.token;
    return std::nullopt;
}

bool TokenStore::reload_if_changed(std::string* problem) const
{
    const std::optional<FileStamp> now = stamp_of(state_->path);
    {
        const std::lock_guard lock(state_->stamp_mutex);
        if (now == state_->stamp)
            return false;
    }
    std::shared_ptr<const std::vector<Entry>> entries;
    try {
        entries = std::make_shared<const std::vector<Entry>>(read_entries(state_->path));
    } catch (const InputError& e) {
        if (problem)
            *problem = e.what();
        const std::lock_guard lock(state_->stamp_mutex);
        state_->stamp = now; // said once; the tokens read last stay in force
        ++state_->changes.failures;
        state_->changes.problem = e.what();
        return false;
    }
    const std::lock_guard lock(state_->stamp_mutex);
    state_->stamp = now;
    state_->entries.store(std::move(entries));
    ++state_->changes.reads;
    return true;
}

TokenStore::Changes TokenStore::changes() const
{
    const std::lock_guard lock(state_->stamp_mutex);
    return state_->changes;
}

} // namespace fulcrum::access
