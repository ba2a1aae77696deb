// A job killed with SIGKILL and resumed from its last checkpoint records, from the
// checkpoint on, exactly the rows of the uninterrupted run: the killed process is a real
// fulcrum-run, and the kill falls at a random iteration.

#include "common/error.h"
#include "db/run_reader.h"
#include "db/run_recorder.h"
#include "run/recorded_shares.h"
#include "run/run_scenario.h"
#include "train/trainer.h"

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <random>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

using namespace fulcrum;

namespace {

namespace fs = std::filesystem;

// Heterogeneous CPU workers with noise, a co-located load and a competing process (their
// random streams and generated load are in the checkpoint), a 2-shard server with momentum.
std::string cpu_scenario(const std::string& policy, const std::string& sync = R"("bsp")")
{
    return R"({"name": "checkpointed", "seed": 11, "mode": "paced", "pace": 4,
      "data": {"source": "synthetic", "train_size": 1500, "test_size": 300, "dim": 16, "classes": 4},
      "model": {"type": "mlp", "hidden": [24]},
      "training": {"total_batch": 96, "learning_rate": 0.05, "momentum": 0.9, "iterations": 120, "eval_interval": 15},
      "servers": {"shards": 2},
      "sync": )"
        + sync + R"(,
      "policy": )"
        + policy + R"(,
      "checkpoint": {"every_iterations": 7, "every_seconds": 0},
      "workers": [
        {"name": "fast", "speed": 4000, "count": 2, "noise": {"sigma": 0.05, "spike_probability": 0.02, "spike_factor": 2}},
        {"name": "shared", "speed": 2500, "colocated": {"arrivals_per_hour": 600, "mean_duration_s": 2, "cpu_min": 0.2, "cpu_max": 0.5},
         "noise": {"sigma": 0.08}},
        {"name": "old", "speed": 1200, "noise": {"sigma": 0.05}}
      ]})";
}

// GPU workers under Algorithm 2: its phases, counters and the non-blocking pending answer.
const char* kGpuScenario = R"({"name": "checkpointed-gpu", "seed": 4, "mode": "paced", "pace": 2,
  "data": {"source": "synthetic", "train_size": 1500, "test_size": 300, "dim": 16, "classes": 4},
  "model": {"type": "softmax"},
  "training": {"total_batch": 128, "learning_rate": 0.1, "iterations": 150, "eval_interval": 25},
  "policy": {"type": "lbbsp-gpu"},
  "checkpoint": {"every_iterations": 9, "every_seconds": 0},
  "workers": [{"gpu": "v100"}, {"gpu": "m60"}, {"gpu": "k80"}, {"gpu": "k520"}]})";

class Checkpoints : public ::testing::Test {
protected:
    fs::path dir = fs::temp_directory_path() / ("fulcrum-checkpoint-" + std::to_string(::getpid()));
    void SetUp() override { fs::create_directories(dir); }
    void TearDown() override { fs::remove_all(dir); }

    // The uninterrupted run, on the virtual clock (paced records the same rows).
    run::RunSummary uninterrupted(const std::string& json, const fs::path& database)
    {
        run::RunOptions options;
        options.mode = scenario::Mode::Virtual;
        options.database = database;
        return run::run_scenario(scenario::parse_scenario(json, "test"), options);
    }

    // fulcrum-run in paced mode, killed with SIGKILL once its store holds a checkpoint at or
    // past `kill_after` (the rows after it are then partly committed, as in a real crash).
    std::int64_t run_and_kill(const fs::path& scenario_file, const fs::path& database, std::int64_t kill_after)
    {
        const std::string binary = FULCRUM_RUN_BINARY, file = scenario_file.string(), out = database.string();
        std::vector<char*> argv { const_cast<char*>(binary.c_str()), const_cast<char*>(file.c_str()),
            const_cast<char*>("--out"), const_cast<char*>(out.c_str()), nullptr };
        pid_t pid = 0;
        EXPECT_EQ(::posix_spawn(&pid, binary.c_str(), nullptr, nullptr, argv.data(), environ), 0);
        std::int64_t checkpointed = -1;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
        while (std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            if (!fs::exists(database))
                continue;
            try {
                db::RunReader reader(database);
                if (const auto c = reader.checkpoint(1, 0); c && c->iteration >= kill_after) {
                    checkpointed = c->iteration;
                    break;
                }
            } catch (const InputError&) {
                // the store is still being created
            }
        }
        ::kill(pid, SIGKILL);
        int status = 0;
        ::waitpid(pid, &status, 0);
        EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "fulcrum-run ended before it was killed";
        return checkpointed;
    }

    run::RunSummary resume(const std::string& json, const fs::path& database)
    {
        db::RunReader reader(database);
        auto checkpoint = reader.checkpoint(1, 0);
        EXPECT_TRUE(checkpoint);
        run::RunOptions options;
        options.mode = scenario::Mode::Virtual;
        options.database = database;
        options.resume = run::RunOptions::Resume { 1, std::move(*checkpoint), {}, {} };
        return run::run_scenario(scenario::parse_scenario(json, "test"), options);
    }

    // `iterations`: the last row's iteration + 1, or 0 where the workers' clocks differ
    // (the free-running models count updates).
    void expect_same_rows(const fs::path& a, const fs::path& b, std::int64_t iterations)
    {
        db::RunReader ra(a), rb(b);
        const auto rows_a = ra.iterations(1, 0), rows_b = rb.iterations(1, 0);
        ASSERT_EQ(rows_a.size(), rows_b.size());
        for (std::size_t i = 0; i < rows_a.size(); ++i)
            ASSERT_EQ(rows_a[i], rows_b[i])
                << "row " << i << " (iteration " << rows_a[i].iteration << ", worker " << rows_a[i].worker << ")";
        if (iterations > 0) {
            EXPECT_EQ(rows_a.back().iteration, iterations - 1);
        }
        auto evals_a = ra.evaluations(1, 0), evals_b = rb.evaluations(1, 0);
        ASSERT_EQ(evals_a.size(), evals_b.size());
        for (std::size_t i = 0; i < evals_a.size(); ++i) {
            evals_a[i].wall_s = evals_b[i].wall_s = 0; // the wall clock is not the job's
            EXPECT_EQ(evals_a[i], evals_b[i]) << "evaluation " << i;
        }
        EXPECT_EQ(rb.integrity_check(), "ok");
        EXPECT_EQ(rb.run(1).status, "finished");
        // What the killed process committed past its checkpoint was set aside, and was what
        // the resumed run recorded again.
        std::map<std::pair<std::int64_t, WorkerId>, IterationRecord> by_key;
        for (const IterationRecord& r : rows_b)
            by_key[{ r.iteration, r.worker }] = r;
        for (const IterationRecord& r : rb.superseded_iterations(1, 0))
            EXPECT_EQ(by_key.at({ r.iteration, r.worker }), r);
    }

    // `free_running`: asp, ssp or elastic-bsp, whose checkpoints fall between two updates.
    void kill_and_resume(
        const std::string& json, std::int64_t iterations, std::int64_t every, bool free_running = false)
    {
        const auto expected = uninterrupted(json, dir / "uninterrupted.db");
        std::ofstream(dir / "scenario.json") << json;
        std::mt19937 draw(std::random_device {}());
        // In the first half: a paced run of 120 barriers lasts under a second, and the kill
        // must come before its end on a loaded machine too.
        const std::int64_t kill_after
            = std::uniform_int_distribution<std::int64_t>(every, std::max(every, iterations / 2))(draw);
        const std::int64_t checkpointed = run_and_kill(dir / "scenario.json", dir / "killed.db", kill_after);
        ASSERT_GE(checkpointed, kill_after) << "no checkpoint at or after iteration " << kill_after << " within 120 s";
        const auto resumed = resume(json, dir / "killed.db");
        expect_same_rows(dir / "uninterrupted.db", dir / "killed.db", free_running ? 0 : iterations);
        EXPECT_EQ(resumed.final_accuracy, expected.final_accuracy);
        EXPECT_EQ(resumed.iterations, expected.iterations);
        EXPECT_EQ(resumed.time_s, expected.time_s);
        db::RunReader reader(dir / "killed.db");
        const auto events = reader.events(1);
        const auto said = std::find_if(
            events.begin(), events.end(), [](const EventRecord& e) { return e.kind == "checkpoint-resumed"; });
        ASSERT_NE(said, events.end());
        const std::string where = free_running ? "after update " + std::to_string(checkpointed + 1)
                                               : "at iteration " + std::to_string(checkpointed);
        EXPECT_NE(said->message.find("resumed from checkpoint " + where), std::string::npos) << said->message;
    }
};

} // namespace

TEST_F(Checkpoints, AKilledCpuJobResumedFromItsCheckpointRecordsTheUninterruptedRowsBitForBit)
{
    kill_and_resume(cpu_scenario(R"({"type": "uniform"})"), 120, 7);
}

TEST_F(Checkpoints, AKilledGpuJobUnderAlgorithm2ResumesWithItsPhaseAndPendingAnswer)
{
    kill_and_resume(kGpuScenario, 150, 9);
}

TEST_F(Checkpoints, AKilledJobUnderNarxResumesWithItsHistoriesNetworksAndTrainingsInFlight)
{
    // NARX from iteration 24 on, retrained every 20 observations on a background thread and
    // adopted 10 later: kills land before, during and after trainings; the pooled warm start
    // keeps a shared training set and network too.
    kill_and_resume(cpu_scenario(R"({"type": "lbbsp-cpu", "predictor": {"type": "narx", "min_samples": 24,
        "retrain_every": 20, "max_epochs": 40, "hidden": 6, "warm_start": "pooled"}})"),
        120, 7);
}

TEST_F(Checkpoints, AKilledJobUnderArimaResumesWithItsFit)
{
    kill_and_resume(cpu_scenario(R"({"type": "lbbsp-cpu", "predictor": {"type": "arima"}})"), 120, 7);
}

TEST_F(Checkpoints, KilledAspSspAndElasticBspJobsResumeWithTheirBatchesUnderWayBitForBit)
{
    for (const char* sync :
        { R"("asp")", R"({"type": "ssp", "staleness": 2})", R"({"type": "elastic-bsp", "range": 6})" }) {
        SCOPED_TRACE(sync);
        // A push is a fraction of a barrier's time: 600 updates keep the paced run going long
        // enough to be killed.
        std::string json = cpu_scenario(R"({"type": "uniform"})", sync);
        json.replace(json.find(R"("iterations": 120)"), 17, R"("iterations": 600)");
        kill_and_resume(json, 600, 25, true);
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
}

TEST_F(Checkpoints, AJobThatSwitchedFromBspToAspResumesFromACheckpointTakenBetweenUpdates)
{
    // The operator switches the job to asp after barrier 10; the run stops at update 60
    // (a free-running checkpoint) and goes on to the end as the uninterrupted one did.
    const std::string json = cpu_scenario(R"({"type": "uniform"})");
    const auto operate = [](run::RunOptions& options, train::JobControl*& control) {
        options.on_trainer = [&control](train::Trainer* t) {
            if (t)
                control = &t->control();
        };
        options.on_rows = [&control](std::span<const IterationRecord> rows) {
            if (control && !rows.empty() && rows.front().iteration == 10 && rows.front().decision == "uniform") {
                sync::SyncSpec asp;
                asp.type = sync::SyncType::Asp;
                control->set_sync_model(asp, EventActor::person("operator", "test"));
            }
        };
    };
    train::JobControl* control = nullptr;
    run::RunOptions whole;
    whole.mode = scenario::Mode::Virtual;
    whole.database = dir / "whole.db";
    operate(whole, control);
    const auto expected = run::run_scenario(scenario::parse_scenario(json, "t"), whole);

    control = nullptr;
    std::atomic<bool> stop { false };
    run::RunOptions first;
    first.mode = scenario::Mode::Virtual;
    first.database = dir / "stopped.db";
    first.stop = &stop;
    operate(first, control);
    std::int64_t seen = 0;
    const auto inner = first.on_rows;
    first.on_rows = [&](std::span<const IterationRecord> rows) {
        inner(rows);
        seen += static_cast<std::int64_t>(rows.size());
        if (seen >= 80) // 11 barriers of 3 workers, then about 47 pushes
            stop = true;
    };
    EXPECT_TRUE(run::run_scenario(scenario::parse_scenario(json, "t"), first).stopped);
    const auto checkpoint = db::RunReader(dir / "stopped.db").checkpoint(1, 0);
    ASSERT_TRUE(checkpoint);
    EXPECT_NE(checkpoint->state.find("fulcrum free-running checkpoint"), std::string::npos);

    control = nullptr;
    run::RunOptions rest;
    rest.mode = scenario::Mode::Virtual;
    rest.database = dir / "stopped.db";
    rest.resume = run::RunOptions::Resume { 1, *checkpoint, {}, {} };
    operate(rest, control);
    const auto resumed = run::run_scenario(scenario::parse_scenario(json, "t"), rest);
    expect_same_rows(dir / "whole.db", dir / "stopped.db", 0);
    EXPECT_EQ(resumed.final_accuracy, expected.final_accuracy);
    EXPECT_EQ(resumed.sync, "asp");
}

// A store fulcrumd wrote numbers its job as fulcrumd did (here 7); fulcrum-run --resume gives
// no id, and the resumed rows go on as job 7's (the review of issue 43 item 6: it refused the
// checkpoint as another job's).
TEST_F(Checkpoints, AResumeWithoutAJobIdGoesOnAsTheCheckpointsJob)
{
    const std::string json = cpu_scenario(R"({"type": "uniform"})");
    std::atomic<bool> stop { false };
    run::RunOptions first;
    first.mode = scenario::Mode::Virtual;
    first.database = dir / "job-7.db";
    first.job = 7;
    first.stop = &stop;
    first.on_rows = [&](std::span<const IterationRecord> rows) {
        if (!rows.empty() && rows.front().iteration >= 10)
            stop = true;
    };
    EXPECT_TRUE(run::run_scenario(scenario::parse_scenario(json, "t"), first).stopped);
    db::RunReader reader(dir / "job-7.db");
    const auto checkpoint = reader.checkpoint(1, 7);
    ASSERT_TRUE(checkpoint) << "the checkpoint is job 7's";
    EXPECT_FALSE(reader.checkpoint(1, 0));

    run::RunOptions rest;
    rest.mode = scenario::Mode::Virtual;
    rest.database = dir / "job-7.db";
    rest.resume = run::RunOptions::Resume { 1, *checkpoint, {}, {} };
    const run::RunSummary resumed = run::run_scenario(scenario::parse_scenario(json, "t"), rest);
    EXPECT_FALSE(resumed.stopped);
    db::RunReader after(dir / "job-7.db");
    EXPECT_TRUE(after.iterations(1, 0).empty()) << "no row of another number";
    EXPECT_GT(after.iterations(1, 7).back().iteration, checkpoint->iteration) << "it went on as job 7";
}

TEST_F(Checkpoints, PinsExclusionsStragglersAndAPolicyChangeCarryAcrossAResume)
{
    // An operator's changes mid-run, then a clean stop: the stop writes a checkpoint, and the
    // resumed run goes on under the pins, exclusions and policy in effect.
    const std::string json = cpu_scenario(R"({"type": "uniform"})");
    const auto operate = [](run::RunOptions& options, balance::BatchSizeManager*& manager) {
        options.on_trainer = [&manager](train::Trainer* t) {
            if (t)
                manager = &t->manager();
        };
        options.on_rows = [&manager](std::span<const IterationRecord> rows) {
            if (!manager || rows.empty())
                return;
            if (rows.front().iteration == 10)
                manager->pin(1, 40, EventActor::person("operator", "test"));
            if (rows.front().iteration == 20)
                manager->exclude(3, std::nullopt, EventActor::person("operator", "test"));
            if (rows.front().iteration == 30)
                manager->set_policy(balance::make_policy(scenario::parse_policy_section(
                                        R"({"type": "fixed", "batch_sizes": [40, 30, 20, 6]})",
                                        scenario::parse_scenario(cpu_scenario(R"({"type": "uniform"})"), "t"), "t")),
                    {}, EventActor::person("operator", "test"), R"({"type": "fixed", "batch_sizes": [40, 30, 20, 6]})");
        };
    };
    balance::BatchSizeManager* manager = nullptr;
    run::RunOptions whole;
    whole.mode = scenario::Mode::Virtual;
    whole.database = dir / "whole.db";
    operate(whole, manager);
    run::run_scenario(scenario::parse_scenario(json, "t"), whole);

    manager = nullptr;
    std::atomic<bool> stop { false };
    run::RunOptions first;
    first.mode = scenario::Mode::Virtual;
    first.database = dir / "stopped.db";
    first.stop = &stop;
    operate(first, manager);
    const auto inner = first.on_rows;
    first.on_rows = [&](std::span<const IterationRecord> rows) {
        inner(rows);
        if (!rows.empty() && rows.front().iteration == 44)
            stop = true; // a clean stop at the next barrier, after the policy change took effect
    };
    const auto stopped = run::run_scenario(scenario::parse_scenario(json, "t"), first);
    EXPECT_TRUE(stopped.stopped);
    const auto checkpoint = db::RunReader(dir / "stopped.db").checkpoint(1, 0);
    ASSERT_TRUE(checkpoint);
    EXPECT_EQ(checkpoint->iteration, 44);
    EXPECT_NE(checkpoint->policy_json.find("fixed"), std::string::npos);

    run::RunOptions again;
    again.mode = scenario::Mode::Virtual;
    again.database = dir / "stopped.db";
    again.resume = run::RunOptions::Resume { 1, *checkpoint, {}, {} };
    const auto resumed = run::run_scenario(scenario::parse_scenario(json, "t"), again);
    EXPECT_EQ(resumed.policy, "fixed");
    expect_same_rows(dir / "whole.db", dir / "stopped.db", 120);
}

TEST_F(Checkpoints, AResumedJobFollowsTheSharesItsCrashedAttemptRecordedThenTheLiveCluster)
{
    // fulcrumd tells a job how many live jobs share each worker's GPU and server link; which
    // jobs are alive after a crash is another matter. The resumed attempt must record the
    // rows its crashed attempt recorded past the checkpoint exactly, so it follows the shares
    // that attempt recorded until it has recorded those rows, and the live cluster after.
    const std::string json = cpu_scenario(R"({"type": "uniform"})");
    const train::JobControl::LinkModel link { 0, 1e-8, 1e-8 }; // eq. 5: T(2) / T(1) = 3
    const auto steered
        = [&](const fs::path& database, std::map<std::int64_t, std::function<void(train::JobControl&)>> at,
              std::int64_t stop_after, const std::optional<db::Checkpoint>& from) {
              auto trainer = std::make_shared<train::Trainer*>(nullptr);
              auto stop = std::make_shared<std::atomic<bool>>(false);
              run::RunOptions options;
              options.mode = scenario::Mode::Virtual;
              options.database = database;
              options.stop = stop.get();
              if (from)
                  options.resume = run::RunOptions::Resume { 1, *from, {}, link };
              options.on_trainer = [trainer, at](train::Trainer* t) {
                  *trainer = t;
                  if (t && at.contains(-1))
                      at.at(-1)(t->control()); // the live cluster as the job starts
              };
              options.on_rows = [trainer, stop, at, stop_after](std::span<const IterationRecord> rows) {
                  if (!*trainer || rows.empty())
                      return;
                  if (const auto it = at.find(rows.front().iteration); it != at.end())
                      it->second((*trainer)->control());
                  if (rows.front().iteration == stop_after)
                      *stop = true;
              };
              run::run_scenario(scenario::parse_scenario(json, "t"), options);
          };
    const auto gpus = [](std::vector<int> jobs) { return [jobs](train::JobControl& c) { c.set_gpu_sharing(jobs); }; };
    const auto links = [&](std::vector<int> jobs) {
        return [jobs, link](train::JobControl& c) { c.set_link_contention({ jobs, link }); };
    };
    const fs::path store = dir / "shared.db";
    // The first attempt: shares change before its checkpoint at 19 ...
    steered(store, { { 12, gpus({ 2, 1, 1, 1 }) }, { 15, links({ 2, 2, 1, 1 }) } }, 19, std::nullopt);
    const std::optional<db::Checkpoint> at_19 = db::RunReader(store).checkpoint(1, 0);
    ASSERT_TRUE(at_19);
    ASSERT_EQ(at_19->iteration, 19);
    // ... and after it, until it stops at 44: its rows 20 to 44 stand for those a crash left
    // past the checkpoint.
    steered(store, { { 25, gpus({ 1, 3, 1, 1 }) }, { 33, links({ 1, 1, 1, 1 }) }, { 40, gpus({ 1, 1, 1, 1 }) } }, 44,
        at_19);
    std::map<std::pair<std::int64_t, WorkerId>, IterationRecord> first;
    for (const IterationRecord& r : db::RunReader(store).iterations(1, 0))
        if (r.iteration > 19)
            first[{ r.iteration, r.worker }] = r;
    ASSERT_EQ(first.size(), 25u * 4);

    // The crash's resume, from 19 again, into a cluster where every GPU and link is shared;
    // it crashes too (stops) at 30, before it has recorded again all the first attempt
    // recorded, and the next resume from 19 still repeats the first attempt to 44.
    const std::map<std::int64_t, std::function<void(train::JobControl&)>> shared_cluster { { -1,
        [&](train::JobControl& c) {
            gpus({ 4, 4, 4, 4 })(c);
            links({ 3, 3, 3, 3 })(c);
        } } };
    steered(store, shared_cluster, 30, at_19);
    steered(store, shared_cluster, -2, at_19);
    db::RunReader reader(store);
    EXPECT_EQ(reader.run(1).status, "finished");
    std::size_t again = 0;
    bool live_after = false;
    for (const IterationRecord& r : reader.iterations(1, 0)) {
        if (const auto it = first.find({ r.iteration, r.worker }); it != first.end()) {
            EXPECT_EQ(r, it->second) << "iteration " << r.iteration << ", worker " << r.worker;
            ++again;
        }
        live_after
            = live_after || (r.iteration == 45 && r.worker == 3 && r.compute_s > 3 * first.at({ 44, 3 }).compute_s);
    }
    EXPECT_EQ(again, first.size());
    EXPECT_TRUE(live_after) << "from iteration 45 on the live cluster's sharing (4 jobs a GPU) applies";
    std::map<std::pair<std::int64_t, WorkerId>, IterationRecord> final_rows;
    for (const IterationRecord& r : reader.iterations(1, 0))
        final_rows[{ r.iteration, r.worker }] = r;
    for (const IterationRecord& r : reader.superseded_iterations(1, 0))
        EXPECT_EQ(final_rows.at({ r.iteration, r.worker }), r) << "set aside: iteration " << r.iteration;
    // The events say so: the first attempt's changes again (each asked for after a row, in
    // effect from the next iteration), then the live cluster's.
    std::vector<std::pair<std::int64_t, std::string>> resumed;
    bool after_last_resume = false;
    for (const EventRecord& e : reader.events(1)) {
        if (e.kind == "checkpoint-resumed")
            after_last_resume = true, resumed.clear();
        else if (after_last_resume && (e.kind == "gpu-shared" || e.kind == "gpu-exclusive") && e.worker == 1)
            resumed.emplace_back(e.iteration, e.message.substr(0, e.message.find(':')));
    }
    const std::vector<std::pair<std::int64_t, std::string>> expected {
        { 26, "worker 1's GPU is time-shared by 3 live jobs" }, { 41, "worker 1 has its GPU to itself again" },
        { 45, "worker 1's GPU is time-shared by 4 live jobs" }
    };
    EXPECT_EQ(resumed, expected);
}

TEST(RecordedShares, OnlyTheNewestAttemptsChangesPastEachResumeCount)
{
    const auto event = [](std::int64_t at, const char* kind, WorkerId worker, const std::string& message) {
        EventRecord e;
        e.job = 1;
        e.iteration = at;
        e.time_s = static_cast<double>(at); // a second an iteration
        e.kind = kind;
        e.worker = worker;
        e.message = message;
        e.actor = "scheduler";
        return e;
    };
    const std::vector<EventRecord> events {
        event(5, "gpu-shared", 0, "worker 0's GPU is time-shared by 2 live jobs: its batches take 2x longer"),
        event(8, "link-contended", 1,
            "worker 1's pushes and pulls cross its server's link with 2 other live jobs' (eq. 5): they take 5x as "
            "long"),
        event(30, "gpu-shared", 1, "worker 1's GPU is time-shared by 3 live jobs: its batches take 3x longer"),
        event(20, "checkpoint-resumed", 0, "resumed from checkpoint at iteration 20"), // 30's attempt crashed
        event(24, "gpu-exclusive", 0, "worker 0 has its GPU to itself again"),
        event(24, "gpu-shared", 1, "worker 1's GPU is time-shared by 2 live jobs: its batches take 2x longer"),
        event(26, "link-free", 1, "worker 1's server link carries only its own job's pushes and pulls again"),
    };
    const train::JobControl::LinkModel link { 0.001, 1e-9, 0 };
    const auto shares = run::recorded_shares(events, 1, { 21, 21.0 }, 2, link, 99.5);
    EXPECT_EQ(shares.gpu.jobs_per_gpu, (std::vector<int> { 2, 1 }));
    ASSERT_TRUE(shares.link);
    EXPECT_EQ(shares.link->jobs, (std::vector<int> { 1, 3 }));
    EXPECT_EQ(shares.until_s, 99.5);
    ASSERT_EQ(shares.changes.size(), 2u);
    EXPECT_EQ(shares.changes[0].at, 24);
    ASSERT_TRUE(shares.changes[0].gpu);
    EXPECT_EQ(shares.changes[0].gpu->jobs_per_gpu, (std::vector<int> { 1, 2 }));
    EXPECT_FALSE(shares.changes[0].link);
    EXPECT_EQ(shares.changes[1].at, 26);
    ASSERT_TRUE(shares.changes[1].link);
    EXPECT_EQ(shares.changes[1].link->jobs, (std::vector<int> { 1, 1 }));
    // Without the links' model only the GPUs are followed.
    const auto gpus_only = run::recorded_shares(events, 1, { 21, 21.0 }, 2, std::nullopt, 99.5);
    EXPECT_FALSE(gpus_only.link);
    EXPECT_EQ(gpus_only.changes.size(), 1u);
    // A resume that says it repeated the attempt before it up to 35 s keeps that attempt's
    // change at 30 s: the rows it recorded saw it.
    std::vector<EventRecord> repeated = events;
    repeated[3].message += "; it follows the cluster its store recorded until 35 s";
    const auto kept = run::recorded_shares(repeated, 1, { 21, 21.0 }, 2, link, 99.5);
    ASSERT_EQ(kept.changes.size(), 3u);
    EXPECT_EQ(kept.changes[0].at, 24);
    EXPECT_EQ(kept.changes[1].at, 26);
    EXPECT_EQ(kept.changes[2].at, 30);
    ASSERT_TRUE(kept.changes[2].gpu);
    EXPECT_EQ(kept.changes[2].gpu->jobs_per_gpu, (std::vector<int> { 1, 3 }));
}

TEST_F(Checkpoints, ACorruptOrForeignCheckpointIsRefusedWithItsPart)
{
    const std::string json = cpu_scenario(R"({"type": "uniform"})");
    uninterrupted(json, dir / "run.db");
    auto checkpoint = db::RunReader(dir / "run.db").checkpoint(1, 0);
    ASSERT_TRUE(checkpoint);
    const auto resume_with = [&](const std::string& state, const std::string& scenario_json) -> std::string {
        run::RunOptions options;
        options.mode = scenario::Mode::Virtual;
        options.database = dir / "run.db";
        db::Checkpoint c = *checkpoint;
        c.state = state;
        options.resume = run::RunOptions::Resume { 1, c, {}, {} };
        try {
            run::run_scenario(scenario::parse_scenario(scenario_json, "t"), options);
        } catch (const InputError& e) {
            return e.what();
        }
        return "resumed";
    };
    EXPECT_NE(resume_with(checkpoint->state.substr(0, checkpoint->state.size() / 2), json).find("ends early"),
        std::string::npos);
    EXPECT_NE(resume_with("garbage", json).find("checkpoint"), std::string::npos);
    // The same checkpoint under another model is refused, not misread.
    std::string other = json;
    other.replace(other.find("[24]"), 4, "[32]");
    EXPECT_NE(resume_with(checkpoint->state, other).find("keys"), std::string::npos);
}
