#pragma once

#include "db/run_store.h"

#include <filesystem>
#include <limits>
#include <memory>
#include <vector>

namespace fulcrum::db {

// Read access to a run store for replay, reports and tests. Opens read-only and never
// changes the file. Every failure is an InputError naming the file.
class RunReader {
public:
    explicit RunReader(const std::filesystem::path& path);
    ~RunReader();
    RunReader(const RunReader&) = delete;
    RunReader& operator=(const RunReader&) = delete;

    std::vector<RunInfo> runs();
    RunInfo run(RunId id);
    std::vector<JobInfo> jobs(RunId run);
    std::vector<WorkerInfo> workers(RunId run);
    // Rows with first <= iteration <= last, ordered by iteration then worker.
    std::vector<IterationRecord> iterations(
        RunId run, JobId job, std::int64_t first = 0, std::int64_t last = std::numeric_limits<std::int64_t>::max());
    std::int64_t iteration_row_count(RunId run);
    // Iterations recorded, all jobs together (an iteration of N workers counts once).
    std::int64_t iteration_count(RunId run);
    // Both counts from one pass over the run's rows (a listing's: half the reads of the two).
    struct IterationTotals {
        std::int64_t iterations = 0, rows = 0;
    };
    IterationTotals iteration_totals(RunId run);
    // Every recorded iteration of every job of a run, in barrier order (end time, then job).
    std::vector<IterationMark> iteration_marks(RunId run);
    std::vector<EvaluationRecord> evaluations(RunId run, JobId job);
    std::vector<EventRecord> events(RunId run);
    // The cluster states fulcrumd recorded for the run's jobs, in the order recorded; none in
    // a store older than schema version 5 or a run not made by fulcrumd.
    std::vector<ClusterRecord> cluster_states(RunId run);
    // A job's latest checkpoint; none for a job that never wrote one (or a store older than
    // schema version 3).
    std::optional<Checkpoint> checkpoint(RunId run, JobId job);
    // A fulcrumd job's checkpoint: its own, or, in a store an earlier release wrote (which
    // numbered its one job 0), that one.
    std::optional<Checkpoint> job_checkpoint(RunId run, JobId job);
    // Rows a crashed run had committed past its checkpoint, which the resumed run recorded
    // again (RunRecorder::resume_run); oldest crash first within an iteration.
    std::vector<IterationRecord> superseded_iterations(RunId run, JobId job);
    // A simulated schedule: its jobs in id order, and the spans that overlap [from_s, to_s]
    // in start order.
    std::vector<ScheduledJob> scheduled_jobs(RunId run);
    std::vector<ScheduleSpan> schedule_spans(
        RunId run, double from_s = 0, double to_s = std::numeric_limits<double>::infinity());
    // "ok" or SQLite's description of the damage.
    std::string integrity_check();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace fulcrum::db
