#include "db/schema.h"

#include "common/error.h"
#include "db/run_store.h"

#include <array>
#include <string>

namespace fulcrum::db::detail {

namespace {

// migrations[k] takes a store from version k to k + 1. Never edit one that has shipped:
// append a new step instead.
constexpr std::array<const char*, kSchemaVersion> kMigrations = { R"sql(
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    scenario_json TEXT NOT NULL,
    mode TEXT NOT NULL,
    seed INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL,
    summary_json TEXT
);
CREATE TABLE jobs (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    job_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    model TEXT NOT NULL,
    parameters INTEGER NOT NULL,
    sync_model TEXT NOT NULL,
    policy TEXT NOT NULL,
    total_batch INTEGER NOT NULL,
    learning_rate REAL NOT NULL,
    aggregation TEXT NOT NULL,
    iterations INTEGER NOT NULL,
    PRIMARY KEY (run_id, job_id)
);
CREATE TABLE workers (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    job_id INTEGER NOT NULL,
    worker_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    profile_json TEXT NOT NULL,
    PRIMARY KEY (run_id, job_id, worker_id)
);
CREATE TABLE iterations (
    run_id INTEGER NOT NULL,
    job_id INTEGER NOT NULL,
    iteration INTEGER NOT NULL,
    worker_id INTEGER NOT NULL,
    start_s REAL NOT NULL,
    end_s REAL NOT NULL,
    batch_size INTEGER NOT NULL,
    compute_s REAL NOT NULL,
    comm_s REAL NOT NULL,
    wait_s REAL NOT NULL,
    cpu_share REAL NOT NULL,
    memory_share REAL NOT NULL,
    speed REAL NOT NULL,
    predicted_speed REAL,
    loss REAL NOT NULL,
    decision TEXT NOT NULL,
    PRIMARY KEY (run_id, job_id, iteration, worker_id)
) WITHOUT ROWID;
CREATE TABLE evaluations (
    run_id INTEGER NOT NULL,
    job_id INTEGER NOT NULL,
    iteration INTEGER NOT NULL,
    time_s REAL NOT NULL,
    wall_s REAL NOT NULL,
    epoch REAL NOT NULL,
    train_loss REAL NOT NULL,
    test_loss REAL NOT NULL,
    test_accuracy REAL NOT NULL,
    PRIMARY KEY (run_id, job_id, iteration)
) WITHOUT ROWID;
CREATE TABLE events (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL,
    job_id INTEGER NOT NULL,
    iteration INTEGER NOT NULL,
    time_s REAL NOT NULL,
    kind TEXT NOT NULL,
    worker_id INTEGER,
    message TEXT NOT NULL,
    actor TEXT NOT NULL
);
CREATE INDEX events_by_time ON events (run_id, job_id, iteration);
)sql",
    R"sql(
CREATE TABLE sched_jobs (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    job_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    model TEXT NOT NULL,
    gpus INTEGER NOT NULL,
    iterations INTEGER NOT NULL,
    arrival_s REAL NOT NULL,
    placed_s REAL,
    finish_s REAL,
    placement TEXT NOT NULL,
    status TEXT NOT NULL,
    PRIMARY KEY (run_id, job_id)
) WITHOUT ROWID;
CREATE TABLE sched_spans (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    kind TEXT NOT NULL,
    gpu INTEGER,
    job_id INTEGER NOT NULL,
    start_s REAL NOT NULL,
    end_s REAL NOT NULL,
    first_iteration INTEGER NOT NULL,
    iterations INTEGER NOT NULL,
    contention INTEGER NOT NULL
);
CREATE INDEX sched_spans_by_time ON sched_spans (run_id, start_s);
)sql",
    R"sql(
CREATE TABLE checkpoints (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    job_id INTEGER NOT NULL,
    iteration INTEGER NOT NULL,
    time_s REAL NOT NULL,
    written_at TEXT NOT NULL,
    policy_json TEXT NOT NULL,
    state BLOB NOT NULL,
    PRIMARY KEY (run_id, job_id)
) WITHOUT ROWID;
-- What a run had committed past its last checkpoint when it crashed: the resumed run
-- records those iterations again, and these are kept for the record (never deleted).
CREATE TABLE superseded_iterations AS SELECT '' AS resumed_at, * FROM iterations WHERE 0;
CREATE INDEX superseded_iterations_by_run ON superseded_iterations (run_id, job_id, iteration);
CREATE TABLE superseded_evaluations AS SELECT '' AS resumed_at, * FROM evaluations WHERE 0;
)sql",
    // GPU workers' device memory and utilisation (issue 20). Appended in the same order to
    // superseded_iterations, which copies iterations with `SELECT ?, *`.
    R"sql(
ALTER TABLE iterations ADD COLUMN gpu_memory_gb REAL;
ALTER TABLE iterations ADD COLUMN gpu_memory_share REAL;
ALTER TABLE iterations ADD COLUMN gpu_utilization REAL;
ALTER TABLE superseded_iterations ADD COLUMN gpu_memory_gb REAL;
ALTER TABLE superseded_iterations ADD COLUMN gpu_memory_share REAL;
ALTER TABLE superseded_iterations ADD COLUMN gpu_utilization REAL;
)sql",
    // The cluster a live job ran on, for the scheduler view of a replay (issue 21).
    R"sql(
CREATE TABLE cluster_states (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    job_id INTEGER NOT NULL,
    iteration INTEGER NOT NULL,
    time_s REAL NOT NULL,
    state TEXT NOT NULL,
    cluster_job INTEGER NOT NULL
);
CREATE INDEX cluster_states_by_run ON cluster_states (run_id);
)sql",
    // The tenant whose job a run records (issue 47); null for the default tenant.
    R"sql(
ALTER TABLE runs ADD COLUMN tenant TEXT;
)sql" };

std::int64_t pragma(Connection& connection, const char* name)
{
    Statement statement(connection, (std::string("PRAGMA ") + name).c_str());
    return statement.step() ? statement.int64(0) : 0;
}

bool has_tables(Connection& connection)
{
    Statement statement(connection, "SELECT count(*) FROM sqlite_master");
    return statement.step() && statement.int64(0) > 0;
}

int checked_version(Connection& connection)
{
    std::int64_t application_id = 0;
    try {
        application_id = pragma(connection, "application_id");
    } catch (const InputError&) {
        throw InputError(connection.path(), "", "not a SQLite database (is it a Fulcrum run store?)");
    }
    if (application_id == 0 && has_tables(connection))
        throw InputError(
            connection.path(), "application_id", "is a SQLite database of another program, not a Fulcrum run store");
    if (application_id != 0 && application_id != kApplicationId)
        throw InputError(
            connection.path(), "application_id", "is a SQLite database of another program, not a Fulcrum run store");
    const auto version = static_cast<int>(pragma(connection, "user_version"));
    if (version > kSchemaVersion)
        throw InputError(connection.path(), "schema version",
            "is " + std::to_string(version) + ", written by a newer Fulcrum; this build reads up to "
                + std::to_string(kSchemaVersion));
    return version;
}

} // namespace

void prepare_for_writing(Connection& connection)
{
    connection.exec("BEGIN IMMEDIATE");
    try {
        for (int version = checked_version(connection); version < kSchemaVersion; ++version)
            connection.exec(kMigrations[static_cast<std::size_t>(version)]);
        connection.exec(("PRAGMA application_id = " + std::to_string(kApplicationId)).c_str());
        connection.exec(("PRAGMA user_version = " + std::to_string(kSchemaVersion)).c_str());
        connection.exec("COMMIT");
    } catch (...) {
        sqlite3_exec(connection.get(), "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
}

int check_readable(Connection& connection)
{
    const int version = checked_version(connection);
    if (version == 0)
        throw InputError(connection.path(), "", "is empty or not a Fulcrum run store");
    return version;
}

} // namespace fulcrum::db::detail
