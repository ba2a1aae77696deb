#pragma once

#include "archive/server_folders.h"
#include "protocol/messages.h"
#include "serve/io_path.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace fulcrum::archive {

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
    // times do not count). A store whose last read found a run still running (a live job's,
    // written at every iteration) is read again at most once a second of `now`, while it is
    // the same file and no run_ended() was said of it: its counts are then up to a second
    // old, and back-to-back listings do not read every live store each time (20 live stores
    // of 500-worker jobs were 100 ms of a listing).
    std::vector<protocol::RunListing> runs(
        std::chrono::system_clock::time_point now = std::chrono::system_clock::now()) const;
    // A store fulcrumd has stopped writing a run to (its job ended): its next listing reads it
    // anew, and a read under way when this is said is not kept.
    void run_ended(const std::filesystem::path& store) const;
    // A list-runs request's listing, from a pass shared with every request that came while
    // another pass ran: one pass runs at a time, and the requests that came during it are
    // answered together by the next, which starts after them (clients listing back to back
    // cost one pass a round, not one each). Called on a disk thread: it either runs a pass,
    // answering each request it holds (`runs` null and `error` set when the pass failed), or
    // returns at once, its answer left to the pass under way. When requests came during the
    // pass, the next pass is handed to `post_next` (the disk threads' queue, so that other
    // disk work takes its turn between passes), or run at once without one. An answer that
    // throws does not keep the others from theirs.
    using Answer = std::function<void(const std::vector<protocol::RunListing>* runs, std::exception_ptr error)>;
    using Post = std::function<void(std::function<void()>)>;
    void list(Answer answer, const Post& post_next = {}) const;
    // How many times a store has been opened and read for runs(), and how many passes list()
    // has made.
    std::uint64_t stores_read() const { return stores_read_.load(); }
    std::uint64_t passes() const { return passes_.load(); }
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
        bool settled = false; // kept while the store's files keep `stamp`
        bool running = false; // a run was running: kept for kLiveRefresh whatever changes
        std::chrono::system_clock::time_point read_at;
        std::vector<protocol::RunListing> runs;
        bool serves(const Stamp& now_stamp, std::chrono::system_clock::time_point now) const;
    };
    static constexpr std::chrono::seconds kLiveRefresh { 1 };
    // `file` read, its runs listed under the name `database`.
    std::vector<protocol::RunListing> read_store(const std::filesystem::path& file, const std::string& database) const;

    const ServerFolders& folders_;
    mutable serve::StateMutex listed_mutex_; // the disk threads' lists, held for a lookup or an update
    // By the store's path as a string: a path's comparison goes component by component, and
    // was a sixth of a listing of 1,000 stores.
    mutable std::unordered_map<std::string, Listed> listed_;
    mutable std::unordered_map<std::string, std::uint64_t> ends_; // run_ended() calls, by store
    void run_passes(const Post& post_next) const;
    mutable std::atomic<std::uint64_t> stores_read_ { 0 };
    mutable serve::StateMutex passes_mutex_; // list()'s requests, held for a push or a swap (disk threads)
    mutable std::vector<Answer> waiting_;
    mutable bool pass_running_ = false;
    mutable std::atomic<std::uint64_t> passes_ { 0 };
};

} // namespace fulcrum::archive
