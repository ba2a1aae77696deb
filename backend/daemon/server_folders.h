#pragma once

#include "common/error.h"

#include <filesystem>
#include <string>
#include <vector>

namespace fulcrum::daemon {

// The folders fulcrumd reads and writes on a client's behalf. A path that arrives over the
// protocol (a scenario's data set or NARX warm-start file, a replay's run store) is a name
// relative to one of these and never leaves it: absolute paths, `..` and symbolic links
// that lead outside are refused before any file is opened, so a client learns nothing
// about the rest of the server's disk. Local tools (fulcrum-run, fulcrumd --scenario)
// take any path.
enum class FolderKind { Datasets, Models, Runs };
std::string_view to_string(FolderKind kind);

// A path given over the protocol that is not a name inside the server's folders. The field
// is the scenario's or message's field path; the daemon answers `illegal-value`.
class OutsidePath : public InputError {
public:
    using InputError::InputError;
};

struct FolderOptions {
    // Searched in order; the defaults are DATA_DIR/datasets then Debian's data set packages'
    // /usr/share/datasets for data sets, DATA_DIR/models for NARX networks. Run stores are in
    // DATA_DIR/runs (where jobs record) and then in `runs`, folders of recorded runs to
    // list and replay (the console's private fulcrumd reads a run file's own folder so).
    std::vector<std::filesystem::path> datasets;
    std::vector<std::filesystem::path> models;
    std::vector<std::filesystem::path> runs;
};

class ServerFolders {
public:
    // Creates DATA_DIR/runs, DATA_DIR/models and DATA_DIR/datasets if missing.
    ServerFolders(const std::filesystem::path& data_dir, FolderOptions options = {});

    // The file or folder `name` names in the folders of `kind`, the first that has it.
    // Throws OutsidePath(source, field, reason) for an empty, absolute or `..` name, one that
    // a link leads out of its folder, or one that no folder has.
    std::filesystem::path resolve(
        FolderKind kind, const std::string& name, const std::string& source, const std::string& field) const;
    // Where a new file of `kind` is created (the first folder): run stores go to DATA_DIR/runs.
    const std::filesystem::path& home(FolderKind kind) const;
    // Every folder of `kind`, in search order.
    const std::vector<std::filesystem::path>& roots(FolderKind kind) const;
    // `text` with every server folder written as its kind's name ("/srv/fulcrum/runs/job-1.db"
    // → "runs/job-1.db"), for messages that go to clients.
    std::string for_clients(std::string text) const;

private:
    std::vector<std::filesystem::path> datasets_, models_, runs_; // each canonical
};

} // namespace fulcrum::daemon
