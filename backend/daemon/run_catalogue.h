#pragma once

#include "daemon/io_path.h"
#include "daemon/server_folders.h"
#include "protocol/messages.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace fulcrum::daemon {

// The run stores fulcrumd serves: DATA_DIR/runs, where its jobs record (job-N.db), then the
// configured runs folders. Reading them is disk work: callers run it off the I/O threads.
class RunCatalogue {
public:
    explicit RunCatalogue(const ServerFolders& folders);

    // Every run of every store; a file that cannot be read is listed with its reason as the
    // status. A name found in an earlier folder hides the same name later on. A store is
    // read again only when it changed: its listing is kept while the store's file and its
    // SQLite journals keep their identity, size and modification times (and the store its
    // change time), once those times are a second older than `now` (a change within the
    // same tick of the file system's clock would otherwise go unseen; an empty journal's
    // times do not count).
    std::vector<protocol::RunListing> runs(
        std::chrono::system_clock::time_point now = std::chrono::system_clock::now()) const;
    // How many times a store has been opened and read for runs().
    std::uint64_t stores_read() const { return stores_read_.load(); }
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
    // A store's files as stat() sees them: the database, its WAL and its rollback journal.
    struct Stamp {
        struct File {
            bool present = false;
            std::uint64_t device = 0, inode = 0, size = 0;
            std::int64_t modified_ns = 0, changed_ns = 0;
            bool operator==(const File&) const = default;
        };
        File files[3];
        bool operator==(const Stamp&) const = default;
        static Stamp of(const std::filesystem::path& store);
        bool settled(std::chrono::system_clock::time_point now) const;
    };
    struct Listed {
        Stamp stamp;
        std::vector<protocol::RunListing> runs;
    };
    std::vector<protocol::RunListing> read_store(const std::filesystem::path& file) const;

    const ServerFolders& folders_;
    mutable StateMutex listed_mutex_; // the disk threads' lists, held for a lookup or an update
    mutable std::map<std::filesystem::path, Listed> listed_;
    mutable std::atomic<std::uint64_t> stores_read_ { 0 };
};

} // namespace fulcrum::daemon
