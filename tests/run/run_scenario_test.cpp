#include "common/error.h"
#include "db/run_reader.h"
#include "run/run_scenario.h"
#include "run/run_summary.h"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <filesystem>
#include <gtest/gtest.h>
#include <map>

using namespace fulcrum;

namespace {

const char* kScenario = R"({
  "name": "synthetic-3",
  "seed": 5,
  "data": { "source": "synthetic", "train_size": 1000, "test_size": 200, "dim": 12, "classes": 3 },
  "model": { "type": "mlp", "hidden": [16] },
  "training": { "total_batch": 48, "learning_rate": 0.1, "iterations": 60, "eval_interval": 20 },
  "workers": [ { "speed": 3000 }, { "speed": 1000, "count": 2 } ]
})";

class RunScenario : public ::testing::Test {
protected:
    std::filesystem::path dir = std::filesystem::temp_directory_path() / ("fulcrum-run-" + std::to_string(::getpid()));
    void SetUp() override { std::filesystem::create_directories(dir); }
    void TearDown() override { std::filesystem::remove_all(dir); }
};

} // namespace

TEST_F(RunScenario, RecordsEveryIterationOfEveryWorkerAndTheSummary)
{
    const auto s = scenario::parse_scenario(kScenario, "inline");
    run::RunOptions options;
    options.database = dir / "run.db";
    int progress_calls = 0;
    options.progress = [&](const run::Progress& p) {
        ++progress_calls;
        EXPECT_EQ(p.iterations, 60);
    };
    const auto summary = run::run_scenario(s, options);
    EXPECT_EQ(progress_calls, 60);
    EXPECT_EQ(summary.iterations, 60);
    EXPECT_EQ(summary.workers, 3);
    EXPECT_GT(summary.final_accuracy, 0.6);

    db::RunReader reader(dir / "run.db");
    const auto run = reader.run(summary.run);
    EXPECT_EQ(run.status, "finished");
    EXPECT_EQ(run.scenario_json, kScenario);
    const auto json = boost::json::parse(run.summary_json).as_object();
    EXPECT_EQ(json.at("iterations").as_int64(), 60);
    EXPECT_DOUBLE_EQ(json.at("final_test_accuracy").as_double(), summary.final_accuracy);
    EXPECT_EQ(reader.iterations(summary.run, 0).size(), 180u);
    EXPECT_EQ(reader.evaluations(summary.run, 0).size(), 3u);
    EXPECT_EQ(reader.workers(summary.run).size(), 3u);
    EXPECT_EQ(reader.events(summary.run).front().kind, "job-started");
}

TEST_F(RunScenario, TwoRunsOfOneSeedRecordIdenticalRows)
{
    const auto s = scenario::parse_scenario(kScenario, "inline");
    run::RunOptions options;
    options.database = dir / "run.db";
    const auto first = run::run_scenario(s, options);
    const auto second = run::run_scenario(s, options);
    db::RunReader reader(dir / "run.db");
    EXPECT_EQ(reader.iterations(first.run, 0), reader.iterations(second.run, 0));
    options.seed = 6;
    const auto third = run::run_scenario(s, options);
    EXPECT_NE(reader.iterations(first.run, 0), reader.iterations(third.run, 0));
}

TEST_F(RunScenario, UnwritableDatabaseIsRefusedBeforeAnyDataIsLoaded)
{
    // The data path is missing too: the error must be about the database, proving it was checked first.
    auto s = scenario::parse_scenario(kScenario, "inline");
    s.data.source = "fashion-mnist";
    s.data.path = "/nonexistent";
    run::RunOptions options;
    options.database = dir / "no-such-dir" / "run.db";
    try {
        run::run_scenario(s, options);
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(e.source(), options.database->string());
    }
}

TEST_F(RunScenario, MissingDataSetNamesTheDebianPackage)
{
    auto s = scenario::parse_scenario(kScenario, "inline");
    s.data.source = "fashion-mnist";
    s.data.path = (dir / "absent").string();
    try {
        run::run_scenario(s, {});
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("apt-get install dataset-fashion-mnist"), std::string::npos);
    }
}

TEST_F(RunScenario, StopRequestLeavesAStoppedRunWithItsRows)
{
    const auto s = scenario::parse_scenario(kScenario, "inline");
    std::atomic<bool> stop { false };
    run::RunOptions options;
    options.database = dir / "run.db";
    options.stop = &stop;
    options.progress = [&](const run::Progress& p) {
        if (p.iteration == 25)
            stop = true;
    };
    const auto summary = run::run_scenario(s, options);
    EXPECT_TRUE(summary.stopped);
    db::RunReader reader(dir / "run.db");
    EXPECT_EQ(reader.run(summary.run).status, "stopped");
    EXPECT_EQ(reader.iterations(summary.run, 0).size(), 75u);
}

TEST(RunScenarioChecks, AGpuBatchAboveTheMemoryLimitIsRefusedBeforeTraining)
{
    auto s = scenario::parse_scenario(R"({
      "data": { "source": "synthetic", "train_size": 200, "test_size": 50, "dim": 8, "classes": 3 },
      "model": { "type": "softmax" },
      "training": { "total_batch": 200, "iterations": 3 },
      "policy": { "type": "fixed", "batch_sizes": [ 190, 10 ] },
      "workers": [ { "gpu": "k520" }, { "gpu": "v100" } ]
    })",
        "gpu.json");
    try {
        run::run_scenario(s, {});
        FAIL() << "a batch of 190 on a K520 (limit 75) was accepted";
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "policy.batch_sizes[0]");
        EXPECT_NE(std::string(e.what()).find("memory limit of 75"), std::string::npos) << e.what();
    }
}

// The virtual modes record a GPU-profile worker's device memory as its performance model
// gives it (GB and share of the device, no utilisation: nothing measured one), under BSP
// and under a free-running model; a CPU worker's GPU columns stay NULL.
TEST_F(RunScenario, VirtualGpuWorkersRecordTheirModelledDeviceMemory)
{
    for (const char* sync : { "bsp", "asp" }) {
        auto s = scenario::parse_scenario(std::string(R"({
          "data": { "source": "synthetic", "train_size": 300, "test_size": 50, "dim": 8, "classes": 3 },
          "model": { "type": "softmax" },
          "training": { "total_batch": 60, "iterations": 6 },
          "sync": ")")
                + sync + R"(",
          "workers": [ { "gpu": "k520" }, { "gpu": "v100" }, { "speed": 400 } ]
        })",
            "gpu-memory.json");
        run::RunOptions options;
        options.database = dir / (std::string(sync) + ".db");
        const auto summary = run::run_scenario(s, options);
        db::RunReader reader(*options.database);
        const auto rows = reader.iterations(summary.run, 0);
        ASSERT_FALSE(rows.empty());
        for (const IterationRecord& r : rows) {
            if (r.worker == 2) {
                EXPECT_EQ(r.gpu, GpuUse {}) << sync;
                continue;
            }
            const perf::GpuProfile& gpu = *s.workers[static_cast<std::size_t>(r.worker)].gpu;
            ASSERT_TRUE(r.gpu.memory_share) << sync;
            EXPECT_DOUBLE_EQ(*r.gpu.memory_share, gpu.memory_use(r.batch_size)) << sync;
            EXPECT_DOUBLE_EQ(r.gpu.memory_gb.value_or(0), *r.gpu.memory_share * gpu.memory_gb) << sync;
            EXPECT_FALSE(r.gpu.utilization) << sync;
        }
        const auto workers = reader.workers(summary.run);
        ASSERT_EQ(workers.size(), 3u);
        EXPECT_NE(workers[0].profile_json.find(R"("device":"cpu")"), std::string::npos) << workers[0].profile_json;
    }
}

TEST(RunScenarioChecks, AsynchronousModelsRunFromAScenarioAndReportUpdates)
{
    auto s = scenario::parse_scenario(R"({
      "data": { "source": "synthetic", "train_size": 400, "test_size": 100, "dim": 8, "classes": 3 },
      "model": { "type": "softmax" },
      "training": { "total_batch": 32, "iterations": 60, "eval_interval": 20 },
      "sync": { "type": "elastic-bsp", "range": 5, "algorithm": "zipline" },
      "heterogeneity": "hetero-l3",
      "workers": [ { "speed": 500, "count": 4 } ]
    })",
        "elastic.json");
    const run::RunSummary r = run::run_scenario(s, {});
    EXPECT_EQ(r.updates, 60);
    EXPECT_EQ(r.sync, "elastic-bsp(R=5, zipline)");
    s.policy.type = "lbbsp-cpu";
    EXPECT_THROW(run::run_scenario(s, {}), InputError);
}

// A scenario's "changes": the same heterogeneous cluster under uniform BSP, then LB-BSP,
// switched at a barrier as an operator's set-policy would be, and recorded as an event by
// "scenario"; a change the job cannot take is refused as an event and the run goes on.
TEST_F(RunScenario, ScheduledChangesSwitchThePolicyAndSyncModelAtTheirIterations)
{
    std::string text = kScenario;
    text.replace(text.rfind('}'), 1,
        R"(, "changes": [
            { "before_iteration": 20, "policy": { "type": "lbbsp-cpu", "predictor": { "type": "ema" } } },
            { "before_iteration": 40, "sync": "asp" } ] })");
    const auto s = scenario::parse_scenario(text, "inline");
    ASSERT_EQ(s.changes.size(), 2u);
    run::RunOptions options;
    options.database = dir / "changes.db";
    const auto summary = run::run_scenario(s, options);
    db::RunReader reader(dir / "changes.db");
    const auto rows = reader.iterations(summary.run, 0);
    std::map<std::int64_t, std::vector<std::int32_t>> sizes;
    for (const auto& r : rows)
        sizes[r.iteration].push_back(r.batch_size);
    EXPECT_EQ(sizes[19], (std::vector<std::int32_t> { 16, 16, 16 })) << "uniform BSP before the change";
    EXPECT_GT(sizes[30][0], sizes[30][1]) << "LB-BSP gives the 3x faster worker the larger batch";
    const auto events = reader.events(summary.run);
    const auto change = std::find_if(events.begin(), events.end(),
        [](const EventRecord& e) { return e.kind == "policy-change" && e.actor.starts_with("scenario"); });
    ASSERT_NE(change, events.end());
    EXPECT_EQ(change->iteration, 20);
    // asp has no barrier to balance at while lbbsp-cpu sizes the workers: refused, job goes on.
    const auto refused = std::find_if(
        events.begin(), events.end(), [](const EventRecord& e) { return e.kind == "scheduled-change-refused"; });
    ASSERT_NE(refused, events.end());
    EXPECT_NE(refused->message.find("policy-not-applicable"), std::string::npos) << refused->message;
    EXPECT_EQ(refused->iteration, 40);
    EXPECT_EQ(reader.run(summary.run).status, "finished");
    EXPECT_EQ(summary.iterations, 60);
}

// With changes among barrier models the summary gives each setting's time per iteration:
// the same cluster under uniform BSP and under LB-BSP.
TEST_F(RunScenario, TheSummaryGivesEachScheduledSettingsTimePerIteration)
{
    std::string text = kScenario;
    text.replace(text.rfind('}'), 1,
        R"(, "changes": [ { "before_iteration": 20, "policy": { "type": "lbbsp-cpu", "predictor": { "type": "ema" } } } ] })");
    run::RunOptions options;
    const auto summary = run::run_scenario(scenario::parse_scenario(text, "inline"), options);
    ASSERT_EQ(summary.phases.size(), 2u);
    EXPECT_EQ(summary.phases[0].first_iteration, 0);
    EXPECT_EQ(summary.phases[0].iterations, 20);
    EXPECT_EQ(summary.phases[0].setting, "uniform, bsp");
    EXPECT_EQ(summary.phases[1].first_iteration, 20);
    EXPECT_EQ(summary.phases[1].iterations, 40);
    EXPECT_EQ(summary.phases[1].setting, "lbbsp-cpu, bsp");
    EXPECT_LT(summary.phases[1].mean_iteration_s, 0.8 * summary.phases[0].mean_iteration_s)
        << "a 3x faster worker no longer waits for the slow ones";
    const double total = summary.phases[0].mean_iteration_s * 20 + summary.phases[1].mean_iteration_s * 40;
    EXPECT_NEAR(total, summary.time_s, 1e-9) << "the phases cover the run's clock";
    EXPECT_NE(run::to_json(summary).find("\"phases\""), std::string::npos);
    EXPECT_NE(run::to_text(summary).find("% less"), std::string::npos) << run::to_text(summary);
}

// A weak-scaled job's work is its samples: after a growth it plans fewer barriers, but its
// progress counts the work done and planned in iterations of its first plan (samples over
// the scenario's total batch), which the growth does not move. fulcrumd's early feedback
// is a fraction of that work, as the simulator's is of the samples.
TEST_F(RunScenario, AWeakScaledJobsWorkIsCountedInSamplesAcrossAGrowth)
{
    const auto s = scenario::parse_scenario(R"({
      "name": "weak", "seed": 5, "mode": "virtual",
      "data": { "source": "synthetic", "train_size": 1000, "test_size": 200, "dim": 12, "classes": 3 },
      "model": { "type": "softmax" },
      "training": { "total_batch": 32, "iterations": 40, "eval_interval": 20 },
      "elastic": { "initial_workers": 2, "batch_per_worker": 16,
                   "resizes": [ { "before_iteration": 10, "action": "add-worker" },
                                { "before_iteration": 10, "action": "add-worker" } ] },
      "workers": [ { "speed": 1000, "count": 4 } ]
    })",
        "inline");
    std::vector<run::Progress> seen;
    run::RunOptions options;
    options.progress = [&](const run::Progress& p) { seen.push_back(p); };
    // The model's full name reaches the caller before the first iteration, and is the
    // summary's (a live job's status named "softmax" until it finished: issue 44).
    std::optional<std::string> model;
    options.on_model = [&](const std::string& name) {
        EXPECT_TRUE(seen.empty()) << "named before training";
        model = name;
    };
    const run::RunSummary summary = run::run_scenario(s, options);
    ASSERT_TRUE(model);
    EXPECT_EQ(*model, summary.model);
    EXPECT_NE(*model, "softmax");
    ASSERT_FALSE(seen.empty());
    EXPECT_EQ(seen.front().iterations, 40);
    EXPECT_EQ(seen.back().iterations, 25) << "10 barriers of 32 samples, then 960 left at 64: 15 more";
    for (const run::Progress& p : seen) {
        EXPECT_EQ(p.work_planned, 40) << "at iteration " << p.iteration;
        EXPECT_EQ(p.work_done, p.iteration <= 10 ? p.iteration : 10 + 2 * (p.iteration - 10))
            << "each barrier after the growth takes two of the first plan's: iteration " << p.iteration;
    }
    EXPECT_EQ(seen.back().work_done, 40);
}

// An external job that does not say how many samples its epoch has: its summary names no
// epochs, where it used to say 0.
TEST(RunSummary, EpochsAreLeftOutWhenTheDataSetIsUnknown)
{
    run::RunSummary summary;
    summary.scenario = "torch-job";
    summary.iterations = 30;
    EXPECT_EQ(run::to_json(summary).find("epochs"), std::string::npos) << run::to_json(summary);
    EXPECT_EQ(run::to_text(summary).find("epochs"), std::string::npos) << run::to_text(summary);
    summary.epochs = 6;
    EXPECT_NE(run::to_json(summary).find("\"epochs\":6"), std::string::npos) << run::to_json(summary);
    EXPECT_NE(run::to_text(summary).find("30 (6.00 epochs)"), std::string::npos) << run::to_text(summary);
}
