#pragma once

#include "common/records.h"
#include "protocol/messages.h"

#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

namespace fulcrum::daemon {

// The jobs fulcrumd has accepted and not yet ended, one file each in DATA_DIR/jobs
// (job-N.json: who gave it and, for a tenant other than the default, whose it is; then the
// scenario as given). A job is written here before its
// submission is answered and removed when it ends, so a crash loses no job: a restarted
// fulcrumd finds each one again, with its run store's checkpoint if it has one.
class JobJournal {
public:
    enum class Origin { Client, Local };
    struct Entry {
        JobId job = 0;
        Origin origin = Origin::Client;
        std::string tenant { protocol::kDefaultTenant };
        std::string scenario_json;
    };

    explicit JobJournal(std::filesystem::path folder); // created if missing
    // Atomic: written beside, flushed, then renamed into place. Throws RuntimeFailure.
    void add(JobId job, Origin origin, const std::string& tenant, const std::string& scenario_json);
    void remove(JobId job);
    // Every entry, by job id; an unreadable one is skipped and named in `problems`.
    std::vector<Entry> entries(std::vector<std::string>* problems = nullptr) const;
    // The highest job id ever added (its `last-job` file), 0 when none: a job that ended
    // without a run store (cancelled while queued, an external job lost at a restart) leaves
    // no other trace, and a restarted fulcrumd must not give its id again.
    JobId last_added() const;

private:
    std::filesystem::path file(JobId job) const;
    std::filesystem::path folder_;
    std::mutex last_mutex_; // the disk threads' adds: the marker only ever grows
    JobId last_ = 0;
};

} // namespace fulcrum::daemon
