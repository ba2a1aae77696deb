#pragma once

#include "db/run_store.h"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace fulcrum::db {

// Records a run into a SQLite run store. Per-iteration rows, evaluations and events are
// queued by the trainer and written by one writer thread that commits everything pending
// in a single transaction, so recording stays off the training path and a run killed at
// any point leaves every committed transaction readable (WAL journal).
class RunRecorder {
public:
    struct Options {
        std::chrono::milliseconds commit_interval { 50 }; // longest a row waits before its commit
        std::size_t max_pending_rows = 1u << 20; // producers block beyond this (bounded memory)
    };
    struct Stats {
        std::int64_t iteration_rows = 0;
        std::int64_t transactions = 0;
    };

    // Opens or creates the store; throws InputError naming the path if it cannot be
    // written, is not a run store, or was written by a newer Fulcrum.
    explicit RunRecorder(const std::filesystem::path& path);
    RunRecorder(const std::filesystem::path& path, Options options);
    ~RunRecorder(); // commits everything queued
    RunRecorder(const RunRecorder&) = delete;
    RunRecorder& operator=(const RunRecorder&) = delete;

    // Synchronous: a run and its jobs and workers exist before their first row.
    RunId begin_run(const RunInfo& run);
    void add_job(const JobInfo& job);
    void add_worker(const WorkerInfo& worker);

    // Queued. Rows of one call are committed in the same transaction.
    void record_iterations(std::span<const IterationRecord> rows);
    void record_evaluation(const EvaluationRecord& evaluation);
    void record_event(const EventRecord& event);
    // The cluster a live job ran on, from this moment of its run clock (fulcrumd's jobs).
    void record_cluster(const ClusterRecord& cluster);
    // Queued after everything recorded so far and committed in the same transaction as the
    // rows before it, replacing the job's previous checkpoint: a checkpoint in the store
    // always follows rows that are there too.
    void record_checkpoint(Checkpoint checkpoint);

    // Continues run `run` of an existing store after a crash, from a checkpoint taken after
    // iteration `after_iteration` of every job: the rows and evaluations past it (recorded
    // after the checkpoint, before the crash) leave the run's tables, since the resumed job
    // records them again: they move to superseded_iterations / superseded_evaluations, kept
    // for the record, and events stay (the audit trail). The run is `running` again.
    // `worker_after`, when given, holds per worker the last iteration to keep (the
    // free-running models' workers are at different iterations); evaluations are kept
    // through `after_iteration` either way.
    // Returns the run clock at the end of the last row past the checkpoint, set aside now or
    // by an earlier resume (none: there is none).
    std::optional<double> resume_run(
        RunId run, std::int64_t after_iteration, const std::vector<std::int64_t>& worker_after = {});
    // Marks an earlier run of the store as ended with `status`, its rows untouched (a job
    // that starts again from the beginning leaves its first attempt "interrupted").
    void end_run(RunId run, const std::string& status);

    // Synchronous, in one transaction: a simulated schedule's jobs and timeline.
    void record_schedule(std::span<const ScheduledJob> jobs, std::span<const ScheduleSpan> spans);

    void finish_run(const std::string& status, const std::string& summary_json);
    // Blocks until everything queued so far is committed; rethrows a writer failure.
    void flush();

    Stats stats() const;
    const std::filesystem::path& path() const;
    RunId run_id() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Current time as ISO 8601 UTC, e.g. 2026-11-22T10:15:00Z.
std::string utc_timestamp();

} // namespace fulcrum::db
