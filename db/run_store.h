#pragma once

// Plain descriptions of what a run store holds, shared by the recorder and the reader.

#include "common/records.h"

#include <optional>
#include <string>

namespace fulcrum::db {

struct RunInfo {
    RunId id = 0;
    std::string name;
    std::string scenario_json; // the scenario exactly as given
    std::string mode; // virtual, paced or real
    std::uint64_t seed = 0;
    std::string started_at; // ISO 8601, UTC
    std::string finished_at;
    std::string status; // running, finished, stopped, failed
    std::string summary_json;
    // Whose job it records (fulcrumd's jobs); empty for the default tenant, and in a run
    // recorded before tenants existed.
    std::string tenant;
};

struct JobInfo {
    JobId id = 0;
    std::string name;
    std::string model;
    std::int64_t parameters = 0;
    std::string sync_model;
    std::string policy;
    std::int32_t total_batch = 0;
    double learning_rate = 0;
    std::string aggregation;
    std::int64_t iterations = 0;
};

struct WorkerInfo {
    JobId job = 0;
    WorkerId id = 0;
    std::string name;
    std::string kind; // "cpu" for now; "gpu" and "remote" later
    std::string profile_json; // the worker's performance profile
};

// One recorded iteration of one job as replay walks it: when its last worker finished.
struct IterationMark {
    JobId job = 0;
    std::int64_t iteration = 0;
    double end_s = 0; // the latest worker's end_s (the barrier), run clock
    std::int32_t workers = 0; // rows recorded for it

    bool operator==(const IterationMark&) const = default;
};

// A simulated multi-job schedule (fulcrum-sim --out): one row per job of the workload...
struct ScheduledJob {
    JobId id = 0;
    std::string name;
    std::string model;
    std::int32_t gpus = 0;
    std::int64_t iterations = 0;
    double arrival_s = 0;
    std::optional<double> placed_s; // unset for a rejected job
    std::optional<double> finish_s;
    std::string placement; // GPU indices, space-separated
    std::string status; // finished, rejected: REASON, never ran: REASON

    bool operator==(const ScheduledJob&) const = default;
};

// ...and its timeline: merged compute spans per GPU and all-reduce spans per job.
struct ScheduleSpan {
    std::string kind; // compute or all-reduce
    std::optional<std::int32_t> gpu; // compute spans only
    JobId job = 0;
    double start_s = 0;
    double end_s = 0;
    std::int64_t first_iteration = 0;
    std::int64_t iterations = 0; // tasks merged into the span
    std::int32_t contention = 1; // all-reduce: most tasks that shared one of its links

    bool operator==(const ScheduleSpan&) const = default;
};

// A job's latest checkpoint: everything its trainer needs to go on after iteration
// `iteration` (the state bytes are the trainer's; see train::Checkpointing).
struct Checkpoint {
    JobId job = 0;
    std::int64_t iteration = -1; // the last iteration whose rows it follows
    double time_s = 0; // the run clock at that barrier
    std::string written_at; // UTC, ISO 8601
    std::string policy_json; // the policy section in effect if an operator changed it; else empty
    std::string state;

    bool operator==(const Checkpoint&) const = default;
};

// Schema version this build writes. Older stores are migrated on open; newer are refused.
// 1: runs, jobs, workers, iterations, evaluations, events. 2: sched_jobs, sched_spans.
// 3: checkpoints. 4: the iterations' GPU columns. 5: cluster_states.
inline constexpr int kSchemaVersion = 6;

} // namespace fulcrum::db
