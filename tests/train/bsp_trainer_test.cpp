#include "balance/policy_registry.h"
#include "common/job_fold.h"
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

namespace {

// The run with worker 3's batches taking 200 times longer from iteration 60 on (a machine
// that suddenly crawls), stalls judged after 0.5 s.
Collector run_with_a_crawling_worker(StallAction action)
{
    auto c = config();
    c.iterations = 90;
    c.stall.min_s = 0.5;
    c.stall.action = action;
    c.stall.for_s = 0.5;
    c.scheduled.push_back(
        { 60, "crawl", [](train::JobControl& control) { control.inject_straggler(3, 200, EventActor::scenario()); } });
    return run(std::move(c));
}

std::vector<EventRecord> of_kind(const Collector& c, const std::string& kind)
{
    std::vector<EventRecord> out;
    std::copy_if(c.events.begin(), c.events.end(), std::back_inserter(out),
        [&](const EventRecord& e) { return e.kind == kind; });
    return out;
}

const IterationRecord& row_of(const Collector& c, std::int64_t iteration, WorkerId worker)
{
    const auto it = std::find_if(c.rows.begin(), c.rows.end(),
        [&](const IterationRecord& r) { return r.iteration == iteration && r.worker == worker; });
    EXPECT_NE(it, c.rows.end()) << "no row of worker " << worker << " at iteration " << iteration;
    return *it;
}

} // namespace

// Issue 42's stall detection on the virtual clock: worker 3's first crawling batch runs past
// max(5 x its prediction, 0.5 s), so it is reported stalled at that modelled instant and
// recovered when the batch ends; uniform BSP predicts no speed, so the prediction is the
// worker's last measured speed (and its last pull and push), and once it has measured the
// crawl it is no longer a stall.
TEST(StallWatch, ABatchPastItsLimitIsReportedAtThatInstantAndRecoveredAtItsEnd)
{
    const Collector plain = run(config());
    EXPECT_TRUE(std::none_of(
        plain.events.begin(), plain.events.end(), [](const EventRecord& e) { return e.kind == "worker-stalled"; }));

    const Collector crawled = run_with_a_crawling_worker(StallAction::Report);
    const auto stalled = of_kind(crawled, "worker-stalled");
    const auto recovered = of_kind(crawled, "worker-recovered");
    ASSERT_EQ(stalled.size(), 1u);
    ASSERT_EQ(recovered.size(), 1u);
    EXPECT_EQ(stalled[0].worker, 3);
    EXPECT_EQ(stalled[0].iteration, 60);
    EXPECT_EQ(stalled[0].actor, "system");
    const IterationRecord& before = row_of(crawled, 59, 3);
    const IterationRecord& slow = row_of(crawled, 60, 3);
    const double predicted = slow.batch_size / before.speed + before.comm_s; // its compute, pull and push
    const double limit = std::max(5 * predicted, 0.5);
    EXPECT_NEAR(stalled[0].time_s, slow.start_s + limit, 1e-9);
    EXPECT_EQ(recovered[0].worker, 3);
    EXPECT_NEAR(recovered[0].time_s, slow.end_s, 1e-9);

    // The typed event carries what the console shows: the time so far and the prediction.
    const JobEvent typed_stall = typed(stalled[0]);
    const auto* stall = std::get_if<Stall>(&typed_stall.detail);
    ASSERT_NE(stall, nullptr);
    EXPECT_NEAR(stall->elapsed_s, limit, limit * 1e-2);
    EXPECT_NEAR(stall->predicted_s, predicted, predicted * 1e-2);
    JobFold fold(4, "uniform", "bsp");
    fold.apply(typed_stall);
    ASSERT_TRUE(fold.holds().at(3).stalled_since);
    EXPECT_NEAR(*fold.holds().at(3).stalled_since, slow.start_s, limit * 1e-2);
    fold.apply(typed(recovered[0]));
    EXPECT_FALSE(fold.holds().at(3).stalled_since);
}

// With "on_stall": {"action": "exclude", "for_s": 0.5} the job's policy excludes the stalled
// worker from the next barrier, and its time limit lets it back in to be measured again.
TEST(StallWatch, TheExcludeActionTakesTheWorkerOutUntilItsLimitEnds)
{
    const Collector crawled = run_with_a_crawling_worker(StallAction::Exclude);
    const auto excluded = of_kind(crawled, "exclude");
    ASSERT_FALSE(excluded.empty());
    EXPECT_EQ(excluded[0].worker, 3);
    EXPECT_EQ(excluded[0].actor, "policy: on_stall");
    EXPECT_EQ(excluded[0].iteration, 61);
    const auto readmitted = of_kind(crawled, "readmit");
    ASSERT_FALSE(readmitted.empty());
    EXPECT_EQ(readmitted[0].worker, 3);
    EXPECT_GE(readmitted[0].time_s, excluded[0].time_s + 0.5);
    for (const IterationRecord& r : crawled.rows)
        if (r.worker == 3 && r.iteration >= 61 && r.iteration < readmitted[0].iteration) {
            EXPECT_EQ(r.batch_size, 0) << "iteration " << r.iteration;
        }
    EXPECT_TRUE(std::any_of(crawled.rows.begin(), crawled.rows.end(), [&](const IterationRecord& r) {
        return r.worker == 3 && r.iteration >= readmitted[0].iteration && r.batch_size > 0;
    })) << "measured again once readmitted";
}

// Issue 42 item 2 for a local worker in the real mode: an exclusion while its batch holds the
// barrier gives the batch up at once. Worker 3 crawls from iteration 3 (1000 times its
// compute, idling); when its stall is reported the operator excludes it, from the engine's
// own wait, and the barrier goes on without it.
TEST(BspTrainer, AnExclusionReleasesTheBarrierALocalWorkerHoldsInTheRealMode)
{
    struct Operator final : train::TrainingObserver {
        Collector seen;
        train::Trainer* trainer = nullptr;
        void on_iteration(std::span<const IterationRecord> r) override { seen.on_iteration(r); }
        void on_evaluation(const EvaluationRecord& e) override { seen.on_evaluation(e); }
        void on_event(const JobEvent& e) override
        {
            seen.on_event(e);
            if (e.kind == EventKind::WorkerStalled && e.worker == 3)
                trainer->control().exclude(3, std::nullopt, EventActor::person("operator", "test"));
        }
    } op;
    auto c = config(train::ClockMode::Real, 4);
    c.prototype = model::make_mlp(20, { 512 }, 5); // a batch long enough to be worth idling 1000 times over
    c.total_batch = 512; // 128 a worker, about 1 ms: the crawl would idle about a second
    c.iterations = 8;
    c.stall.min_s = 0.2; // well above the others' batches, even on a loaded machine
    c.scheduled.push_back(
        { 3, "crawl", [](train::JobControl& control) { control.inject_straggler(3, 1000, EventActor::scenario()); } });
    train::BspTrainer trainer(std::move(c), balance::make_policy({}), op);
    op.trainer = &trainer;
    trainer.run();
    const Collector& seen = op.seen;
    std::vector<EventRecord> stalled;
    for (const EventRecord& e : of_kind(seen, "worker-stalled"))
        if (e.worker == 3) // another worker's batch may pass 0.2 s on a loaded machine: not this test's
            stalled.push_back(e);
    ASSERT_EQ(stalled.size(), 1u);
    EXPECT_EQ(stalled[0].iteration, 3);
    const IterationRecord& held = row_of(seen, 3, 3);
    EXPECT_EQ(held.decision, "dropped: excluded");
    EXPECT_EQ(held.compute_s, 0.0);
    for (const EventRecord& e : of_kind(seen, "worker-recovered"))
        EXPECT_NE(e.worker, 3) << "a given-up batch brings nothing back";
    EXPECT_TRUE(of_kind(seen, "worker-lost").empty()) << "an exclusion is not a loss";
    const auto excluded = of_kind(seen, "exclude");
    ASSERT_EQ(excluded.size(), 1u);
    EXPECT_EQ(excluded[0].actor, "operator:test");
    std::int32_t others = 0;
    for (const IterationRecord& r : seen.rows) {
        if (r.worker == 3 && r.iteration > 3) {
            EXPECT_EQ(r.batch_size, 0) << "excluded from iteration 4 on, at iteration " << r.iteration;
        }
        if (r.iteration == 3 && r.worker != 3)
            others += r.batch_size;
    }
    EXPECT_GT(others, 0) << "the others' gradients made the update";
}

// Issue 42 item 2 on the paced clock: the barrier waits for the wall clock to reach the
// crawling worker's modelled arrival, and an exclusion meanwhile releases it at that instant.
// Worker 3 crawls from iteration 3 (1000 times its compute: about 30 s at pace 1); the
// operator excludes it a second after iteration 2's rows, which is inside that wait however
// loaded the machine (iteration 3's safe point comes milliseconds after those rows).
TEST(BspTrainer, AnExclusionReleasesTheBarrierAWorkerHoldsOnThePacedClock)
{
    struct Operator final : train::TrainingObserver {
        Collector seen;
        train::Trainer* trainer = nullptr;
        std::thread excluding;
        void on_iteration(std::span<const IterationRecord> r) override
        {
            seen.on_iteration(r);
            if (!r.empty() && r.front().iteration == 2)
                excluding = std::thread([this] {
                    std::this_thread::sleep_for(std::chrono::seconds(1));
                    trainer->control().exclude(3, std::nullopt, EventActor::person("operator", "test"));
                });
        }
        void on_evaluation(const EvaluationRecord& e) override { seen.on_evaluation(e); }
        void on_event(const JobEvent& e) override { seen.on_event(e); }
    } op;
    auto c = config(train::ClockMode::Paced);
    c.pace = 1;
    c.iterations = 8;
    c.scheduled.push_back(
        { 3, "crawl", [](train::JobControl& control) { control.inject_straggler(3, 1000, EventActor::scenario()); } });
    train::BspTrainer trainer(std::move(c), balance::make_policy({}), op);
    op.trainer = &trainer;
    trainer.run();
    op.excluding.join();
    const Collector& seen = op.seen;
    const IterationRecord& held = row_of(seen, 3, 3);
    EXPECT_EQ(held.decision, "dropped: excluded");
    EXPECT_EQ(held.compute_s, 0.0);
    EXPECT_GE(held.end_s, 1.0) << "the barrier closed when the exclusion came, not before";
    EXPECT_LT(held.end_s, 10.0) << "the barrier did not wait for the crawl's modelled end";
    std::int32_t others = 0;
    for (const IterationRecord& r : seen.rows) {
        if (r.iteration == 3 && r.worker != 3) {
            others += r.batch_size;
            EXPECT_DOUBLE_EQ(r.end_s + r.wait_s, held.end_s) << "worker " << r.worker << " waited for the release";
        }
        if (r.worker == 3 && r.iteration > 3) {
            EXPECT_EQ(r.batch_size, 0) << "excluded from iteration 4 on, at iteration " << r.iteration;
        }
        if (r.iteration == 4 && r.batch_size > 0) {
            EXPECT_DOUBLE_EQ(r.start_s, held.end_s) << "the run clock goes on from the released barrier";
        }
    }
    EXPECT_GT(others, 0) << "the others' gradients made the update";
    EXPECT_TRUE(of_kind(seen, "worker-lost").empty()) << "an exclusion is not a loss";
}

// An exclusion also gives up the batch after the one under way (one asked between a safe
// point and the batch's start). A worker that comes back without an include (its timed
// exclusion ran out) must not find that batch given up: its first batch back trains (review
// of issue 42 item 2; counting batches by their starts had left the reservation for it).
TEST(BspTrainer, AWorkerBackFromATimedExclusionTrainsItsFirstBatchInTheRealMode)
{
    struct Operator final : train::TrainingObserver {
        Collector seen;
        train::Trainer* trainer = nullptr;
        void on_iteration(std::span<const IterationRecord> r) override
        {
            seen.on_iteration(r);
            if (!r.empty() && r.front().iteration == 5) // between two barriers
                trainer->control().exclude(2, 1e-3, EventActor::person("operator", "test"));
        }
        void on_evaluation(const EvaluationRecord& e) override { seen.on_evaluation(e); }
        void on_event(const JobEvent& e) override { seen.on_event(e); }
    } op;
    auto c = config(train::ClockMode::Real, 4);
    c.iterations = 40;
    train::BspTrainer trainer(std::move(c), balance::make_policy({}), op);
    op.trainer = &trainer;
    trainer.run();
    const auto readmitted = of_kind(op.seen, "readmit");
    ASSERT_EQ(readmitted.size(), 1u);
    std::vector<std::string> back; // worker 2's decisions once it is back
    for (const IterationRecord& r : op.seen.rows)
        if (r.worker == 2 && r.iteration >= readmitted[0].iteration && r.batch_size > 0) // from the readmit's barrier
            back.push_back(std::to_string(r.iteration) + " " + r.decision);
    ASSERT_FALSE(back.empty());
    for (const std::string& row : back)
        EXPECT_EQ(row.find("dropped"), std::string::npos) << row;
}
