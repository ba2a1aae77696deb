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
    std::string mode;          // virtual, paced or real
    std::uint64_t seed = 0;
    std::string started_at;    // ISO 8601, UTC
    std::string finished_at;
    std::string status;        // running, finished, stopped, failed
    std::string summary_json;
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
    std::string kind;          // "cpu" for now; "gpu" and "remote" later
    std::string profile_json;  // the worker's performance profile
};

// Schema version this build writes. Older stores are migrated on open; newer are refused.
inline constexpr int kSchemaVersion = 1;

} // namespace fulcrum::db
