#include "balance/policy_registry.h"
#include "common/error.h"
#include "data/synthetic.h"
#include "model/model_factory.h"
#include "train/async_trainer.h"
#include "train/bsp_trainer.h"

#include <gtest/gtest.h>
#include <algorithm>
#include <map>
#include <set>

using namespace fulcrum;

namespace {

struct Collector final : train::TrainingObserver {
    void on_iteration(std::span<const IterationRecord> r) override { rows.insert(rows.end(), r.begin(), r.end()); }
    void on_evaluation(const EvaluationRecord& e) override { evaluations.push_back(e); }
    void on_event(const EventRecord& e) override { events.push_back(e); }
    std::vector<IterationRecord> rows;
    std::vector<EvaluationRecord> evaluations;
    std::vector<EventRecord> events;
};

// Four workers, the last three times slower than the first.
train::TrainerConfig config(const std::string& sync, std::int64_t iterations)
{
    data::SyntheticSpec spec;
    spec.train_size = 800;
    spec.test_size = 200;
    spec.dim = 16;
    spec.classes = 4;
    const data::TrainTest d = data::make_synthetic(spec);
    train::TrainerConfig c;
    c.train = d.train;
    c.test = d.test;
    c.prototype = model::make_model({ "softmax", {} }, d.train->dim(), d.train->classes);
    const double speeds[] = { 300, 200, 200, 100 };
    for (double s : speeds) {
        perf::WorkerProfile w;
        w.cpu.speed = s;
        c.workers.push_back(w);
    }
    c.total_batch = 32;
    c.optimizer.learning_rate = 0.1f;
    c.iterations = iterations;
    c.eval_interval = iterations;
    c.sync.type = sync;
    c.threads = 1;
    return c;
}

} // namespace

TEST(AsyncTrainer, AspAppliesEveryPushAtOnceAndTheFastWorkerDoesMore)
{
    Collector out;
    train::AsyncTrainer trainer(config("asp", 400), out);
    const train::TrainingResult r = trainer.run();
    EXPECT_EQ(r.updates, 400);
    EXPECT_EQ(trainer.server().version(), 400);
    std::map<WorkerId, int> per_worker;
    for (const auto& row : out.rows) {
        ++per_worker[row.worker];
        EXPECT_NEAR(row.wait_s, 0, 1e-12); // nobody ever waits under ASP
    }
    EXPECT_NEAR(static_cast<double>(per_worker[0]) / per_worker[3], 3.0, 0.2);
    EXPECT_GT(r.final_evaluation.test_accuracy, 0.5);
}

TEST(AsyncTrainer, SspHoldsAWorkerThatIsMoreThanSIterationsAhead)
{
    for (const int s : { 0, 2 }) {
        auto c = config("ssp", 200);
        c.sync.staleness = s;
        Collector out;
        train::AsyncTrainer trainer(std::move(c), out);
        trainer.run();
        // Replay the clocks: a worker starting iteration k needs every other to have finished k - s.
        std::vector<IterationRecord> rows = out.rows;
        std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.start_s < b.start_s; });
        for (const auto& row : rows) {
            for (WorkerId other = 0; other < 4; ++other) {
                std::int64_t finished = 0;
                for (const auto& r : out.rows)
                    if (r.worker == other && r.end_s <= row.start_s + 1e-12)
                        ++finished;
                EXPECT_LE(row.iteration - finished, s) << "worker " << row.worker << " iteration " << row.iteration;
            }
        }
        double waited = 0;
        for (const auto& row : out.rows)
            if (row.worker == 0)
                waited += row.wait_s;
        EXPECT_GT(waited, 0) << "the fastest worker must have been held at s = " << s;
    }
}

TEST(AsyncTrainer, ElasticBspLetsFastWorkersRunMoreIterationsPerSuperstep)
{
    auto c = config("elastic-bsp", 400);
    c.sync.range = 6;
    Collector out;
    train::AsyncTrainer trainer(std::move(c), out);
    trainer.run();
    std::set<std::string> fast_quota;
    for (const auto& row : out.rows)
        if (row.worker == 0)
            fast_quota.insert(row.decision);
    EXPECT_TRUE(fast_quota.contains("elastic-bsp r=3")) << "the 3x faster worker should run 3 iterations per superstep";
    const auto finished = std::find_if(out.events.begin(), out.events.end(), [](const auto& e) { return e.kind == "job-finished"; });
    ASSERT_NE(finished, out.events.end());
    EXPECT_NE(finished->message.find("supersteps"), std::string::npos);
}

TEST(AsyncTrainer, RefusesSynchronousModelsAndRealMode)
{
    Collector out;
    EXPECT_THROW(train::AsyncTrainer(config("bsp", 10), out), std::invalid_argument);
    auto c = config("asp", 10);
    c.mode = train::ClockMode::Real;
    EXPECT_THROW(train::AsyncTrainer(std::move(c), out), std::invalid_argument);
}

TEST(BspTrainer, BackupWorkersCloseTheBarrierWithoutTheSlowestAndDropItsGradient)
{
    auto c = config("backup", 50);
    c.sync.backups = 1;
    Collector out;
    train::BspTrainer trainer(std::move(c), std::unique_ptr<balance::BatchSizeManager>(), out);
    trainer.run();
    int dropped = 0;
    for (const auto& row : out.rows)
        if (row.decision == "dropped") {
            ++dropped;
            EXPECT_EQ(row.worker, 3);
        }
    EXPECT_EQ(dropped, 50);
}

TEST(BspTrainer, ASyncModelChangeDuringTheRunTakesEffectAtTheNextIteration)
{
    // The operator switches bsp -> backup(k=1) after iteration 4 and back after iteration 9.
    struct Operator final : train::TrainingObserver {
        void on_iteration(std::span<const IterationRecord> r) override
        {
            rows.insert(rows.end(), r.begin(), r.end());
            sync::SyncSpec spec;
            if (r.front().iteration == 4) {
                spec.type = "backup";
                spec.backups = 1;
                trainer->set_sync_model(spec, "op");
            } else if (r.front().iteration == 9) {
                trainer->set_sync_model(spec, "op"); // bsp
            }
        }
        void on_evaluation(const EvaluationRecord&) override {}
        void on_event(const EventRecord& e) override { events.push_back(e); }
        train::BspTrainer* trainer = nullptr;
        std::vector<IterationRecord> rows;
        std::vector<EventRecord> events;
    } out;
    train::BspTrainer trainer(config("bsp", 15), std::unique_ptr<balance::BatchSizeManager>(), out);
    out.trainer = &trainer;
    EXPECT_EQ(trainer.sync_model(), "bsp");
    trainer.run();
    std::set<std::int64_t> dropped;
    for (const auto& row : out.rows)
        if (row.decision == "dropped") {
            EXPECT_EQ(row.worker, 3) << "the slowest worker is the one cut off";
            dropped.insert(row.iteration);
        }
    EXPECT_EQ(dropped, (std::set<std::int64_t> { 5, 6, 7, 8, 9 }));
    std::vector<std::string> changes;
    for (const auto& e : out.events)
        if (e.kind == "sync-model-change") {
            changes.push_back(std::to_string(e.iteration) + ": " + e.message);
            EXPECT_EQ(e.actor, "op");
        }
    EXPECT_EQ(changes, (std::vector<std::string> { "5: bsp -> backup(k=1)", "10: backup(k=1) -> bsp" }));
    EXPECT_EQ(trainer.sync_model(), "bsp");
}

TEST(BspTrainer, ASyncModelItCannotSwitchToIsRefusedWithACode)
{
    Collector out;
    train::BspTrainer trainer(config("bsp", 2), std::unique_ptr<balance::BatchSizeManager>(), out);
    const auto refused = [&](sync::SyncSpec spec) -> std::string {
        try {
            trainer.set_sync_model(spec);
        } catch (const RefusedRequest& e) {
            return e.code();
        }
        return "accepted";
    };
    for (const char* asynchronous : { "asp", "ssp", "elastic-bsp" }) {
        sync::SyncSpec spec;
        spec.type = asynchronous;
        EXPECT_EQ(refused(spec), "sync-model-not-switchable") << asynchronous;
    }
    sync::SyncSpec all_backups;
    all_backups.type = "backup";
    all_backups.backups = 4; // the job has 4 workers: someone must close the barrier
    EXPECT_EQ(refused(all_backups), "illegal-value");
    trainer.run();
    for (const auto& e : out.events)
        EXPECT_NE(e.kind, "sync-model-change");
}

TEST(BspTrainer, ABandwidthChangeTakesEffectAtItsIteration)
{
    auto c = config("bsp", 6);
    c.comm_model_mb = 10;
    c.workers[1].network.changes.push_back({ 3, 2.5 });
    Collector out;
    train::BspTrainer trainer(std::move(c), std::unique_ptr<balance::BatchSizeManager>(), out);
    trainer.run();
    for (const auto& row : out.rows)
        if (row.worker == 1) {
            EXPECT_NEAR(row.comm_s, 2 * (0.0005 + 80e6 / (row.iteration < 3 ? 10e9 : 2.5e9)), 1e-9);
        }
}

TEST(BspTrainer, OperatorOverridesShowInTheFollowingIterationsAndAsEvents)
{
    auto c = config("bsp", 6);
    Collector out;
    balance::PolicySpec spec;
    spec.type = "lbbsp-cpu";
    spec.predictor.type = "ema";
    auto manager = balance::make_manager(spec, 4, 32);
    manager->pin(0, 20, "op");
    manager->exclude(3, std::nullopt, "op");
    train::BspTrainer trainer(std::move(c), std::move(manager), out);
    trainer.run();
    for (const auto& row : out.rows) {
        EXPECT_NE(row.worker, 3);
        if (row.worker == 0) {
            EXPECT_EQ(row.batch_size, 20);
            EXPECT_EQ(row.decision, "pinned");
        }
    }
    int overrides = 0;
    for (const auto& e : out.events)
        if ((e.kind == "pin" || e.kind == "exclude") && e.actor == "op")
            ++overrides;
    EXPECT_EQ(overrides, 2);
}

TEST(BspTrainer, LbBspBalancesAStaticHeterogeneousClusterWithinFivePercentOfIdeal)
{
    auto c = config("bsp", 120);
    balance::PolicySpec spec;
    spec.type = "lbbsp-cpu";
    spec.predictor.type = "ema";
    Collector out;
    train::BspTrainer trainer(std::move(c), balance::make_manager(spec, 4, 32), out);
    trainer.run();
    // Ideal: X / sum(v) plus the communication every worker pays.
    const double comm = out.rows.front().comm_s;
    const double ideal = 32.0 / 800.0 + comm;
    std::map<std::int64_t, double> barrier;
    for (const auto& row : out.rows)
        barrier[row.iteration] = std::max(barrier[row.iteration], row.end_s + row.wait_s - row.start_s);
    double mean = 0;
    int counted = 0;
    for (const auto& [k, t] : barrier)
        if (k >= 20) {
            mean += t;
            ++counted;
        }
    mean /= counted;
    EXPECT_LT(mean / ideal, 1.05) << "mean " << mean << " ideal " << ideal;
}
