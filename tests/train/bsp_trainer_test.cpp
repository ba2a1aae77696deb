#include "balance/policy_registry.h"
#include "data/synthetic.h"
#include "model/model_factory.h"
#include "train/bsp_trainer.h"

#include <atomic>
#include <gtest/gtest.h>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>

using namespace fulcrum;

namespace {

struct Collector final : train::TrainingObserver {
    std::vector<IterationRecord> rows;
    std::vector<EvaluationRecord> evaluations;
    std::vector<EventRecord> events;
    void on_iteration(std::span<const IterationRecord> r) override { rows.insert(rows.end(), r.begin(), r.end()); }
    void on_evaluation(const EvaluationRecord& e) override { evaluations.push_back(e); }
    void on_event(const JobEvent& e) override { events.push_back(record(e)); }
};

train::TrainerConfig config(train::ClockMode mode = train::ClockMode::Virtual, int threads = 2)
{
    static const auto data = data::make_synthetic(
        { .train_size = 3000, .test_size = 600, .dim = 20, .classes = 5, .separation = 3, .seed = 3 });
    train::TrainerConfig c;
    c.train = data.train;
    c.test = data.test;
    c.prototype = model::make_mlp(20, { 16 }, 5);
    for (double speed : { 4000.0, 2000.0, 1000.0, 500.0 }) {
        train::WorkerSetup w;
        w.name = "w" + std::to_string(c.workers.size());
        w.cpu.speed = speed;
        w.cpu.noise = { .sigma = 0.1, .spike_probability = 0.05, .spike_factor = 3 };
        w.colocated = perf::ColocatedLoad { .arrivals_per_hour = 600, .mean_duration_s = 2 };
        c.workers.push_back(w);
    }
    c.total_batch = 64;
    c.optimizer = { .learning_rate = 0.1f, .momentum = 0.9f, .weight_decay = 0 };
    c.iterations = 120;
    c.eval_interval = 40;
    c.mode = mode;
    c.seed = 17;
    c.threads = threads;
    return c;
}

Collector run(train::TrainerConfig c, const balance::PolicySpec& policy = {}, train::TrainingResult* result = nullptr)
{
    Collector collector;
    train::BspTrainer trainer(std::move(c), balance::make_policy(policy), collector);
    const auto r = trainer.run();
    if (result)
        *result = r;
    return collector;
}

} // namespace

TEST(BspTrainer, SameScenarioAndSeedGiveIdenticalRows)
{
    const auto a = run(config());
    const auto b = run(config());
    ASSERT_EQ(a.rows.size(), 120u * 4);
    EXPECT_EQ(a.rows, b.rows);
    EXPECT_EQ(a.evaluations.back().test_accuracy, b.evaluations.back().test_accuracy);
}

TEST(BspTrainer, ThreadCountDoesNotChangeTheResult)
{
    EXPECT_EQ(run(config(train::ClockMode::Virtual, 1)).rows, run(config(train::ClockMode::Virtual, 3)).rows);
}

TEST(BspTrainer, DifferentSeedsDiffer)
{
    auto c = config();
    c.seed = 18;
    EXPECT_NE(run(config()).rows, run(std::move(c)).rows);
}

TEST(BspTrainer, EveryIterationIsABarrierTheSlowestWorkerCloses)
{
    const auto collector = run(config());
    std::map<std::int64_t, std::vector<IterationRecord>> by_iteration;
    for (const auto& row : collector.rows)
        by_iteration[row.iteration].push_back(row);
    double previous_end = 0;
    for (const auto& [k, rows] : by_iteration) {
        ASSERT_EQ(rows.size(), 4u);
        double min_wait = 1e9, barrier = 0;
        std::int32_t total = 0;
        for (const auto& row : rows) {
            EXPECT_EQ(row.start_s, previous_end) << "workers start when the previous barrier releases";
            EXPECT_GE(row.wait_s, 0.0);
            EXPECT_NEAR(row.end_s - row.start_s, row.compute_s + row.comm_s, 1e-9);
            EXPECT_NEAR(row.speed, row.batch_size / row.compute_s, 1e-6);
            min_wait = std::min(min_wait, row.wait_s);
            barrier = std::max(barrier, row.end_s + row.wait_s);
            total += row.batch_size;
        }
        EXPECT_EQ(min_wait, 0.0) << "the straggler never waits";
        EXPECT_EQ(total, 64) << "the total batch X is kept";
        previous_end = barrier;
    }
}

TEST(BspTrainer, UniformBatchesMakeTheSlowestWorkerTheStraggler)
{
    auto c = config();
    for (auto& w : c.workers) {
        w.cpu.noise = {};
        w.colocated.reset();
    }
    const auto collector = run(std::move(c));
    const auto& first = collector.rows; // iteration 0: 16 samples each
    EXPECT_NEAR(first[3].compute_s, 16.0 / 500.0, 1e-12);
    EXPECT_EQ(first[3].wait_s, 0.0);
    EXPECT_NEAR(first[0].wait_s, 16.0 / 500.0 - 16.0 / 4000.0, 1e-12);
}

TEST(BspTrainer, LearnsWithUnequalFixedBatchesAndWeightedAggregation)
{
    train::TrainingResult result;
    balance::PolicySpec fixed;
    fixed.type = "fixed";
    fixed.batch_sizes = { 40, 14, 7, 3 };
    run(config(), fixed, &result);
    EXPECT_GT(result.final_evaluation.test_accuracy, 0.85);
    EXPECT_EQ(result.iterations, 120);
    EXPECT_NEAR(result.epochs, 120.0 * 64 / 3000, 1e-9);
}

TEST(BspTrainer, RealModeMeasuresWorkerThreads)
{
    auto c = config(train::ClockMode::Real);
    c.iterations = 10;
    const auto collector = run(std::move(c));
    ASSERT_EQ(collector.rows.size(), 40u);
    for (const auto& row : collector.rows) {
        EXPECT_GT(row.compute_s, 0.0);
        EXPECT_GE(row.wait_s, 0.0);
        EXPECT_GT(row.cpu_share, 0.0);
        EXPECT_LE(row.cpu_share, 1.0);
        EXPECT_GT(row.memory_share, 0.0);
    }
}

TEST(BspTrainer, StopRequestEndsAtABarrierAndStillEvaluates)
{
    Collector collector;
    train::BspTrainer trainer(config(), balance::make_policy({}), collector);
    std::atomic<bool> stop { true };
    const auto result = trainer.run(&stop);
    EXPECT_TRUE(result.stopped);
    EXPECT_EQ(result.iterations, 0);
    EXPECT_EQ(collector.events.back().kind, "job-stopped");
}

TEST(BspTrainer, PacedModeFollowsWallTime)
{
    auto c = config(train::ClockMode::Paced);
    c.iterations = 5;
    c.pace = 1.0;
    train::TrainingResult result;
    run(std::move(c), {}, &result);
    EXPECT_GE(result.wall_s, result.time_s * 0.95);
}

TEST(BspTrainer, AnInjectedStragglerComputesSlowerFromTheNextIterationUntilCleared)
{
    const auto plain = run(config());
    Collector collector;
    train::BspTrainer trainer(config(), balance::make_policy({}), collector);
    trainer.control().inject_straggler(0, 4.0, EventActor::person("operator", "test"));
    EXPECT_EQ(trainer.control().straggler_slowdown(0), 4.0);
    EXPECT_THROW(trainer.control().inject_straggler(9, 2.0, EventActor::person("operator", "test")), RefusedRequest);
    EXPECT_THROW(trainer.control().inject_straggler(1, 0.5, EventActor::person("operator", "test")), RefusedRequest);
    trainer.run();
    ASSERT_EQ(collector.rows.size(), plain.rows.size());
    // Same seed, same noise: worker 0's compute time is four times the plain run's (up to
    // its shares changing at slightly different barrier times).
    double slowed = 0, own = 0;
    for (std::size_t r = 0; r < plain.rows.size(); ++r) {
        if (plain.rows[r].worker == 0) {
            slowed += collector.rows[r].compute_s;
            own += plain.rows[r].compute_s;
        }
    }
    EXPECT_NEAR(slowed / own, 4.0, 0.2);
    const auto injected = std::find_if(collector.events.begin(), collector.events.end(),
        [](const EventRecord& e) { return e.kind == "straggler-injected"; });
    ASSERT_NE(injected, collector.events.end());
    EXPECT_EQ(injected->worker, 0);
    EXPECT_EQ(injected->actor, "operator:test");
    EXPECT_EQ(injected->iteration, 0);
}

TEST(BspTrainer, APausedJobHoldsAtABarrierUntilResumed)
{
    struct Counting final : train::TrainingObserver {
        std::atomic<std::int64_t> iterations { 0 };
        std::mutex mutex;
        std::vector<std::string> kinds;
        void on_iteration(std::span<const IterationRecord>) override { ++iterations; }
        void on_evaluation(const EvaluationRecord&) override { }
        void on_event(const JobEvent& e) override
        {
            std::lock_guard lock(mutex);
            kinds.emplace_back(to_string(e.kind));
        }
    } observer;
    auto c = config(train::ClockMode::Paced);
    c.pace = 50; // fast enough for a test, slow enough to pause in the middle
    c.iterations = 400;
    train::BspTrainer trainer(std::move(c), balance::make_policy({}), observer);
    std::thread run([&] { trainer.run(); });
    while (observer.iterations < 5)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    trainer.control().pause(EventActor::person("operator", "test"));
    EXPECT_TRUE(trainer.control().paused());
    std::this_thread::sleep_for(std::chrono::milliseconds(100)); // let it reach the barrier
    const std::int64_t held = observer.iterations;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(observer.iterations, held);
    EXPECT_LT(held, 400);
    trainer.control().resume(EventActor::person("operator", "test"));
    run.join();
    EXPECT_EQ(observer.iterations, 400);
    std::lock_guard lock(observer.mutex);
    EXPECT_NE(std::find(observer.kinds.begin(), observer.kinds.end(), "job-paused"), observer.kinds.end());
    EXPECT_NE(std::find(observer.kinds.begin(), observer.kinds.end(), "job-resumed"), observer.kinds.end());
}
