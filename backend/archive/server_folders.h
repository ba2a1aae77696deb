#pragma once

#include "common/error.h"
#include "common/server_path.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace fulcrum::archive {

// The folders fulcrumd reads and writes on a client's behalf. A path that arrives over the
// protocol (a scenario's data set or NARX warm-start file, a replay's run store) is a name
// relative to one of these and never leaves it: absolute paths, `..` and symbolic links
// that lead outside are refused before any file is opened, so a client learns nothing
// about the rest of the server's disk. Local tools (fulcrum-run, fulcrumd --scenario)
// take any path. As the scenario parser's path policy, it confines every path field of a
// scenario or a policy section a client sends while the field is read.
using fulcrum::FolderKind;
using fulcrum::OutsidePath;

struct FolderOptions {
    // Searched in order; the defaults are DATA_DIR/datasets then Debian's data set packages'
    // /usr/share/datasets for data sets, DATA_DIR/models for NARX networks. Run stores are in
    // DATA_DIR/runs (where jobs record) and then in `runs`, folders of recorded runs to
    // list and replay (the console's private fulcrumd reads a run file's own folder so).
    std::vector<std::filesystem::path> datasets;
    std::vector<std::filesystem::path> models;
    std::vector<std::filesystem::path> runs;
};

class ServerFolders final : public PathPolicy {
public:
    // Creates DATA_DIR/runs, DATA_DIR/models and DATA_DIR/datasets if missing.
    ServerFolders(const std::filesystem::path& data_dir, FolderOptions options = {});

    // The file or folder `name` names in the folders of `kind`, the first that has it.
    // Refuses, with the reason in `why`, a name that is empty, holds a control character, is
    // absolute, climbs with `..`, names a folder itself ("." or "a/."), is a link leading out
    // of its folder, or that no folder has. The reason names `name` and the folder's role,
    // never where the folder is.
    std::optional<std::string> resolve(
        FolderKind kind, const std::string& name, const std::string& field, std::string& why) const override;
    // The same, throwing OutsidePath(source, field, reason) on a refusal.
    std::filesystem::path resolve(
        FolderKind kind, const std::string& name, const std::string& source, const std::string& field) const;
    // The regular file an entry of the folder `root` (one of roots()) lists: the entry itself,
    // or, for a link, the file it leads to when that stays inside `root` (listing a folder must
    // not follow a planted link out of it); nothing for anything else. Only a link is resolved
    // (a listing of 1,000 stores made 2,000 realpath calls when every entry was).
    static std::optional<std::filesystem::path> listed_file(
        const std::filesystem::path& root, const std::filesystem::directory_entry& entry);
    // Where a new file of `kind` is created (the first folder): run stores go to DATA_DIR/runs.
    const std::filesystem::path& home(FolderKind kind) const;
    // Every folder of `kind`, in search order.
    const std::vector<std::filesystem::path>& roots(FolderKind kind) const;
    // `text` with every server folder written as its kind's name ("/srv/fulcrum/runs/job-1.db"
    // → "runs/job-1.db", "/srv/fulcrum/models" → "models"), for messages that go to clients.
    std::string for_clients(std::string text) const;

private:
    std::vector<std::filesystem::path> datasets_, models_, runs_; // each canonical
};

// What a job its operator gave locally (fulcrumd --scenario) names, read again at recovery:
// an absolute path as given (only that operator can have written one), a name inside the
// folders, as for a client (a policy a client set on the job and its checkpoint kept).
class LocalJobPaths final : public PathPolicy {
public:
    explicit LocalJobPaths(const ServerFolders& folders)
        : folders_(folders)
    {
    }
    std::optional<std::string> resolve(
        FolderKind kind, const std::string& name, const std::string& field, std::string& why) const override;

private:
    const ServerFolders& folders_;
};

} // namespace fulcrum::archive
