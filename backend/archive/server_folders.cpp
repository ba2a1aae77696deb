#include "archive/server_folders.h"

#include <algorithm>

namespace fulcrum::archive {

namespace fs = std::filesystem;

namespace {

fs::path canonical_root(const fs::path& folder)
{
    std::error_code ec;
    fs::path p = fs::weakly_canonical(fs::absolute(folder, ec), ec);
    return ec ? folder.lexically_normal() : p;
}

// `path` is `root` or below it, component by component (so /data/runs2 is not inside /data/runs).
bool inside(const fs::path& root, const fs::path& path)
{
    auto r = root.begin(), p = path.begin();
    for (; r != root.end(); ++r, ++p) {
        if (r->empty() && std::next(r) == root.end()) // a trailing separator
            return true;
        if (p == path.end() || *p != *r)
            return false;
    }
    return true;
}

} // namespace

ServerFolders::ServerFolders(const fs::path& data_dir, FolderOptions options)
{
    for (const char* own : { "runs", "models", "datasets" }) {
        std::error_code ec;
        fs::create_directories(data_dir / own, ec);
        if (ec)
            throw InputError(data_dir.string(), "",
                std::string("cannot create the data folder's ") + own + " folder: " + ec.message());
    }
    if (options.datasets.empty())
        options.datasets = { data_dir / "datasets", "/usr/share/datasets" };
    if (options.models.empty())
        options.models = { data_dir / "models" };
    for (const auto& f : options.datasets)
        datasets_.push_back(canonical_root(f));
    for (const auto& f : options.models)
        models_.push_back(canonical_root(f));
    runs_.push_back(canonical_root(data_dir / "runs"));
    for (const auto& f : options.runs)
        runs_.push_back(canonical_root(f));
}

const std::vector<fs::path>& ServerFolders::roots(FolderKind kind) const
{
    switch (kind) {
    case FolderKind::Datasets:
        return datasets_;
    case FolderKind::Models:
        return models_;
    case FolderKind::Runs:
        break;
    }
    return runs_;
}

const fs::path& ServerFolders::home(FolderKind kind) const
{
    return roots(kind).front();
}

std::optional<std::string> ServerFolders::resolve(
    FolderKind kind, const std::string& name, const std::string&, std::string& why) const
{
    const std::string folder = "the " + std::string(to_string(kind)) + " folder";
    if (const std::string problem = unusable_name(name); !problem.empty()) {
        why = problem + " of an entry in " + folder;
        return std::nullopt;
    }
    const fs::path relative(name);
    if (relative.has_root_name() || relative.has_root_directory()) {
        why = "'" + name + "' is an absolute path; fulcrumd takes only names inside " + folder
            + " (list them with list-runs, or ask the operator which " + std::string(to_string(kind)) + " it has)";
        return std::nullopt;
    }
    for (const fs::path& part : relative)
        if (part == "..") {
            why = "'" + name + "' climbs out of " + folder + " with '..'";
            return std::nullopt;
        }
    if (const fs::path normal = relative.lexically_normal(); normal.empty() || normal == ".") {
        why = "'" + name + "' names " + folder + " itself; expected an entry in it";
        return std::nullopt;
    }
    for (const fs::path& root : roots(kind)) {
        std::error_code ec;
        const fs::path candidate = root / relative;
        if (!fs::exists(fs::symlink_status(candidate, ec)))
            continue;
        const fs::path real = fs::canonical(candidate, ec);
        if (ec || !inside(root, real) || real == root) {
            // A dangling link is refused like one leading out: which it is tells a client nothing.
            why = "'" + name + "' is a link that leads out of " + folder;
            return std::nullopt;
        }
        return real.string();
    }
    why = "there is no '" + name + "' in " + folder;
    return std::nullopt;
}

fs::path ServerFolders::resolve(
    FolderKind kind, const std::string& name, const std::string& source, const std::string& field) const
{
    std::string why;
    if (std::optional<std::string> path = resolve(kind, name, field, why))
        return *path;
    throw OutsidePath(source, field, why);
}

std::optional<std::string> LocalJobPaths::resolve(
    FolderKind kind, const std::string& name, const std::string& field, std::string& why) const
{
    if (fs::path(name).is_absolute())
        return name;
    return folders_.resolve(kind, name, field, why);
}

std::optional<fs::path> ServerFolders::listed_file(const fs::path& root, const fs::directory_entry& entry)
{
    std::error_code ec;
    if (!entry.is_symlink(ec)) // the type readdir gave: no call to the file system
        return !ec && entry.is_regular_file(ec) && !ec ? std::optional(entry.path()) : std::nullopt;
    const fs::path real = fs::canonical(entry.path(), ec);
    if (ec || !inside(canonical_root(root), real) || !fs::is_regular_file(real, ec) || ec)
        return std::nullopt;
    return real;
}

std::string ServerFolders::for_clients(std::string text) const
{
    std::vector<std::pair<std::string, std::string>> prefixes;
    for (const FolderKind kind : { FolderKind::Datasets, FolderKind::Models, FolderKind::Runs })
        for (const fs::path& root : roots(kind)) {
            prefixes.emplace_back((root / "").string(), std::string(to_string(kind)) + "/");
            prefixes.emplace_back(root.string(), std::string(to_string(kind))); // the folder itself
        }
    // Longest first, so a folder inside another is named by its own kind.
    std::sort(
        prefixes.begin(), prefixes.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
    for (const auto& [from, to] : prefixes)
        for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
            text.replace(at, from.size(), to);
    return text;
}

} // namespace fulcrum::archive
