#include "common/error.h"
#include "db/run_reader.h"
#include "db/run_recorder.h"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace fulcrum;

namespace {

class RunStore : public ::testing::Test {
protected:
    std::filesystem::path dir = std::filesystem::temp_directory_path() / ("fulcrum-db-" + std::to_string(::getpid()));
    std::filesystem::path file = dir / "run.db";
    void SetUp() override { std::filesystem::create_directories(dir); }
    void TearDown() override { std::filesystem::remove_all(dir); }
};

std::vector<IterationRecord> iteration_rows(std::int64_t k, int workers)
{
    std::vector<IterationRecord> rows;
    for (int w = 0; w < workers; ++w) {
        IterationRecord r;
        r.worker = w;
        r.iteration = k;
        r.start_s = static_cast<double>(k);
        r.end_s = static_cast<double>(k) + 0.5 + w * 0.1;
        r.batch_size = 32 + w;
        r.compute_s = 0.4;
        r.comm_s = 0.1;
        r.wait_s = 0.3 - w * 0.1;
        r.cpu_share = 0.9;
        r.memory_share = 0.8;
        r.speed = 80;
        if (w % 2)
            r.predicted_speed = 79.5;
        r.loss = 1.5;
        r.decision = "uniform";
        if (w == 2) { // a GPU worker; the others leave the GPU columns NULL
            r.gpu.memory_gb = 3.25;
            r.gpu.memory_share = 0.04;
            r.gpu.utilization = 0.87;
        }
        rows.push_back(r);
    }
    return rows;
}

db::RunInfo run_info()
{
    return { 0, "test", "{}", "virtual", 7, "", "", "", "", "" };
}

} // namespace

TEST_F(RunStore, EverythingRecordedReadsBackUnchanged)
{
    std::vector<IterationRecord> written;
    {
        db::RunRecorder recorder(file);
        const RunId run = recorder.begin_run(run_info());
        EXPECT_EQ(run, 1);
        recorder.add_job({ 0, "job", "mlp", 100, "bsp", "uniform", 128, 0.1, "weighted", 3 });
        recorder.add_worker({ 0, 0, "w0", "cpu", "{\"speed\": 1}" });
        for (int k = 0; k < 3; ++k) {
            auto rows = iteration_rows(k, 4);
            recorder.record_iterations(rows);
            written.insert(written.end(), rows.begin(), rows.end());
        }
        recorder.record_evaluation({ 0, 2, 3.0, 0.1, 0.01, 1.2, 1.1, 0.55 });
        EventRecord event;
        event.kind = "warning";
        event.worker = 3;
        event.message = "slow";
        recorder.record_event(event);
        recorder.finish_run("finished", "{\"ok\": true}");
    }
    db::RunReader reader(file);
    EXPECT_EQ(reader.integrity_check(), "ok");
    ASSERT_EQ(reader.runs().size(), 1u);
    EXPECT_EQ(reader.run(1).status, "finished");
    EXPECT_EQ(reader.run(1).seed, 7u);
    EXPECT_EQ(reader.iterations(1, 0), written);
    EXPECT_EQ(reader.iterations(1, 0, 1, 1).size(), 4u);
    EXPECT_EQ(reader.evaluations(1, 0).at(0).test_accuracy, 0.55);
    EXPECT_EQ(reader.events(1).at(0).worker, 3);
    EXPECT_EQ(reader.jobs(1).at(0).total_batch, 128);
    EXPECT_EQ(reader.workers(1).at(0).name, "w0");
    EXPECT_THROW(reader.run(9), InputError);
}

TEST_F(RunStore, SecondRunIsAppendedToTheSameStore)
{
    for (int k = 0; k < 2; ++k) {
        db::RunRecorder recorder(file);
        recorder.begin_run(run_info());
        recorder.record_iterations(iteration_rows(0, 2));
        recorder.finish_run("finished", "{}");
    }
    db::RunReader reader(file);
    EXPECT_EQ(reader.runs().size(), 2u);
    EXPECT_EQ(reader.iteration_row_count(2), 2);
}

// The listing's one-pass totals are the two counts (a run of 3 iterations of 4 workers, and
// a run of two jobs, one with a missing row).
TEST_F(RunStore, IterationTotalsAreTheIterationAndRowCounts)
{
    {
        db::RunRecorder recorder(file);
        recorder.begin_run(run_info());
        for (int k = 0; k < 3; ++k)
            recorder.record_iterations(iteration_rows(k, 4));
        recorder.finish_run("finished", "{}");
        recorder.begin_run(run_info());
        recorder.record_iterations(iteration_rows(0, 2));
        recorder.record_iterations(iteration_rows(1, 1));
        // a second job's iterations 0 and 1, of 3 workers: iterations count per job
        for (int k = 0; k < 2; ++k) {
            auto rows = iteration_rows(k, 3);
            for (IterationRecord& r : rows)
                r.job = 1;
            recorder.record_iterations(rows);
        }
        recorder.finish_run("finished", "{}");
    }
    db::RunReader reader(file);
    for (const RunId run : { 1, 2, 3 }) {
        const db::RunReader::IterationTotals totals = reader.iteration_totals(run);
        EXPECT_EQ(totals.iterations, reader.iteration_count(run)) << "run " << run;
        EXPECT_EQ(totals.rows, reader.iteration_row_count(run)) << "run " << run;
    }
    EXPECT_EQ(reader.iteration_totals(1).rows, 12);
    EXPECT_EQ(reader.iteration_totals(2).iterations, 4);
    EXPECT_EQ(reader.iteration_totals(2).rows, 9);
    EXPECT_EQ(reader.iteration_totals(3).rows, 0) << "no such run";
}

TEST_F(RunStore, UnwritableLocationIsRefusedAtOpen)
{
    EXPECT_THROW(db::RunRecorder(dir / "missing-dir" / "run.db"), InputError);
    std::filesystem::create_directories(dir / "a-directory.db");
    EXPECT_THROW(db::RunRecorder(dir / "a-directory.db"), InputError);
}

TEST_F(RunStore, ForeignFilesAreRefused)
{
    {
        std::ofstream text(file);
        text << "this is not a database, just some text that is long enough to look like a header........";
    }
    EXPECT_THROW(db::RunRecorder { file }, InputError);
    EXPECT_THROW(db::RunReader { file }, InputError);
    std::filesystem::remove(file);

    sqlite3* other = nullptr;
    sqlite3_open(file.c_str(), &other);
    sqlite3_exec(other, "CREATE TABLE invoices (id INTEGER)", nullptr, nullptr, nullptr);
    sqlite3_close(other);
    try {
        db::RunReader reader(file);
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("not a Fulcrum run store"), std::string::npos) << e.what();
    }
    EXPECT_THROW(db::RunRecorder { file }, InputError);
}

TEST_F(RunStore, StoreFromANewerVersionIsRefused)
{
    {
        db::RunRecorder recorder(file);
    }
    sqlite3* handle = nullptr;
    sqlite3_open(file.c_str(), &handle);
    sqlite3_exec(handle, "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
    sqlite3_close(handle);
    try {
        db::RunReader reader(file);
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "schema version");
    }
}

// A store written before the GPU columns (schema 3) reads with them NULL, and a recorder
// migrates it in place: the old rows keep every value, new rows carry their GPU columns.
TEST_F(RunStore, AStoreFromBeforeTheGpuColumnsReadsAndMigrates)
{
    std::vector<IterationRecord> old_rows = iteration_rows(0, 3);
    {
        db::RunRecorder recorder(file);
        recorder.begin_run(run_info());
        recorder.record_iterations(old_rows);
        recorder.finish_run("finished", "{}");
    }
    sqlite3* handle = nullptr;
    sqlite3_open(file.c_str(), &handle);
    for (const char* table : { "iterations", "superseded_iterations" })
        for (const char* column : { "gpu_memory_gb", "gpu_memory_share", "gpu_utilization" })
            ASSERT_EQ(sqlite3_exec(handle, (std::string("ALTER TABLE ") + table + " DROP COLUMN " + column).c_str(),
                          nullptr, nullptr, nullptr),
                SQLITE_OK)
                << sqlite3_errmsg(handle);
    ASSERT_EQ(sqlite3_exec(
                  handle, "DROP TABLE cluster_states; ALTER TABLE runs DROP COLUMN tenant", nullptr, nullptr, nullptr),
        SQLITE_OK);
    sqlite3_exec(handle, "PRAGMA user_version = 3", nullptr, nullptr, nullptr);
    sqlite3_close(handle);

    for (IterationRecord& r : old_rows)
        r.gpu = {};
    EXPECT_EQ(db::RunReader(file).iterations(1, 0), old_rows);

    std::vector<IterationRecord> new_rows = iteration_rows(0, 3);
    {
        db::RunRecorder recorder(file);
        recorder.begin_run(run_info());
        recorder.record_iterations(new_rows);
        recorder.finish_run("finished", "{}");
    }
    db::RunReader reader(file);
    EXPECT_EQ(reader.integrity_check(), "ok");
    EXPECT_EQ(reader.iterations(1, 0), old_rows);
    EXPECT_EQ(reader.iterations(2, 0), new_rows);
    EXPECT_EQ(reader.iterations(2, 0).at(2).gpu.utilization, 0.87);
}

// fulcrumd's jobs record the cluster they ran on (schema 5); a store from before keeps
// reading (no cluster states) and gains the table when a run is appended to it.
TEST_F(RunStore, ClusterStatesReadBackInOrderAndAnOlderStoreHasNone)
{
    const std::vector<ClusterRecord> states = {
        { 0, 0, 0.0, R"({"placement":"lwf-1","gpus":[]})", 2 },
        { 0, 41, 12.5, R"({"placement":"lwf-1","gpus":[{"gpu":0,"jobs":[2,3]}]})", 2 },
        { 0, 41, 12.5, R"({"placement":"ff","gpus":[]})", 2 },
    };
    {
        db::RunRecorder recorder(file);
        recorder.begin_run(run_info());
        for (const ClusterRecord& c : states)
            recorder.record_cluster(c);
        recorder.finish_run("finished", "{}");
    }
    EXPECT_EQ(db::RunReader(file).cluster_states(1), states);
    EXPECT_TRUE(db::RunReader(file).cluster_states(2).empty());

    sqlite3* handle = nullptr;
    sqlite3_open(file.c_str(), &handle);
    ASSERT_EQ(
        sqlite3_exec(handle, "DROP TABLE cluster_states; ALTER TABLE runs DROP COLUMN tenant; PRAGMA user_version = 4",
            nullptr, nullptr, nullptr),
        SQLITE_OK);
    sqlite3_close(handle);
    EXPECT_TRUE(db::RunReader(file).cluster_states(1).empty());
    {
        db::RunRecorder recorder(file);
        recorder.begin_run(run_info());
        recorder.record_cluster(states[1]);
        recorder.finish_run("finished", "{}");
    }
    db::RunReader reader(file);
    EXPECT_EQ(reader.integrity_check(), "ok");
    EXPECT_TRUE(reader.cluster_states(1).empty());
    EXPECT_EQ(reader.cluster_states(2), std::vector<ClusterRecord> { states[1] });
}

TEST_F(RunStore, MissingFileIsRefusedByTheReader)
{
    EXPECT_THROW(db::RunReader(dir / "nothing.db"), InputError);
}

// A recording process killed with SIGKILL mid-run leaves a store that opens, passes the
// integrity check and holds whole iterations 0..k: every committed iteration, none torn.
TEST_F(RunStore, KilledRecorderLeavesEveryCommittedIteration)
{
    constexpr int kWorkers = 8;
    const pid_t child = fork();
    ASSERT_NE(child, -1);
    if (child == 0) {
        db::RunRecorder recorder(
            file, { .commit_interval = std::chrono::milliseconds(5), .max_pending_rows = 1u << 20 });
        recorder.begin_run(run_info());
        for (std::int64_t k = 0;; ++k) {
            recorder.record_iterations(iteration_rows(k, kWorkers));
            if (k % 50 == 0)
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
    // Wait until a good number of rows is committed, then kill without warning.
    for (int tries = 0; tries < 400; ++tries) {
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
        try {
            db::RunReader probe(file);
            if (!probe.runs().empty() && probe.iteration_row_count(1) > 20000)
                break;
        } catch (const InputError&) {
        }
    }
    kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status));

    db::RunReader reader(file);
    EXPECT_EQ(reader.integrity_check(), "ok");
    EXPECT_EQ(reader.run(1).status, "running");
    const auto rows = reader.iterations(1, 0);
    ASSERT_GT(rows.size(), 20000u);
    ASSERT_EQ(rows.size() % kWorkers, 0u) << "an iteration was torn";
    for (std::size_t i = 0; i < rows.size(); ++i) {
        ASSERT_EQ(rows[i].iteration, static_cast<std::int64_t>(i / kWorkers));
        ASSERT_EQ(rows[i].worker, static_cast<WorkerId>(i % kWorkers));
    }
}

// A run names its job's tenant from schema 6 on (issue 47); a store from before reads as
// the default tenant's (no tenant) and gains the column when a run is appended to it.
TEST_F(RunStore, ARunNamesItsTenantAndAnOlderStoreNamesNone)
{
    {
        db::RunRecorder recorder(file);
        recorder.begin_run(run_info());
        recorder.finish_run("finished", "{}");
    }
    sqlite3* handle = nullptr;
    sqlite3_open(file.c_str(), &handle);
    ASSERT_EQ(
        sqlite3_exec(handle, "ALTER TABLE runs DROP COLUMN tenant; PRAGMA user_version = 5", nullptr, nullptr, nullptr),
        SQLITE_OK);
    sqlite3_close(handle);
    EXPECT_EQ(db::RunReader(file).runs().at(0).tenant, "");
    {
        db::RunRecorder recorder(file);
        db::RunInfo info = run_info();
        info.tenant = "research";
        recorder.begin_run(info);
        recorder.finish_run("finished", "{}");
    }
    db::RunReader reader(file);
    EXPECT_EQ(reader.integrity_check(), "ok");
    const auto runs = reader.runs();
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[0].tenant, "");
    EXPECT_EQ(runs[1].tenant, "research");
    EXPECT_EQ(reader.run(2).tenant, "research");
}
