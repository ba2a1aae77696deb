#pragma once

#include "db/run_store.h"
#include "protocol/messages.h"

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace fulcrum {
class JobFold;
}

namespace fulcrum::db {
class RunReader;
}

namespace fulcrum::replay {

// A recorded run as the protocol's stream: the messages a live job sent, rebuilt step by
// step from the run store, so a client has one ingest path for live and recorded runs.
// A step is one iteration of one job (its iteration rows); steps are in barrier order
// across jobs. An event or evaluation goes with the first step whose barrier is not
// earlier than it: before that step's rows if it happened during the iteration, after
// them if it happened at its barrier (as a live job sends it). The cluster states fulcrumd
// recorded for its jobs go the same way, as cluster-state messages with their run time.
//
// Positions count delivered steps: position 0 is before the first iteration, length()
// after the last. Not thread-safe; one owner.
class ReplaySource {
public:
    // Throws InputError naming the file: missing, not a run store, damaged, or no such run.
    ReplaySource(const std::filesystem::path& database, RunId run, std::int64_t replay_id, std::string database_name);
    ~ReplaySource();
    ReplaySource(const ReplaySource&) = delete;
    ReplaySource& operator=(const ReplaySource&) = delete;

    std::int64_t length() const { return static_cast<std::int64_t>(marks_.size()); }
    const db::IterationMark& mark(std::int64_t step) const { return marks_.at(static_cast<std::size_t>(step)); }
    const db::RunInfo& run() const { return run_; }
    JobId first_job() const;
    double end_time_s() const;
    double time_at(std::int64_t position) const; // the barrier of the last step before `position`

    // The position just after `iteration` of `job`; unset if that iteration is not recorded.
    std::optional<std::int64_t> position_after(JobId job, std::int64_t iteration) const;
    // The position after every step whose barrier is at or before `time_s`.
    std::int64_t position_at_time(double time_s) const;

    // What the stream carries for step `step` (0-based): due events and evaluations, the
    // iteration's rows, the job's worker states and status.
    std::vector<protocol::ServerMessage> step(std::int64_t step);
    // What comes after the last step: the events recorded after the last barrier and each
    // job's final status.
    std::vector<protocol::ServerMessage> finish();
    // The run as of `position`: each job's status and worker states and the rows of its last
    // delivered iteration (the snapshot after open-replay and seek).
    std::vector<protocol::ServerMessage> snapshot(std::int64_t position);

    protocol::ReplayState state(std::int64_t position, protocol::ReplayPhase phase, double speed, bool seeked) const;

private:
    struct Job;
    struct Due {
        std::int64_t step = 0; // the step it goes with (length(): after the last)
        bool at_barrier = false; // after that step's rows rather than before them
    };
    Job& job(JobId id);
    JobFold fold_at(const Job& job, std::int64_t position) const; // the job's events before `position`, folded
    protocol::JobStatus status_at(Job& job, std::int64_t position, bool finished);
    protocol::WorkerUpdate workers_at(Job& job, std::int64_t position, const std::vector<IterationRecord>& rows) const;
    std::vector<IterationRecord> rows_of(JobId job, std::int64_t iteration);
    Due due(double time_s) const;

    std::unique_ptr<db::RunReader> reader_;
    std::int64_t replay_;
    std::string database_name_;
    db::RunInfo run_;
    std::vector<db::IterationMark> marks_;
    std::map<JobId, std::unique_ptr<Job>> jobs_;
    std::vector<EventRecord> events_; // the run's events in time order
    std::vector<Due> event_due_;
    std::vector<EvaluationRecord> evaluations_; // all jobs', in time order
    std::vector<Due> evaluation_due_;
    std::vector<protocol::ClusterUpdate> clusters_; // the cluster the run's jobs ran on, in time order
    std::vector<Due> cluster_due_;
};

} // namespace fulcrum::replay
