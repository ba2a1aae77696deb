#include "balance/batch_size_manager.h"
#include "balance/uniform_policy.h"
#include "common/error.h"
#include "common/job_fold.h"
#include "db/run_reader.h"
#include "db/run_recorder.h"
#include "protocol/codec.h"
#include "replay/replay_source.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

using namespace fulcrum;
using namespace fulcrum::protocol;

namespace {

class ReplaySourceTest : public ::testing::Test {
protected:
    std::filesystem::path dir
        = std::filesystem::temp_directory_path() / ("fulcrum-replay-" + std::to_string(::getpid()));
    std::filesystem::path store = dir / "two-jobs.db";
    void SetUp() override
    {
        std::filesystem::create_directories(dir);
        record();
    }
    void TearDown() override { std::filesystem::remove_all(dir); }

    static IterationRecord row(
        JobId job, WorkerId worker, std::int64_t iteration, double start, double end, std::int32_t batch)
    {
        IterationRecord r;
        r.job = job;
        r.worker = worker;
        r.iteration = iteration;
        r.start_s = start;
        r.end_s = end;
        r.batch_size = batch;
        r.compute_s = end - start;
        r.speed = batch / (end - start);
        r.decision = "uniform";
        return r;
    }

    // Two jobs of two workers whose barriers interleave: job 0 ends its iterations at
    // 1, 2, 3, 4 s and job 1 at 1.5, 2.5, 3.5 s. Events: a pin of job 0's worker 1 at
    // the barrier of its iteration 1 (t = 2), an exclusion of job 1's worker 0 during its
    // iteration 1 (t = 2.2), and a note after the last barrier.
    void record()
    {
        db::RunRecorder recorder(store);
        db::RunInfo run;
        run.name = "two jobs";
        run.scenario_json = "{}";
        run.mode = "virtual";
        recorder.begin_run(run);
        for (JobId j : { 0, 1 }) {
            db::JobInfo job;
            job.id = j;
            job.name = "job" + std::to_string(j);
            job.model = "mlp";
            job.sync_model = "bsp";
            job.policy = "uniform";
            job.total_batch = 16;
            job.iterations = j == 0 ? 4 : 3;
            recorder.add_job(job);
            // Job 1's worker 1 computed on a GPU; its worker 0's profile is unreadable.
            for (WorkerId w : { 0, 1 })
                recorder.add_worker({ j, w, "w" + std::to_string(w), "cpu",
                    j == 1 ? (w == 1 ? R"({"device": "cuda:1", "sms": 32})" : "{not json") : "{}" });
        }
        for (int k = 0; k < 4; ++k) {
            const double t = k;
            const std::int32_t pinned = k >= 2 ? 4 : 8; // the pin shows from iteration 2 on
            const IterationRecord rows0[] = { row(0, 0, k, t, t + 1.0, 16 - pinned), row(0, 1, k, t, t + 0.9, pinned) };
            recorder.record_iterations(rows0);
            if (k < 3) {
                const IterationRecord rows1[]
                    = { row(1, 0, k, t + 0.5, t + 1.5, 8), row(1, 1, k, t + 0.5, t + 1.4, 8) };
                recorder.record_iterations(rows1);
            }
        }
        recorder.record_event({ 0, 2, 2.0, "pin", 1, "worker 1 pinned at batch 4", "operator:test" });
        recorder.record_event({ 1, 1, 2.2, "exclude", 0, "worker 0 excluded for 30 s", "operator:test" });
        recorder.record_event({ 0, 4, 9.0, "note", std::nullopt, "after the end", "system" });
        recorder.record_evaluation({ 0, 1, 2.0, 0.5, 0.1, 1.2, 1.1, 0.4 });
        recorder.record_evaluation({ 0, 3, 4.0, 1.0, 0.2, 0.9, 0.8, 0.6 });
        recorder.finish_run("finished", "{}");
    }
};

template <class T> std::vector<T> only(const std::vector<ServerMessage>& messages)
{
    std::vector<T> out;
    for (const auto& m : messages)
        if (const auto* t = std::get_if<T>(&m))
            out.push_back(*t);
    return out;
}

TEST_F(ReplaySourceTest, StepsFollowTheBarriersAcrossJobs)
{
    replay::ReplaySource source(store, 1, 7, "two-jobs.db");
    ASSERT_EQ(source.length(), 7);
    const std::pair<JobId, std::int64_t> expected[]
        = { { 0, 0 }, { 1, 0 }, { 0, 1 }, { 1, 1 }, { 0, 2 }, { 1, 2 }, { 0, 3 } };
    for (std::int64_t i = 0; i < source.length(); ++i) {
        EXPECT_EQ(source.mark(i).job, expected[i].first);
        EXPECT_EQ(source.mark(i).iteration, expected[i].second);
    }
    EXPECT_EQ(source.position_after(1, 1), 4);
    EXPECT_FALSE(source.position_after(1, 3));
    EXPECT_EQ(source.position_at_time(2.5), 4);
    EXPECT_EQ(source.position_at_time(0.5), 0);
    EXPECT_EQ(source.end_time_s(), 4.0);
}

TEST_F(ReplaySourceTest, EventsGoBeforeTheRowsOfTheirIterationOrAfterThemAtTheBarrier)
{
    replay::ReplaySource source(store, 1, 7, "two-jobs.db");
    // Step 2 is job 0's iteration 1, ending at 2 s: its rows, then the pin and the
    // evaluation made at that barrier.
    const auto step2 = source.step(2);
    ASSERT_TRUE(std::holds_alternative<IterationRows>(step2.at(0)));
    ASSERT_TRUE(std::holds_alternative<Event>(step2.at(1)));
    EXPECT_EQ(std::get<Event>(step2[1]).event.kind, "pin");
    EXPECT_TRUE(std::holds_alternative<Evaluation>(step2.at(2)));
    for (const auto& m : step2)
        std::visit(
            [](const auto& message) {
                if constexpr (requires { message.replay; }) {
                    EXPECT_EQ(message.replay, 7);
                }
            },
            m);
    // Step 3 is job 1's iteration 1 (1.5 .. 2.5 s): the exclusion at 2.2 s comes first.
    const auto step3 = source.step(3);
    ASSERT_TRUE(std::holds_alternative<Event>(step3.at(0)));
    EXPECT_EQ(std::get<Event>(step3[0]).event.kind, "exclude");
    const auto rows = only<IterationRows>(step3);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].job, 1);
    EXPECT_EQ(rows[0].iteration, 1);
    EXPECT_EQ(rows[0].rows.size(), 2u);
    const auto workers = only<WorkerUpdate>(step3);
    ASSERT_EQ(workers.size(), 1u);
    EXPECT_TRUE(workers[0].workers[0].excluded);
    EXPECT_EQ(workers[0].workers[0].excluded_until, 32.2);
    // After the last step: the late event and each job's final state.
    const auto end = source.finish();
    EXPECT_EQ(only<Event>(end).at(0).event.kind, "note");
    const auto finals = only<JobUpdate>(end);
    ASSERT_EQ(finals.size(), 2u);
    EXPECT_EQ(finals[0].status.state, JobState::Finished);
    EXPECT_EQ(finals[0].status.iteration, 4);
    EXPECT_EQ(finals[0].status.accuracy, 0.6);
    EXPECT_EQ(finals[1].status.iteration, 3);
}

TEST_F(ReplaySourceTest, ASnapshotIsTheRunAsOfAPosition)
{
    replay::ReplaySource source(store, 1, 7, "two-jobs.db");
    const auto at5 = source.snapshot(5); // after job 0's iteration 2
    const auto statuses = only<JobUpdate>(at5);
    ASSERT_EQ(statuses.size(), 2u);
    EXPECT_EQ(statuses[0].status.iteration, 3);
    EXPECT_EQ(statuses[0].status.time_s, 3.0);
    EXPECT_EQ(statuses[0].status.elapsed_s, 3.0) << "a replay's elapsed time is the run's own clock";
    EXPECT_EQ(statuses[0].status.accuracy, 0.4);
    EXPECT_EQ(statuses[0].status.state, JobState::Running);
    EXPECT_EQ(statuses[1].status.iteration, 2);
    const auto workers = only<WorkerUpdate>(at5);
    EXPECT_EQ(workers[0].workers[1].pinned, 4);
    EXPECT_EQ(workers[0].workers[1].batch_size, 4);
    EXPECT_TRUE(workers[1].workers[0].excluded);
    EXPECT_EQ(workers[1].workers[1].device, "cuda:1") << "from the worker's recorded profile";
    EXPECT_EQ(workers[1].workers[1].sms, 32);
    EXPECT_FALSE(workers[1].workers[0].sms);
    EXPECT_EQ(workers[1].workers[0].device, "cpu");
    EXPECT_EQ(workers[0].workers[0].device, "cpu");
    const auto rows = only<IterationRows>(at5);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].iteration, 2);
    EXPECT_EQ(rows[1].iteration, 1);
    // Position 0: nothing has run yet, and no pin is in force.
    const auto at0 = source.snapshot(0);
    EXPECT_EQ(only<IterationRows>(at0).size(), 0u);
    EXPECT_EQ(only<JobUpdate>(at0)[0].status.iteration, 0);
    EXPECT_FALSE(only<WorkerUpdate>(at0)[0].workers[1].pinned);
}

// fulcrumd records the cluster its job ran on (as fulcrumd job 5, time-sharing GPU 0 with
// job 3 from 1.5 s): the replay sends each state at its moment on the run's clock, with the
// job under its run id (0), and a snapshot carries the state as of its position. A record
// that does not decode is left out; the run still replays.
TEST_F(ReplaySourceTest, TheRecordedClusterComesAtItsMomentWithTheJobUnderItsRunId)
{
    const auto cluster_at = [](std::vector<std::vector<JobId>> gpus, std::vector<JobId> queue) {
        ClusterState c { "lwf-1", "eps", "none", 1, 2, 16, {}, std::move(queue), {} };
        for (std::size_t g = 0; g < gpus.size(); ++g)
            c.gpus.push_back({ static_cast<std::int32_t>(g), 0, 16, 0, std::move(gpus[g]) });
        return c;
    };
    const ClusterState alone = cluster_at({ { 5 }, {} }, { 3 });
    const ClusterState shared = cluster_at({ { 5, 3 }, { 0 } }, {});
    const std::filesystem::path path = dir / "cluster.db";
    {
        db::RunRecorder recorder(path);
        db::RunInfo run;
        run.name = "one job";
        run.scenario_json = "{}";
        run.mode = "virtual";
        recorder.begin_run(run);
        recorder.add_job({ 0, "job0", "mlp", 0, "bsp", "uniform", 8, 0.1, "naive", 3 });
        recorder.add_worker({ 0, 0, "w0", "cpu", "{}" });
        recorder.record_cluster({ 0, 0, 0.0, encode(ServerMessage { ClusterUpdate { alone } }), 5 });
        recorder.record_cluster({ 0, 1, 1.5, encode(ServerMessage { ClusterUpdate { shared } }), 5 });
        recorder.record_cluster({ 0, 2, 2.5, "{\"type\": \"cluster-state\", \"cluster\": 7}", 5 });
        for (int k = 0; k < 3; ++k) {
            const IterationRecord rows[] = { row(0, 0, k, k, k + 1.0, 8) };
            recorder.record_iterations(rows);
        }
        recorder.finish_run("finished", "{}");
    }
    replay::ReplaySource source(path, 1, 9, "cluster.db");
    ASSERT_EQ(source.length(), 3);
    const auto first = only<ClusterUpdate>(source.step(0));
    ASSERT_EQ(first.size(), 1u);
    EXPECT_EQ(first[0].replay, 9);
    EXPECT_EQ(first[0].time_s, 0.0);
    EXPECT_EQ(first[0].cluster, cluster_at({ { 0 }, {} }, { 3 })) << "fulcrumd's job 5 is the run's job 0";
    const auto second = only<ClusterUpdate>(source.step(1)); // iteration 1 runs from 1 to 2 s
    ASSERT_EQ(second.size(), 1u);
    EXPECT_EQ(second[0].time_s, 1.5);
    EXPECT_EQ(second[0].cluster, cluster_at({ { 0, 3 }, { 5 } }, {}))
        << "another job with the run's id takes fulcrumd's id instead: no two jobs merge";
    EXPECT_TRUE(only<ClusterUpdate>(source.step(2)).empty()) << "the damaged record is left out";
    EXPECT_TRUE(only<ClusterUpdate>(source.snapshot(0)).empty()) << "nothing is recorded before the run";
    const auto at1 = only<ClusterUpdate>(source.snapshot(1));
    ASSERT_EQ(at1.size(), 1u);
    EXPECT_EQ(at1[0].time_s, 0.0);
    const auto at3 = only<ClusterUpdate>(source.snapshot(3));
    ASSERT_EQ(at3.size(), 1u);
    EXPECT_EQ(at3[0].time_s, 1.5);
    EXPECT_TRUE(only<ClusterUpdate>(source.finish()).empty());
}

TEST_F(ReplaySourceTest, AMissingRunOrAForeignFileIsAnInputErrorNamingIt)
{
    try {
        replay::ReplaySource source(store, 5, 1, "two-jobs.db");
        FAIL() << "run 5 does not exist";
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "run");
    }
    const auto foreign = dir / "notes.db";
    std::ofstream(foreign) << "these are not the records you are looking for";
    try {
        replay::ReplaySource source(foreign, 1, 1, "notes.db");
        FAIL() << "a text file is not a run store";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("notes.db"), std::string::npos) << e.what();
    }
}

// The holds are read back from the texts the batch-size manager really writes.
TEST(JobFold, ReadsTheManagersOwnEventTexts)
{
    balance::BatchSizeManager manager(std::make_unique<balance::UniformPolicy>(), 3, 30);
    manager.initial();
    manager.pin(0, 6, EventActor::person("operator", "test"));
    manager.exclude(1, 12.5, EventActor::person("operator", "test"));
    std::vector<balance::WorkerObservation> seen;
    for (WorkerId w = 0; w < 3; ++w)
        seen.push_back({ w, 10, 0.1, 0.01, 1, 1, 1, 1, 0, 0 });
    manager.next(seen, 0, 3.0);
    auto events = records(manager.take_events());
    ASSERT_EQ(events.size(), 2u);
    const auto fold = [](const std::vector<EventRecord>& recorded) {
        JobFold f(3, "uniform", "bsp");
        for (const EventRecord& e : recorded)
            f.apply(typed(e));
        return f.holds();
    };
    auto holds = fold(events);
    EXPECT_TRUE(holds[0].pinned);
    EXPECT_TRUE(holds[1].excluded);
    EXPECT_EQ(holds[1].excluded_until, 15.5);
    EXPECT_EQ(holds[2], WorkerHold {});

    EventRecord straggler { 0, 4, 5.0, "straggler-injected", 2, "worker 2's batches take 4.000000x longer",
        "operator:test" };
    events.push_back(straggler);
    holds = fold(events);
    EXPECT_EQ(holds[2].slowdown, 4.0);
    events.push_back({ 0, 5, 6.0, "straggler-cleared", 2, "", "operator:test" });
    events.push_back({ 0, 5, 6.0, "include", 1, "", "operator:test" });
    events.push_back({ 0, 5, 6.0, "unpin", 9, "", "operator:test" }); // a worker the job does not have: ignored
    holds = fold(events);
    EXPECT_EQ(holds[2].slowdown, 1.0);
    EXPECT_FALSE(holds[1].excluded);
    EXPECT_FALSE(holds[1].excluded_until);
}

} // namespace

// A store as the last release wrote it (schema 4: no cluster states) replays its operator's
// changes through the one table from the old strings: the kinds, actors and texts as they
// were recorded, folded into the job's status and worker states.
TEST_F(ReplaySourceTest, AStoreOfTheLastReleaseFoldsItsEventsFromTheOldStrings)
{
    const std::filesystem::path old_store = dir / "schema-4.db";
    const std::vector<EventRecord> written {
        { 0, 0, 0.5, "job-started", std::nullopt, "2 workers", "system" },
        { 0, 1, 1.0, "pin", 1, "worker 1 pinned at batch 4", "operator:alice (fulcrum@10.0.0.7:5000) at T1" },
        { 0, 1, 1.0, "straggler-injected", 0, "worker 0's batches take 2.500000x longer", "operator:op at T2" },
        { 0, 2, 2.0, "policy-change", std::nullopt, "uniform -> lbbsp-cpu/ema", "operator:op at T3" },
        { 0, 2, 2.0, "sync-model-change", std::nullopt, "bsp -> backup(k=1)", "scenario" },
        { 0, 2, 2.5, "exclude", 0, "worker 0 excluded for 30 s", "operator:op at T4" },
        { 0, 3, 3.0, "job-paused", std::nullopt, "held at iteration 3", "operator:op at T5" },
    };
    {
        db::RunRecorder recorder(old_store);
        db::RunInfo run;
        run.name = "old";
        run.scenario_json = "{}";
        run.mode = "virtual";
        recorder.begin_run(run);
        db::JobInfo job;
        job.name = "old";
        job.model = "mlp";
        job.sync_model = "bsp";
        job.policy = "uniform";
        job.total_batch = 16;
        job.iterations = 4;
        recorder.add_job(job);
        for (WorkerId w : { 0, 1 })
            recorder.add_worker({ 0, w, "w" + std::to_string(w), "cpu", "{}" });
        for (int k = 0; k < 4; ++k) {
            const IterationRecord rows[] = { row(0, 0, k, k, k + 1.0, 8), row(0, 1, k, k, k + 0.9, 8) };
            recorder.record_iterations(rows);
        }
        for (const EventRecord& e : written)
            recorder.record_event(e);
        recorder.finish_run("finished", "{}");
    }
    sqlite3* handle = nullptr;
    ASSERT_EQ(sqlite3_open(old_store.c_str(), &handle), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(handle, "DROP TABLE cluster_states; PRAGMA user_version = 4", nullptr, nullptr, nullptr),
        SQLITE_OK);
    sqlite3_close(handle);

    const std::vector<EventRecord> read = db::RunReader(old_store).events(1);
    ASSERT_EQ(read.size(), written.size());
    for (const EventRecord& e : read)
        EXPECT_EQ(fulcrum::record(typed(e)), e) << e.kind;
    EXPECT_EQ(typed(read[1]).actor.name, "alice");
    EXPECT_EQ(typed(read[4]).actor.kind, EventActor::Kind::Scenario);

    replay::ReplaySource source(old_store, 1, 3, "schema-4.db");
    std::vector<ServerMessage> all;
    for (std::int64_t i = 0; i < source.length(); ++i)
        for (ServerMessage& m : source.step(i))
            all.push_back(std::move(m));
    const auto statuses = only<JobUpdate>(all);
    ASSERT_FALSE(statuses.empty());
    EXPECT_EQ(statuses.back().status.policy, "lbbsp-cpu/ema");
    EXPECT_EQ(statuses.back().status.sync_model, "backup(k=1)");
    EXPECT_EQ(statuses.back().status.state, protocol::JobState::Paused);
    const auto workers = only<WorkerUpdate>(all);
    ASSERT_FALSE(workers.empty());
    const WorkerState& w0 = workers.back().workers.at(0);
    EXPECT_TRUE(w0.excluded);
    EXPECT_EQ(w0.excluded_until, 32.5);
    EXPECT_EQ(w0.slowdown, 2.5);
    EXPECT_TRUE(workers.back().workers.at(1).pinned);
}
