#include "common/error.h"
#include "db/run_reader.h"
#include "sched/simulator.h"
#include "sched/workload.h"
#include "sched_store/schedule_store.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <sqlite3.h>

using namespace fulcrum;

namespace {

std::filesystem::path fresh(const std::string& name)
{
    const auto path = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove(path);
    std::filesystem::remove(path.string() + "-wal");
    std::filesystem::remove(path.string() + "-shm");
    return path;
}

sched::SimulationResult simulated()
{
    sched::ClusterSpec cluster;
    cluster.servers = 2;
    auto jobs = sched::generate_workload(
        { .jobs = 12, .horizon_s = 60, .min_iterations = 20, .max_iterations = 60, .seed = 5 });
    jobs.front().gpus = 64; // more GPUs than 2 x 4: rejected at submission
    sched::SimulationOptions options;
    options.record_spans = true;
    return sched::simulate(cluster, jobs, options);
}

} // namespace

TEST(ScheduleStore, ASimulatedScheduleIsReadBackJobForJobAndSpanForSpan)
{
    const auto path = fresh("fulcrum-schedule.db");
    const sched::SimulationResult result = simulated();
    ASSERT_EQ(result.rejected.size(), 1u);
    ASSERT_FALSE(result.spans.empty());
    const RunId run = sched_store::write_schedule(path, "lwf-1 + ada-srsf", "fulcrum-sim test", 5, result);

    db::RunReader reader(path);
    EXPECT_EQ(reader.run(run).mode, "simulated");
    EXPECT_EQ(reader.run(run).status, "finished");
    EXPECT_NE(reader.run(run).summary_json.find("\"avg_jct\""), std::string::npos);
    const auto jobs = reader.scheduled_jobs(run);
    ASSERT_EQ(jobs.size(), 12u);
    int finished = 0;
    for (const auto& j : jobs) {
        if (j.status == "finished") {
            ++finished;
            ASSERT_TRUE(j.finish_s);
            EXPECT_GE(*j.finish_s, j.arrival_s);
            EXPECT_FALSE(j.placement.empty());
        } else {
            EXPECT_EQ(j.status, "rejected: asks for 64 GPUs; the cluster has 8");
            EXPECT_FALSE(j.placed_s);
        }
    }
    EXPECT_EQ(finished, 11);
    const auto spans = reader.schedule_spans(run);
    ASSERT_EQ(spans.size(), result.spans.size());
    std::int64_t compute_tasks = 0;
    for (const auto& s : spans) {
        EXPECT_LE(s.start_s, s.end_s);
        EXPECT_EQ(s.gpu.has_value(), s.kind == "compute");
        if (s.kind == "compute")
            compute_tasks += s.iterations;
    }
    std::int64_t expected_tasks = 0;
    for (const auto& j : result.jobs)
        expected_tasks += j.job.iterations * j.job.gpus;
    EXPECT_EQ(compute_tasks, expected_tasks); // every forward+backward pair of every GPU is on the timeline
    // A window returns only the spans that overlap it.
    const double mid = result.makespan_s / 2;
    for (const auto& s : reader.schedule_spans(run, mid, mid + 1))
        EXPECT_TRUE(s.start_s <= mid + 1 && s.end_s >= mid);
}

TEST(ScheduleStore, AVersionOneStoreIsMigratedAndKeepsItsRuns)
{
    const auto path = fresh("fulcrum-schedule-v1.db");
    const RunId first = sched_store::write_schedule(path, "first", "x", 1, simulated());
    {
        // Make it look like a store written before schema version 2 (and so before 3 and 4).
        sqlite3* handle = nullptr;
        ASSERT_EQ(sqlite3_open(path.c_str(), &handle), SQLITE_OK);
        ASSERT_EQ(sqlite3_exec(handle,
                      "DROP TABLE cluster_states; DROP TABLE superseded_evaluations; DROP TABLE superseded_iterations; "
                      "DROP TABLE checkpoints; "
                      "DROP TABLE sched_spans; "
                      "DROP TABLE sched_jobs; ALTER TABLE iterations DROP COLUMN gpu_memory_gb; "
                      "ALTER TABLE iterations DROP COLUMN gpu_memory_share; "
                      "ALTER TABLE iterations DROP COLUMN gpu_utilization; ALTER TABLE runs DROP COLUMN tenant; "
                      "PRAGMA user_version = 1;",
                      nullptr, nullptr, nullptr),
            SQLITE_OK);
        sqlite3_close(handle);
    }
    const RunId second = sched_store::write_schedule(path, "second", "x", 2, simulated());
    db::RunReader reader(path);
    EXPECT_EQ(reader.runs().size(), 2u);
    EXPECT_EQ(reader.run(first).name, "first");
    EXPECT_FALSE(reader.scheduled_jobs(second).empty());
    EXPECT_TRUE(reader.scheduled_jobs(first).empty()); // its schedule went with the dropped tables
}

TEST(ScheduleStore, AForeignDatabaseIsRefusedWithItsPath)
{
    const auto path = fresh("fulcrum-foreign.db");
    sqlite3* handle = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &handle), SQLITE_OK);
    sqlite3_exec(handle, "CREATE TABLE notes (text TEXT)", nullptr, nullptr, nullptr);
    sqlite3_close(handle);
    try {
        sched_store::write_schedule(path, "x", "x", 1, simulated());
        FAIL() << "a foreign database was written to";
    } catch (const InputError& e) {
        EXPECT_EQ(e.source(), path.string());
        EXPECT_NE(std::string(e.what()).find("not a Fulcrum run store"), std::string::npos) << e.what();
    }
}
