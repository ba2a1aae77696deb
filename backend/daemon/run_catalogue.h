#pragma once

#include "daemon/server_folders.h"
#include "protocol/messages.h"

#include <filesystem>
#include <string>
#include <vector>

namespace fulcrum::daemon {

// The run stores fulcrumd serves: DATA_DIR/runs, where its jobs record (job-N.db), then the
// configured runs folders. Reading them is disk work: callers run it off the I/O threads.
class RunCatalogue {
public:
    explicit RunCatalogue(const ServerFolders& folders);

    // Every run of every store; a file that cannot be read is listed with its reason as the
    // status. A name found in an earlier folder hides the same name later on.
    std::vector<protocol::RunListing> runs() const;
    // A client's run store name (a plain file name, as list-runs gives it) as a path.
    // Throws RefusedRequest("unknown-run").
    std::filesystem::path run_store(const std::string& database) const;
    // Where job `id` records.
    std::filesystem::path job_store(JobId id) const;
    static std::string job_store_name(JobId id);
    // Job ids go on from the largest job-N.db, so a restarted fulcrumd never hands out an
    // id (and a run store) that an earlier one used.
    JobId first_free_job_id() const;

private:
    const ServerFolders& folders_;
};

} // namespace fulcrum::daemon
