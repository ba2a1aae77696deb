#include "daemon/server_folders.h"

#include "common/named_values.h"

#include <algorithm>

namespace fulcrum::daemon {

namespace fs = std::filesystem;

namespace {

constexpr NameTable<FolderKind, 3> kFolderNames { { { FolderKind::Datasets, "datasets" },
    { FolderKind::Models, "models" }, { FolderKind::Runs, "runs" } } };

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

std::string_view to_string(FolderKind kind)
{
    return name_of(kFolderNames, kind);
}

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

fs::path ServerFolders::resolve(
    FolderKind kind, const std::string& name, const std::string& source, const std::string& field) const
{
    const std::string folder = "the server's " + std::string(to_string(kind)) + " folder";
    if (name.empty())
        throw OutsidePath(source, field, "is empty; expected the name of an entry in " + folder);
    const fs::path relative(name);
    if (relative.has_root_name() || relative.has_root_directory())
        throw OutsidePath(source, field,
            "'" + name + "' is an absolute path; fulcrumd takes only names inside " + folder
                + " (list them with list-runs, or ask the operator which " + std::string(to_string(kind)) + " it has)");
    for (const fs::path& part : relative)
        if (part == "..")
            throw OutsidePath(source, field, "'" + name + "' climbs out of " + folder + " with '..'");
    for (const fs::path& root : roots(kind)) {
        std::error_code ec;
        const fs::path candidate = root / relative;
        if (!fs::exists(candidate, ec))
            continue;
        fs::path real = fs::canonical(candidate, ec);
        if (ec || !inside(root, real))
            throw OutsidePath(source, field, "'" + name + "' is a link that leads out of " + folder);
        return real;
    }
    throw OutsidePath(source, field, "there is no '" + name + "' in " + folder);
}

std::string ServerFolders::for_clients(std::string text) const
{
    std::vector<std::pair<std::string, std::string>> prefixes;
    for (const FolderKind kind : { FolderKind::Datasets, FolderKind::Models, FolderKind::Runs })
        for (const fs::path& root : roots(kind))
            prefixes.emplace_back((root / "").string(), std::string(to_string(kind)) + "/");
    // Longest first, so a folder inside another is named by its own kind.
    std::sort(
        prefixes.begin(), prefixes.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
    for (const auto& [from, to] : prefixes)
        for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
            text.replace(at, from.size(), to);
    return text;
}

} // namespace fulcrum::daemon
