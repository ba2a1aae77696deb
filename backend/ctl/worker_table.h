#pragma once

#include "protocol/messages.h"

#include <map>
#include <optional>
#include <string>

namespace fulcrum::ctl {

// What `fulcrumctl watch JOB` shows: the job's status line and one row per worker (batch,
// speed, predicted speed, compute and wait time of its latest iteration, and its state:
// pinned, excluded, a straggler, not a member), folded from the job's streams.
class WatchTable {
public:
    explicit WatchTable(JobId job)
        : job_(job)
    {
    }
    // Folds one message in (others' jobs and replays are ignored); true when the view changed.
    bool apply(const protocol::ServerMessage& message);
    std::string render() const;
    // The job finished, stopped or failed.
    bool ended() const;
    // Distinct iterations whose rows arrived.
    std::int64_t iterations_seen() const { return iterations_seen_; }

private:
    JobId job_;
    std::optional<protocol::JobStatus> status_;
    std::map<WorkerId, IterationRecord> last_rows_;
    std::map<WorkerId, protocol::WorkerState> states_;
    std::int64_t iterations_seen_ = 0;
    std::int64_t last_iteration_ = -1;
};

} // namespace fulcrum::ctl
