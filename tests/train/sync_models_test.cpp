#include "balance/policy_registry.h"
#include "common/error.h"
#include "data/synthetic.h"
#include "model/model_factory.h"
#include "train/async_trainer.h"
#include "train/bsp_trainer.h"
#include "train/federated_trainer.h"

#include <algorithm>
#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <set>
#include <thread>

using namespace fulcrum;

namespace {

struct Collector final : train::TrainingObserver {
    void on_iteration(std::span<const IterationRecord> r) override { rows.insert(rows.end(), r.begin(), r.end()); }
    void on_evaluation(const EvaluationRecord& e) override { evaluations.push_back(e); }
    void on_event(const JobEvent& e) override { events.push_back(record(e)); }
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
    c.sync.type = *sync::parse_sync_type(sync);
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
    const auto finished
        = std::find_if(out.events.begin(), out.events.end(), [](const auto& e) { return e.kind == "job-finished"; });
    ASSERT_NE(finished, out.events.end());
    EXPECT_NE(finished->message.find("supersteps"), std::string::npos);
}

TEST(AsyncTrainer, RefusesSynchronousModelsAndElasticJobs)
{
    Collector out;
    EXPECT_THROW(train::AsyncTrainer(config("bsp", 10), out), std::invalid_argument);
    auto c = config("asp", 10);
    c.elastic.partition_data = true;
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
                spec.type = sync::SyncType::Backup;
                spec.backups = 1;
                trainer->control().set_sync_model(spec, EventActor::person("operator", "op"));
            } else if (r.front().iteration == 9) {
                trainer->control().set_sync_model(spec, EventActor::person("operator", "op")); // bsp
            }
        }
        void on_evaluation(const EvaluationRecord&) override { }
        void on_event(const JobEvent& e) override { events.push_back(record(e)); }
        train::BspTrainer* trainer = nullptr;
        std::vector<IterationRecord> rows;
        std::vector<EventRecord> events;
    } out;
    train::BspTrainer trainer(config("bsp", 15), std::unique_ptr<balance::BatchSizeManager>(), out);
    out.trainer = &trainer;
    EXPECT_EQ(trainer.control().sync_model(), "bsp");
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
            EXPECT_EQ(e.actor, "operator:op");
        }
    EXPECT_EQ(changes, (std::vector<std::string> { "5: bsp -> backup(k=1)", "10: backup(k=1) -> bsp" }));
    EXPECT_EQ(trainer.control().sync_model(), "bsp");
}

TEST(BspTrainer, ASyncModelItCannotSwitchToIsRefusedWithACode)
{
    // LB-BSP balances at barriers: a free-running model has none.
    Collector out;
    balance::PolicySpec lbbsp;
    lbbsp.type = "lbbsp-cpu";
    lbbsp.predictor.type = "ema";
    train::BspTrainer trainer(config("bsp", 2), balance::make_manager(lbbsp, 4, 32), out);
    const auto refused = [&](sync::SyncSpec spec) -> std::string {
        try {
            trainer.control().set_sync_model(spec, EventActor::person("operator", "test"));
        } catch (const RefusedRequest& e) {
            return e.code();
        }
        return "accepted";
    };
    for (const char* asynchronous : { "asp", "ssp", "elastic-bsp" }) {
        sync::SyncSpec spec;
        spec.type = *sync::parse_sync_type(asynchronous);
        EXPECT_EQ(refused(spec), "policy-not-applicable") << asynchronous;
    }
    sync::SyncSpec all_backups;
    all_backups.type = sync::SyncType::Backup;
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
    manager->pin(0, 20, EventActor::person("operator", "op"));
    manager->exclude(3, std::nullopt, EventActor::person("operator", "op"));
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
        if ((e.kind == "pin" || e.kind == "exclude") && e.actor == "operator:op")
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

namespace {

// Runs an asynchronous job and lets `act` steer it through its control mailbox after every
// row (each row is one worker's iteration), as an operator would from another thread.
struct Steered final : train::TrainingObserver {
    void on_iteration(std::span<const IterationRecord> r) override
    {
        rows.insert(rows.end(), r.begin(), r.end());
        if (act)
            act(*control, rows.size());
    }
    void on_evaluation(const EvaluationRecord&) override { }
    void on_event(const JobEvent& e) override { events.push_back(record(e)); }

    std::optional<EventRecord> event(const std::string& kind) const
    {
        for (const auto& e : events)
            if (e.kind == kind)
                return e;
        return std::nullopt;
    }

    train::JobControl* control = nullptr;
    std::function<void(train::JobControl&, std::size_t)> act;
    std::vector<IterationRecord> rows;
    std::vector<EventRecord> events;
};

train::TrainingResult run_steered(train::AsyncTrainer& trainer, Steered& out)
{
    out.control = &trainer.control();
    return trainer.run();
}

} // namespace

TEST(AsyncTrainer, AnAspJobTakesPinsAndExclusionsForItsWorkersNextBatches)
{
    Steered out;
    out.act = [](train::JobControl& control, std::size_t rows) {
        if (rows == 40) {
            control.pin(0, 20, EventActor::person("operator", "test"));
            control.exclude(3, std::nullopt, EventActor::person("operator", "test"));
        }
    };
    train::AsyncTrainer trainer(config("asp", 400), out);
    const train::TrainingResult r = run_steered(trainer, out);
    EXPECT_EQ(r.updates, 400);
    const auto pin = out.event("pin");
    const auto exclude = out.event("exclude");
    ASSERT_TRUE(pin && exclude);
    EXPECT_EQ(pin->actor, "operator:test");
    EXPECT_EQ(exclude->worker, 3);
    int after = 0;
    for (const auto& row : out.rows) {
        if (row.start_s < pin->time_s) {
            EXPECT_EQ(row.batch_size, 8) << "a uniform split of 32 before the operator's changes";
            continue;
        }
        ++after;
        EXPECT_NE(row.worker, 3) << "an excluded worker starts no more batches";
        if (row.worker == 0) {
            EXPECT_EQ(row.batch_size, 20);
            EXPECT_EQ(row.decision, "asp/pinned");
        } else {
            EXPECT_EQ(row.batch_size, 6) << "the other two share what the pin leaves";
        }
    }
    EXPECT_GT(after, 300);
    EXPECT_EQ(trainer.control().worker(0).pinned, 20);
    EXPECT_TRUE(trainer.control().worker(3).excluded);
}

TEST(AsyncTrainer, AnExcludedSspWorkerNoLongerHoldsTheOthersBackAndRejoinsThePack)
{
    Steered out;
    out.act = [](train::JobControl& control, std::size_t rows) {
        if (rows == 20)
            control.exclude(3, std::nullopt, EventActor::person("operator", "test"));
        if (rows == 220)
            control.include(3, EventActor::person("operator", "test"));
    };
    auto c = config("ssp", 400);
    c.sync.staleness = 1;
    train::AsyncTrainer trainer(std::move(c), out);
    run_steered(trainer, out);
    const auto excluded = out.event("exclude");
    const auto included = out.event("include");
    ASSERT_TRUE(excluded && included);
    std::int64_t last_before = -1, first_after = -1, fastest_while_out = 0;
    for (const auto& row : out.rows) {
        if (row.worker == 3 && row.start_s <= excluded->time_s)
            last_before = row.iteration;
        if (row.worker == 3 && row.start_s > included->time_s && first_after < 0)
            first_after = row.iteration;
        if (row.worker == 0 && row.start_s > excluded->time_s && row.start_s < included->time_s)
            fastest_while_out = std::max(fastest_while_out, row.iteration);
        if (row.worker == 3 && row.start_s > excluded->time_s && row.start_s < included->time_s)
            ADD_FAILURE() << "worker 3 ran iteration " << row.iteration << " while excluded";
    }
    ASSERT_GE(last_before, 0);
    EXPECT_GT(fastest_while_out, last_before + 10) << "with worker 3 out, s=1 no longer binds worker 0 to it";
    EXPECT_GT(first_after, last_before + 10) << "let back in, worker 3 starts at the pack's clock, not its own";
}

TEST(AsyncTrainer, AnElasticBspJobGoesOnWithoutAnExcludedWorkerAndTakesPins)
{
    Steered out;
    out.act = [](train::JobControl& control, std::size_t rows) {
        if (rows == 30) {
            control.exclude(3, std::nullopt, EventActor::person("operator", "test"));
            control.pin(1, 4, EventActor::person("operator", "test"));
        }
    };
    train::AsyncTrainer trainer(config("elastic-bsp", 400), out);
    const train::TrainingResult r = run_steered(trainer, out);
    EXPECT_EQ(r.updates, 400) << "no superstep waits for the excluded worker";
    const auto exclude = out.event("exclude");
    ASSERT_TRUE(exclude);
    int pinned_rows = 0;
    for (const auto& row : out.rows) {
        if (row.start_s <= exclude->time_s)
            continue;
        EXPECT_NE(row.worker, 3);
        EXPECT_EQ(row.decision.rfind("elastic-bsp r=", 0), 0u) << row.decision;
        if (row.worker == 1) {
            EXPECT_EQ(row.batch_size, 4);
            ++pinned_rows;
        }
    }
    EXPECT_GT(pinned_rows, 10);
}

TEST(AsyncTrainer, SwitchesAmongAspSspAndElasticBspAndRefusesAPolicyItCannotBalanceWith)
{
    Steered out;
    std::vector<std::string> refusals;
    out.act = [&refusals](train::JobControl& control, std::size_t rows) {
        sync::SyncSpec spec;
        if (rows == 50) {
            spec.type = sync::SyncType::Ssp;
            spec.staleness = 1;
            control.set_sync_model(spec, EventActor::person("operator", "test"));
        } else if (rows == 150) {
            spec.type = sync::SyncType::ElasticBsp;
            control.set_sync_model(spec, EventActor::person("operator", "test"));
        } else if (rows == 250) {
            spec.type = sync::SyncType::Asp;
            control.set_sync_model(spec, EventActor::person("operator", "test"));
            try {
                balance::PolicySpec lbbsp;
                lbbsp.type = "lbbsp-cpu";
                control.set_policy(balance::make_policy(lbbsp), {}, EventActor::person("operator", "test"));
            } catch (const RefusedRequest& e) {
                refusals.push_back(e.code());
            }
        }
    };
    train::AsyncTrainer trainer(config("asp", 500), out);
    const train::TrainingResult r = run_steered(trainer, out);
    EXPECT_EQ(r.updates, 500);
    std::vector<std::string> changes;
    for (const auto& e : out.events)
        if (e.kind == "sync-model-change")
            changes.push_back(e.message);
    EXPECT_EQ(changes,
        (std::vector<std::string> {
            "asp -> ssp(s=1)", "ssp(s=1) -> elastic-bsp(R=15, exact)", "elastic-bsp(R=15, exact) -> asp" }));
    EXPECT_EQ(refusals, (std::vector<std::string> { "policy-not-applicable" }));
    std::set<std::string> tags;
    for (const auto& row : out.rows)
        tags.insert(row.decision.substr(0, row.decision.find(' ')));
    EXPECT_EQ(tags, (std::set<std::string> { "asp", "ssp(s=1)", "elastic-bsp" }));
    EXPECT_EQ(trainer.control().sync_model(), "asp");
}

TEST(JobTrainer, ARunningJobSwitchesFromBspToSspAndBackAndCarriesItsModelOver)
{
    // bsp for 20 barriers, ssp(s=2) from there for about 200 updates, bsp again to the end;
    // then LB-BSP, which balances only with barriers.
    Steered out;
    std::vector<std::string> refusals;
    out.act = [&refusals](train::JobControl& control, std::size_t rows) {
        sync::SyncSpec spec;
        if (rows == 80) { // 20 barriers of 4 workers
            spec.type = sync::SyncType::Ssp;
            spec.staleness = 2;
            control.set_sync_model(spec, EventActor::person("operator", "test"));
        } else if (rows == 300) {
            control.set_sync_model(spec, EventActor::person("operator", "test")); // bsp
            balance::PolicySpec lbbsp;
            lbbsp.type = "lbbsp-cpu";
            lbbsp.predictor.type = "ema";
            control.set_policy(balance::make_policy(lbbsp), {}, EventActor::person("operator", "test"));
            spec.type = sync::SyncType::Asp;
            try { // asked after the policy: it cannot balance without barriers
                control.set_sync_model(spec, EventActor::person("operator", "test"));
            } catch (const RefusedRequest& e) {
                refusals.push_back(e.code());
            }
        }
    };
    auto c = config("bsp", 400);
    c.eval_interval = 50;
    std::unique_ptr<train::Trainer> trainer = train::make_trainer(std::move(c), nullptr, out);
    out.control = &trainer->control();
    const train::TrainingResult r = trainer->run();
    EXPECT_EQ(r.updates, 400) << "barriers and pushes count against one budget of updates";
    EXPECT_EQ(refusals, (std::vector<std::string> { "policy-not-applicable" }));
    std::vector<std::string> changes;
    for (const auto& e : out.events)
        if (e.kind == "sync-model-change" || e.kind == "policy-change")
            changes.push_back(e.message);
    EXPECT_EQ(changes, (std::vector<std::string> { "bsp -> ssp(s=2)", "ssp(s=2) -> bsp", "uniform -> lbbsp-cpu" }));
    // Every (iteration, worker) row is written once, and each worker's iterations go forward.
    std::set<std::pair<std::int64_t, WorkerId>> keys;
    std::map<WorkerId, std::int64_t> last;
    std::set<std::string> tags;
    for (const auto& row : out.rows) {
        EXPECT_TRUE(keys.insert({ row.iteration, row.worker }).second)
            << "iteration " << row.iteration << " worker " << row.worker;
        if (last.count(row.worker)) {
            EXPECT_GT(row.iteration, last[row.worker]);
        }
        last[row.worker] = row.iteration;
        tags.insert(row.decision.substr(0, row.decision.find('/')));
    }
    EXPECT_TRUE(tags.count("uniform") && tags.count("ssp(s=2)") && tags.count("lbbsp-cpu"))
        << "bsp, then ssp, then LB-BSP";
    // Time runs on: the first barrier after ssp opens no earlier than the last push.
    double last_push = 0, first_barrier_after = 0;
    for (const auto& row : out.rows) {
        if (row.decision == "ssp(s=2)")
            last_push = std::max(last_push, row.end_s);
        else if (last_push > 0 && first_barrier_after == 0)
            first_barrier_after = row.start_s;
    }
    EXPECT_GE(first_barrier_after, last_push);
    EXPECT_GT(r.final_evaluation.test_accuracy, 0.5) << "the model trained on across the switches";
}

TEST(JobTrainer, ASwitchThatCannotCarryOverIsRefusedWithItsReason)
{
    Collector out;
    auto elastic = config("bsp", 10);
    elastic.elastic.partition_data = true;
    train::BspTrainer trainer(std::move(elastic), std::unique_ptr<balance::BatchSizeManager>(), out);
    sync::SyncSpec asp;
    asp.type = sync::SyncType::Asp;
    try {
        trainer.control().set_sync_model(asp, EventActor::person("operator", "test"));
        ADD_FAILURE() << "an elastic job switched to asp";
    } catch (const RefusedRequest& e) {
        EXPECT_EQ(e.code(), "sync-model-not-switchable");
        EXPECT_NE(std::string(e.what()).find("elastic"), std::string::npos) << e.what();
    }
}

TEST(AsyncTrainer, AnInjectedStragglerComputesSlowerAndAPauseHoldsTheClock)
{
    Steered out;
    std::thread resumer;
    out.act = [&resumer](train::JobControl& control, std::size_t rows) {
        if (rows == 40)
            control.inject_straggler(0, 4.0, EventActor::person("operator", "test"));
        if (rows == 80) {
            control.pause(EventActor::person("operator", "test"));
            resumer = std::thread([&control] {
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
                control.resume(EventActor::person("operator", "other"));
            });
        }
    };
    train::AsyncTrainer trainer(config("asp", 300), out);
    const train::TrainingResult r = run_steered(trainer, out);
    resumer.join();
    EXPECT_EQ(r.updates, 300);
    const auto injected = out.event("straggler-injected");
    ASSERT_TRUE(injected);
    EXPECT_EQ(injected->worker, 0);
    double before = 0, after = 0;
    int n_before = 0, n_after = 0;
    for (const auto& row : out.rows)
        if (row.worker == 0 && row.start_s < injected->time_s) {
            before += row.compute_s;
            ++n_before;
        } else if (row.worker == 0) {
            after += row.compute_s;
            ++n_after;
        }
    ASSERT_GT(n_before, 0);
    ASSERT_GT(n_after, 0);
    EXPECT_NEAR((after / n_after) / (before / n_before), 4.0, 0.2);
    const auto paused = out.event("job-paused");
    const auto resumed = out.event("job-resumed");
    ASSERT_TRUE(paused && resumed);
    EXPECT_EQ(paused->actor, "operator:test");
    EXPECT_EQ(resumed->actor, "operator:other");
    EXPECT_EQ(paused->time_s, resumed->time_s) << "the virtual clock stands still while paused";
    EXPECT_FALSE(trainer.control().paused());
}

TEST(AsyncTrainer, AspSspAndElasticBspRunInRealModeOnTheWorkersOwnThreads)
{
    for (const char* sync : { "asp", "ssp", "elastic-bsp" }) {
        SCOPED_TRACE(sync);
        Steered out;
        out.act = [](train::JobControl& control, std::size_t rows) {
            if (rows == 20)
                control.pin(0, 20, EventActor::person("operator", "test"));
        };
        auto c = config(sync, 300);
        c.mode = train::ClockMode::Real;
        c.sync.staleness = 2;
        train::AsyncTrainer trainer(std::move(c), out);
        const train::TrainingResult r = run_steered(trainer, out);
        EXPECT_EQ(r.updates, 300);
        ASSERT_GE(out.rows.size(), 290u);
        std::set<WorkerId> workers;
        std::set<std::pair<std::int64_t, WorkerId>> keys;
        const auto pin = out.event("pin");
        ASSERT_TRUE(pin);
        for (const auto& row : out.rows) {
            workers.insert(row.worker);
            EXPECT_TRUE(keys.insert({ row.iteration, row.worker }).second);
            EXPECT_GT(row.compute_s, 0) << "measured on the worker's thread";
            EXPECT_GE(row.end_s, row.start_s);
            EXPECT_GT(row.cpu_share, 0);
            if (row.worker == 0 && row.start_s > pin->time_s) {
                EXPECT_EQ(row.batch_size, 20);
            }
        }
        // SSP's bound and ElasticBSP's supersteps hold the fast workers for the slow, so every
        // worker's thread computes; under ASP a thread the OS starves of CPU (a loaded CI
        // machine) may finish no batch before the budget is spent, and nothing waits for it.
        if (std::string(sync) != "asp") {
            EXPECT_EQ(workers.size(), 4u) << "every worker's thread computed";
        }
        EXPECT_GT(r.final_evaluation.test_accuracy, 0.4);
    }
}

// The federated trainer is a Trainer like the others: the mailbox is applied at each
// round's start, and what rounds cannot take is refused when asked.
TEST(FederatedTrainer, TakesPinsExclusionsAndStragglersAtTheNextRoundAndRefusesWhatRoundsCannotTake)
{
    auto c = config("bsp", 1);
    data::SyntheticSpec shard;
    shard.train_size = 200;
    shard.test_size = 50;
    shard.dim = 16;
    shard.classes = 4;
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
        shard.seed = seed;
        c.worker_data.push_back(data::make_synthetic(shard).train);
    }
    train::FederatedConfig f;
    f.variant = balance::FederatedVariant::FedAvg;
    f.batch_size = 8;
    f.local_steps = 2;
    f.rounds = 10;
    Steered out;
    out.act = [](train::JobControl& control, std::size_t rows) {
        if (rows == 8) { // after round 1: four clients a round
            control.pin(0, 4, EventActor::person("operator", "test"));
            control.exclude(3, std::nullopt, EventActor::person("operator", "test"));
            control.inject_straggler(1, 3.0, EventActor::person("operator", "test"));
            // A note from outside the trainer goes through the federated trainer's own mailbox.
            control.record({ EventKind::ClusterPolicy, "the cluster's policies are now ...",
                EventActor::person("operator", "test"), std::nullopt });
        }
    };
    train::FederatedTrainer trainer(std::move(c), f, out);
    out.control = &trainer.control();
    const auto refusal = [](const std::function<void()>& ask) {
        try {
            ask();
        } catch (const RefusedRequest& e) {
            return e.code();
        }
        return std::string("accepted");
    };
    sync::SyncSpec asp;
    asp.type = sync::SyncType::Asp;
    EXPECT_EQ(refusal([&] { trainer.control().set_sync_model(asp, EventActor::person("operator", "test")); }),
        "sync-model-not-switchable");
    EXPECT_EQ(refusal([&] {
        trainer.control().set_policy(balance::make_policy({}), {}, EventActor::person("operator", "test"));
    }),
        "policy-not-applicable");
    EXPECT_THROW(trainer.resume_from_checkpoint("anything"), InputError);

    const train::TrainingResult r = trainer.run();
    EXPECT_FALSE(r.stopped);
    std::map<std::int64_t, std::map<WorkerId, IterationRecord>> rounds;
    for (const auto& row : out.rows)
        rounds[row.iteration][row.worker] = row;
    ASSERT_EQ(rounds.size(), 10u);
    EXPECT_EQ(rounds[1].size(), 4u);
    EXPECT_EQ(rounds[1][0].batch_size, 8);
    for (std::int64_t k = 2; k < 10; ++k) {
        SCOPED_TRACE(k);
        EXPECT_EQ(rounds[k].size(), 3u) << "the excluded client sits the rounds out";
        EXPECT_FALSE(rounds[k].contains(3));
        EXPECT_EQ(rounds[k][0].batch_size, 4) << "the pinned client trains with the pinned batch size";
        EXPECT_NEAR(rounds[k][1].compute_s, 3.0 * rounds[1][1].compute_s, 0.3 * rounds[1][1].compute_s)
            << "the injected straggler's local steps take three times longer";
    }
    for (const char* kind : { "pin", "exclude", "straggler-injected", "cluster-policy" })
        EXPECT_TRUE(out.event(kind)) << kind;
    EXPECT_GT(r.final_evaluation.test_accuracy, 0.4);
}

namespace {

std::vector<EventRecord> events_of_kind(const Collector& c, const std::string& kind)
{
    std::vector<EventRecord> out;
    std::copy_if(c.events.begin(), c.events.end(), std::back_inserter(out),
        [&](const EventRecord& e) { return e.kind == kind; });
    return out;
}

const IterationRecord* row_of(const Collector& c, std::int64_t iteration, WorkerId worker)
{
    const auto it = std::find_if(c.rows.begin(), c.rows.end(),
        [&](const IterationRecord& r) { return r.iteration == iteration && r.worker == worker; });
    return it == c.rows.end() ? nullptr : &*it;
}

} // namespace

// Issue 42 item 3 for the free-running models on the virtual clock: each worker's batches are
// watched on their own. Worker 3 crawls (20 times slower) from update 100: its first crawling
// batch is stalled at max(5 x its prediction, 0.5 s) after its start, and recovered at its end.
TEST(AsyncTrainer, AFreeRunningWorkersCrawlingBatchIsReportedStalledAndRecovered)
{
    for (const std::string sync : { "asp", "ssp", "elastic-bsp" }) {
        SCOPED_TRACE(sync);
        auto c = config(sync, 300);
        c.stall.min_s = 0.5;
        c.scheduled.push_back({ 100, "crawl",
            [](train::JobControl& control) { control.inject_straggler(3, 20, EventActor::scenario()); } });
        Collector out;
        train::AsyncTrainer trainer(std::move(c), out);
        trainer.run();
        const auto stalled = events_of_kind(out, "worker-stalled");
        const auto recovered = events_of_kind(out, "worker-recovered");
        ASSERT_EQ(stalled.size(), 1u);
        ASSERT_EQ(recovered.size(), 1u);
        EXPECT_EQ(stalled[0].worker, 3);
        EXPECT_EQ(recovered[0].worker, 3);
        const IterationRecord* before = row_of(out, stalled[0].iteration - 1, 3);
        const IterationRecord* slow = row_of(out, stalled[0].iteration, 3);
        ASSERT_TRUE(before && slow);
        const double predicted = slow->batch_size / before->speed + before->comm_s;
        EXPECT_NEAR(stalled[0].time_s, slow->start_s + std::max(5 * predicted, 0.5), 1e-9);
        EXPECT_NEAR(recovered[0].time_s, slow->end_s, 1e-9);
        EXPECT_NEAR(slow->compute_s, 20 * before->compute_s, 1e-9) << "the crawling batch";
    }
}

// ... and in the real mode, with the exclude action: a local worker's crawling batch is given
// up while it idles (issue 42 item 2), so the others go on without waiting for it.
TEST(AsyncTrainer, AFreeRunningLocalWorkersStallIsExcludedAndItsBatchGivenUpInTheRealMode)
{
    auto c = config("asp", 3000);
    c.mode = train::ClockMode::Real;
    c.total_batch = 256; // 64 a worker
    c.prototype = model::make_mlp(16, { 512 }, 4); // about 0.2 ms a batch: the crawl idles 1000 times that
    c.stall.min_s = 0.1; // half the crawl, and well above the others' batches
    c.stall.action = StallAction::Exclude;
    c.stall.for_s = 1000;
    c.scheduled.push_back(
        // Late enough that worker 3 has measured batches: a first batch has no prediction to stall against.
        { 200, "crawl",
            [](train::JobControl& control) { control.inject_straggler(3, 1000, EventActor::scenario()); } });
    Collector out;
    train::AsyncTrainer trainer(std::move(c), out);
    const train::TrainingResult r = trainer.run();
    EXPECT_EQ(r.updates, 3000);
    // Another worker's batch may pass 0.2 s on a loaded machine, and be excluded too: this
    // test follows worker 3.
    const auto of_worker_3 = [](std::vector<EventRecord> events) {
        std::erase_if(events, [](const EventRecord& e) { return e.worker != 3; });
        return events;
    };
    const auto stalled = of_worker_3(events_of_kind(out, "worker-stalled"));
    ASSERT_EQ(stalled.size(), 1u);
    const auto excluded = of_worker_3(events_of_kind(out, "exclude"));
    ASSERT_EQ(excluded.size(), 1u);
    EXPECT_EQ(excluded[0].actor, "policy: on_stall");
    const IterationRecord* held = row_of(out, stalled[0].iteration, 3);
    ASSERT_TRUE(held);
    EXPECT_EQ(held->decision, "dropped: excluded");
    EXPECT_TRUE(of_worker_3(events_of_kind(out, "worker-recovered")).empty()) << "a given-up batch brings nothing back";
    EXPECT_EQ(std::count_if(out.rows.begin(), out.rows.end(),
                  [&](const IterationRecord& row) { return row.worker == 3 && row.iteration > held->iteration; }),
        0)
        << "excluded for the rest of the run";
}

// Issue 42 item 2 on the paced clock: the engine waits for the wall clock to reach each
// arrival before taking it, and an exclusion meanwhile gives up the crawling worker's batch
// at that instant. Worker 3 crawls from update 20 (1000 times its compute: 80 s at pace 1);
// under ssp the others soon wait on it, under elastic-bsp the superstep does, and under asp
// they train on. The operator excludes it a second after the crawl is injected, which is
// inside that batch however loaded the machine.
TEST(AsyncTrainer, AnExclusionGivesUpAFreeRunningWorkersBatchOnThePacedClock)
{
    for (const std::string sync : { "ssp", "asp", "elastic-bsp" }) {
        SCOPED_TRACE(sync);
        struct Operator final : train::TrainingObserver {
            Collector seen;
            train::Trainer* trainer = nullptr;
            std::thread excluding;
            void on_iteration(std::span<const IterationRecord> r) override { seen.on_iteration(r); }
            void on_evaluation(const EvaluationRecord& e) override { seen.on_evaluation(e); }
            void on_event(const JobEvent& e) override
            {
                seen.on_event(e);
                if (e.kind == EventKind::StragglerInjected)
                    excluding = std::thread([this] {
                        std::this_thread::sleep_for(std::chrono::seconds(1));
                        trainer->control().exclude(3, std::nullopt, EventActor::person("operator", "test"));
                    });
            }
        } op;
        auto c = config(sync, 200);
        c.mode = train::ClockMode::Paced;
        c.pace = 1;
        c.scheduled.push_back({ 20, "crawl",
            [](train::JobControl& control) { control.inject_straggler(3, 1000, EventActor::scenario()); } });
        train::AsyncTrainer trainer(std::move(c), op);
        op.trainer = &trainer;
        const train::TrainingResult r = trainer.run();
        op.excluding.join();
        EXPECT_EQ(r.updates, 200);
        const auto injected = events_of_kind(op.seen, "straggler-injected");
        ASSERT_EQ(injected.size(), 1u);
        const IterationRecord* held = nullptr;
        for (const IterationRecord& row : op.seen.rows)
            if (row.worker == 3 && row.decision == "dropped: excluded")
                held = &row;
        ASSERT_TRUE(held) << "worker 3's crawling batch was given up";
        EXPECT_EQ(held->compute_s, 0.0);
        EXPECT_GE(held->end_s, injected[0].time_s + 1.0) << "given up when the exclusion came";
        EXPECT_LT(held->end_s, injected[0].time_s + 10.0) << "not at the crawl's modelled end";
        EXPECT_EQ(std::count_if(op.seen.rows.begin(), op.seen.rows.end(),
                      [&](const IterationRecord& row) { return row.worker == 3 && row.start_s > held->end_s; }),
            0)
            << "excluded for the rest of the run";
        EXPECT_TRUE(std::any_of(op.seen.rows.begin(), op.seen.rows.end(), [&](const IterationRecord& row) {
            return row.worker != 3 && row.start_s >= held->end_s;
        })) << "the others went on";
    }
}

// An exclusion gives up the batch under way and the one after it (one asked between a safe
// point and the batch's start); included again, the worker trains on. Under asp its next
// batch carries its own clock, which did not move while it sat out, so batches are counted
// by their starts: given up again, the worker would sit idle to the end (review of issue 42
// item 2). A loaded machine may starve its thread of all but a few batches.
TEST(AsyncTrainer, AWorkerExcludedAndIncludedAgainTrainsOnInTheRealMode)
{
    struct Operator final : train::TrainingObserver {
        Collector seen;
        train::Trainer* trainer = nullptr;
        int rows = 0;
        void on_iteration(std::span<const IterationRecord> r) override
        {
            seen.on_iteration(r);
            rows += static_cast<int>(r.size());
            if (rows == 40)
                trainer->control().exclude(0, std::nullopt, EventActor::person("operator", "test"));
            if (rows == 80)
                trainer->control().include(0, EventActor::person("operator", "test"));
        }
        void on_evaluation(const EvaluationRecord& e) override { seen.on_evaluation(e); }
        void on_event(const JobEvent& e) override { seen.on_event(e); }
    } op;
    auto c = config("asp", 4000); // long enough that a thread the machine starved for a while catches up
    c.mode = train::ClockMode::Real;
    train::AsyncTrainer trainer(std::move(c), op);
    op.trainer = &trainer;
    EXPECT_EQ(trainer.run().updates, 4000);
    const auto included = events_of_kind(op.seen, "include");
    ASSERT_EQ(included.size(), 1u);
    const auto trained_after = std::count_if(op.seen.rows.begin(), op.seen.rows.end(), [&](const IterationRecord& r) {
        return r.worker == 0 && r.batch_size > 0 && r.decision.find("dropped") == std::string::npos
            && r.start_s > included[0].time_s;
    });
    std::string rows_of_0; // what worker 0 did, should the test fail
    for (const IterationRecord& r : op.seen.rows)
        if (r.worker == 0)
            rows_of_0 += std::to_string(r.iteration) + "@" + std::to_string(r.start_s) + " " + r.decision + "; ";
    EXPECT_GE(trained_after, 3) << "worker 0 trains again once included at " << included[0].time_s << ": " << rows_of_0;
}
