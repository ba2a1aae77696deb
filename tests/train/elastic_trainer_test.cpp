#include "balance/policy_registry.h"
#include "data/synthetic.h"
#include "model/model_factory.h"
#include "train/bsp_trainer.h"

#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <set>

using namespace fulcrum;

namespace {

struct Barrier {
    std::int64_t iteration = 0;
    std::vector<WorkerId> workers;
    std::vector<std::int32_t> batch_sizes;
    std::vector<Eigen::VectorXf> gradients;
};

// Records everything, including a copy of every gradient each barrier applied.
struct Tap final : train::TrainingObserver {
    std::vector<IterationRecord> rows;
    std::vector<EventRecord> events;
    std::vector<Barrier> barriers;
    std::function<void(std::int64_t)> after_iteration;
    Eigen::Index parameters = 0;

    void on_iteration(std::span<const IterationRecord> r) override
    {
        rows.insert(rows.end(), r.begin(), r.end());
        if (after_iteration)
            after_iteration(r.front().iteration);
    }
    void on_evaluation(const EvaluationRecord&) override { }
    std::vector<std::pair<std::string, std::uint64_t>> answers; // each event's kind and the ask it answers
    void on_event(const JobEvent& e) override
    {
        events.push_back(record(e));
        answers.emplace_back(to_string(e.kind), e.answers);
    }
    void on_barrier(std::int64_t iteration, std::span<const ps::GradientPush> pushes) override
    {
        Barrier b { iteration, {}, {}, {} };
        for (const auto& p : pushes) {
            b.workers.push_back(p.worker);
            b.batch_sizes.push_back(p.batch_size);
            b.gradients.emplace_back(Eigen::Map<const Eigen::VectorXf>(p.gradient, parameters));
        }
        barriers.push_back(std::move(b));
    }
    std::vector<EventRecord> of_kind(const std::string& kind) const
    {
        std::vector<EventRecord> out;
        for (const auto& e : events)
            if (e.kind == kind)
                out.push_back(e);
        return out;
    }
};

train::TrainerConfig elastic_config(std::vector<train::ScheduledResize> resizes)
{
    static const auto data = data::make_synthetic(
        { .train_size = 2400, .test_size = 400, .dim = 12, .classes = 4, .separation = 3, .seed = 5 });
    train::TrainerConfig c;
    c.train = data.train;
    c.test = data.test;
    c.prototype = model::make_mlp(12, { 10 }, 4);
    for (double speed : { 3000.0, 2000.0, 1500.0, 1000.0 }) {
        train::WorkerSetup w;
        w.name = "slot" + std::to_string(c.workers.size());
        w.cpu.speed = speed;
        c.workers.push_back(w);
    }
    c.total_batch = 64;
    c.optimizer = { .learning_rate = 0.05f, .momentum = 0.9f, .weight_decay = 1e-4f };
    c.iterations = 40;
    c.eval_interval = 20;
    c.seed = 23;
    c.threads = 2;
    c.elastic.initial_workers = 2;
    c.elastic.resizes = std::move(resizes);
    return c;
}

train::ScheduledResize at(std::int64_t k, train::ResizeAction action, std::optional<int> target = std::nullopt)
{
    return { k, { action, target, EventActor::person("operator", "test"), {}, {} } };
}

using enum train::ResizeAction;

// Runs elastic_config({}) to its end with `ask` given the trainer's mailbox after iteration
// `at` (as an operator or the scheduler asks between barriers); returns its server's shards.
std::size_t run_asking(Tap& tap, std::int64_t at, const std::function<void(train::JobControl&)>& ask)
{
    auto config = elastic_config({});
    tap.parameters = config.prototype->parameter_count();
    train::BspTrainer trainer(std::move(config), balance::make_policy({}), tap);
    tap.after_iteration = [&](std::int64_t k) {
        if (k == at)
            ask(trainer.control());
    };
    trainer.run();
    return trainer.server().shards().size();
}

} // namespace

TEST(ElasticTrainer, ModelAfterServerAndWorkerChangesEqualsAStaticServerFedTheSameGradients)
{
    const auto config = elastic_config({ at(5, AddServer), at(8, AddWorker), at(12, AddWorker), at(15, RemoveServer, 0),
        at(20, RemoveWorker, 1), at(25, AddServer), at(30, AddWorker), at(33, RemoveWorker) });
    Tap tap;
    tap.parameters = config.prototype->parameter_count();
    train::BspTrainer trainer(config, balance::make_policy({}), tap);
    trainer.run();

    // Replay every recorded barrier on a server that never changed.
    Eigen::VectorXf initial(config.prototype->parameter_count());
    config.prototype->initialize(initial, config.seed);
    ps::ParameterServer fixed(initial, 1, config.optimizer, config.aggregation);
    ASSERT_EQ(tap.barriers.size(), 40u);
    for (std::size_t k = 0; k < tap.barriers.size(); ++k) {
        const Barrier& b = tap.barriers[k];
        ASSERT_EQ(b.iteration, static_cast<std::int64_t>(k));
        // Not a gradient lost or applied twice: one push per member, the whole total batch.
        EXPECT_EQ(std::set<WorkerId>(b.workers.begin(), b.workers.end()).size(), b.workers.size());
        EXPECT_EQ(std::accumulate(b.batch_sizes.begin(), b.batch_sizes.end(), 0), 64) << "barrier " << k;
        std::vector<ps::GradientPush> pushes;
        for (std::size_t i = 0; i < b.workers.size(); ++i)
            pushes.push_back({ b.workers[i], b.batch_sizes[i], b.gradients[i].data() });
        fixed.apply_barrier(pushes);
    }
    const Eigen::VectorXf live = trainer.server().parameters(), replayed = fixed.parameters();
    for (Eigen::Index i = 0; i < live.size(); ++i)
        ASSERT_EQ(live[i], replayed[i]) << "parameter " << i;
    EXPECT_NE(live, initial);

    // Who pushed when follows the plan: slots 0,1 from the start, 2 joins at 8, 3 at 12,
    // 1 leaves at 20, 1 re-joins at 30 (the lowest free slot), 3 leaves at 33 (the highest).
    const auto members_at = [&](std::size_t k) {
        return std::set<WorkerId>(tap.barriers[k].workers.begin(), tap.barriers[k].workers.end());
    };
    EXPECT_EQ(members_at(7), (std::set<WorkerId> { 0, 1 }));
    EXPECT_EQ(members_at(8), (std::set<WorkerId> { 0, 1, 2 }));
    EXPECT_EQ(members_at(12), (std::set<WorkerId> { 0, 1, 2, 3 }));
    EXPECT_EQ(members_at(20), (std::set<WorkerId> { 0, 2, 3 }));
    EXPECT_EQ(members_at(30), (std::set<WorkerId> { 0, 1, 2, 3 }));
    EXPECT_EQ(members_at(39), (std::set<WorkerId> { 0, 1, 2 }));
    EXPECT_EQ(trainer.server().shards().size(), 2u); // 1 + 1 - 1 + 1

    EXPECT_EQ(tap.of_kind("add-server").size(), 2u);
    EXPECT_EQ(tap.of_kind("remove-server").size(), 1u);
    ASSERT_EQ(tap.of_kind("add-worker").size(), 3u);
    EXPECT_EQ(tap.of_kind("add-worker")[0].worker, 2);
    EXPECT_EQ(tap.of_kind("add-worker")[0].iteration, 8);
    EXPECT_EQ(tap.of_kind("add-worker")[0].actor, "operator:test");
    EXPECT_NE(tap.of_kind("add-worker")[0].message.find("samples moved"), std::string::npos);
    EXPECT_EQ(tap.of_kind("remove-worker").size(), 2u);
    EXPECT_TRUE(tap.of_kind("resize-refused").empty());
}

TEST(ElasticTrainer, ImpossibleChangesBecomeRefusalEventsAndTheRunGoesOn)
{
    auto config = elastic_config({ at(2, RemoveServer), at(3, RemoveWorker, 3), at(4, AddWorker, 9),
        at(5, AddWorker, 0), at(6, AddWorker), at(6, AddWorker), at(7, AddWorker) });
    Tap tap;
    tap.parameters = config.prototype->parameter_count();
    train::BspTrainer trainer(std::move(config), balance::make_policy({}), tap);
    const auto result = trainer.run();
    EXPECT_EQ(result.iterations, 40);
    const auto refused = tap.of_kind("resize-refused");
    ASSERT_EQ(refused.size(), 5u);
    EXPECT_NE(refused[0].message.find("last-server"), std::string::npos) << refused[0].message;
    EXPECT_NE(refused[1].message.find("not-a-member"), std::string::npos) << refused[1].message;
    EXPECT_NE(refused[2].message.find("unknown-worker"), std::string::npos) << refused[2].message;
    EXPECT_NE(refused[3].message.find("already-member"), std::string::npos) << refused[3].message;
    EXPECT_NE(refused[4].message.find("no-free-slot"), std::string::npos) << refused[4].message;
    EXPECT_EQ(tap.of_kind("add-worker").size(), 2u);
    EXPECT_EQ(tap.barriers.back().workers.size(), 4u);
}

// elastic.pause_s: in the modelled modes each change pauses the job on its run clock for
// what it costs (a refused one costs nothing), and the pause is in the change's event.
TEST(ElasticTrainer, EachChangePausesTheRunClockForItsCost)
{
    auto config = elastic_config({ at(5, AddWorker), at(5, AddServer), at(9, RemoveWorker, 3) });
    config.elastic.pause_s.add_worker_s = 2.5;
    config.elastic.pause_s.add_server_s = 0.5;
    config.elastic.pause_s.remove_worker_s = 7;
    Tap tap;
    tap.parameters = config.prototype->parameter_count();
    train::BspTrainer trainer(std::move(config), balance::make_policy({}), tap);
    trainer.run();
    const auto gap = [&](std::int64_t k) { // from the barrier before iteration k to its start
        double barrier = 0, start = 0;
        for (const IterationRecord& r : tap.rows) {
            if (r.iteration == k - 1)
                barrier = std::max(barrier, r.end_s);
            if (r.iteration == k)
                start = r.start_s;
        }
        return start - barrier;
    };
    EXPECT_NEAR(gap(5), 3.0, 1e-9) << "an added worker and an added server";
    EXPECT_NEAR(gap(6), 0, 1e-9);
    EXPECT_NEAR(gap(9), 0, 1e-9) << "worker 3 is no member: the refused change costs nothing";
    ASSERT_EQ(tap.of_kind("add-worker").size(), 1u);
    EXPECT_NE(tap.of_kind("add-worker")[0].message.find("the job pauses 2.5 s for it"), std::string::npos)
        << tap.of_kind("add-worker")[0].message;
    ASSERT_EQ(tap.of_kind("resize-refused").size(), 1u);
}

// elastic.batch_per_worker (weak scaling, EPS's growth): X is the batch per worker times the
// members from the barrier after each change, and the job ends once it has taken its
// iterations x total batch samples, re-planning its barriers (on_plan) as X moves.
TEST(ElasticTrainer, WithABatchPerWorkerTheTotalFollowsTheMembersAndTheJobEndsOnItsSamples)
{
    auto config = elastic_config({ at(5, AddWorker), at(5, AddWorker), at(20, RemoveWorker) });
    config.elastic.batch_per_worker = 32; // 2 members x 32 = the total batch of 64
    struct PlanTap final : train::TrainingObserver {
        Tap tap;
        std::vector<std::int64_t> plans;
        void on_iteration(std::span<const IterationRecord> r) override { tap.on_iteration(r); }
        void on_evaluation(const EvaluationRecord& e) override { tap.on_evaluation(e); }
        void on_event(const JobEvent& e) override { tap.on_event(e); }
        void on_plan(std::int64_t iterations) override { plans.push_back(iterations); }
    } observer;
    train::BspTrainer trainer(std::move(config), balance::make_policy({}), observer);
    const train::TrainingResult result = trainer.run();
    std::map<std::int64_t, std::int64_t> x; // iteration -> samples
    for (const IterationRecord& r : observer.tap.rows)
        x[r.iteration] += r.batch_size;
    EXPECT_EQ(x[0], 64);
    EXPECT_EQ(x[4], 64);
    EXPECT_EQ(x[5], 128) << "4 members x 32";
    EXPECT_EQ(x[19], 128);
    EXPECT_EQ(x[20], 96) << "3 members x 32";
    // 40 x 64 = 2560 samples: 5 barriers of 64, 15 of 128, then 96 each: 320 + 1920 + 4 x 96.
    std::int64_t samples = 0;
    for (const auto& [k, n] : x)
        samples += n;
    EXPECT_EQ(samples, 2624) << "the work, 2560 samples, and what the last barrier took beyond it";
    EXPECT_EQ(result.iterations, 24);
    EXPECT_EQ(observer.plans, (std::vector<std::int64_t> { 5 + 18, 20 + 4 }))
        << "after the growth: 5 done, 2240 left at 128; after the removal: 20 done, 320 left at 96";
    const auto totals = observer.tap.of_kind("total-batch");
    ASSERT_EQ(totals.size(), 2u);
    EXPECT_EQ(totals[0].iteration, 5);
    EXPECT_NE(totals[0].message.find("X = 128"), std::string::npos) << totals[0].message;
}

// The servers' side of a barrier (servers.bandwidth_gbps, servers.aggregate_s): each
// server's link carries every pushing worker's share of the model, so four workers on one
// server are server-bound where two on two servers are not; each push adds the aggregation.
TEST(ElasticTrainer, TheServersLinksCarryEveryWorkersShareOfTheModel)
{
    const auto comm_of = [](int servers) {
        auto config = elastic_config({});
        config.elastic = {};
        config.iterations = 2;
        config.comm_model_mb = 100; // 8e8 bits
        config.server_shards = servers;
        config.server_links = { .bandwidth_gbps = 10, .aggregate_s = 0.01 };
        for (auto& w : config.workers)
            w.network = { .bandwidth_gbps = 10, .latency_s = 0, .changes = {} };
        Tap tap;
        train::BspTrainer trainer(std::move(config), balance::make_policy({}), tap);
        trainer.run();
        return tap.rows.front().comm_s;
    };
    // Own link: 2 x 0.08 s. One server: 2 x 4 x 0.08 s. Four servers: their links carry one
    // worker's share each, as the workers' own do. Plus 4 x 0.01 s of aggregation.
    EXPECT_NEAR(comm_of(1), 0.64 + 0.04, 1e-9);
    EXPECT_NEAR(comm_of(2), 0.32 + 0.04, 1e-9);
    EXPECT_NEAR(comm_of(4), 0.16 + 0.04, 1e-9);
}

// elastic.min_workers and max_workers bound every resize, whoever asks: here two scheduled
// ones, refused at their barrier with the bound named, while one within them is made.
TEST(ElasticTrainer, ResizesStayWithinMinAndMaxWorkers)
{
    auto config = elastic_config({ at(2, RemoveWorker), at(3, AddWorker), at(4, AddWorker) });
    config.elastic.min_workers = 2;
    config.elastic.max_workers = 3;
    Tap tap;
    tap.parameters = config.prototype->parameter_count();
    train::BspTrainer trainer(std::move(config), balance::make_policy({}), tap);
    EXPECT_EQ(trainer.run().iterations, 40);
    const auto refused = tap.of_kind("resize-refused");
    ASSERT_EQ(refused.size(), 2u);
    EXPECT_NE(refused[0].message.find("below-min-workers"), std::string::npos) << refused[0].message;
    EXPECT_NE(refused[1].message.find("above-max-workers"), std::string::npos) << refused[1].message;
    EXPECT_EQ(tap.of_kind("add-worker").size(), 1u);
    EXPECT_EQ(tap.barriers.back().workers.size(), 3u);
}

TEST(ElasticTrainer, ARequestMadeDuringTheRunTakesEffectBeforeTheNextIteration)
{
    Tap tap;
    const std::size_t shards = run_asking(tap, 9, [](train::JobControl& control) {
        control.request_resize({ AddWorker, std::nullopt, EventActor::person("operator", "test"), {}, {} });
        control.request_resize({ AddServer, std::nullopt, EventActor::person("operator", "test"), {}, {} });
    });
    EXPECT_EQ(tap.barriers[9].workers.size(), 2u);
    EXPECT_EQ(tap.barriers[10].workers.size(), 3u);
    ASSERT_EQ(tap.of_kind("add-server").size(), 1u);
    EXPECT_EQ(tap.of_kind("add-server")[0].iteration, 10);
    EXPECT_EQ(tap.of_kind("add-server")[0].actor, "operator:test");
    EXPECT_EQ(shards, 2u);
}

// Each resize event names the ask of fulcrumd's it answers (ResizeRequest::ticket), made or
// refused, so fulcrumd's record of what is asked drops exactly that one; a scenario's own
// resize answers none.
TEST(ElasticTrainer, EachResizeEventNamesTheAskItAnswers)
{
    auto config = elastic_config({ at(2, RemoveWorker) });
    Tap tap;
    tap.parameters = config.prototype->parameter_count();
    train::BspTrainer trainer(std::move(config), balance::make_policy({}), tap);
    tap.after_iteration = [&](std::int64_t k) {
        if (k != 5)
            return;
        const EventActor op = EventActor::person("operator", "test");
        trainer.control().request_resize({ AddWorker, std::nullopt, op, {}, {}, 11 });
        trainer.control().request_resize({ AddServer, std::nullopt, op, {}, {}, 12 });
        trainer.control().request_resize({ AddWorker, 0, op, {}, {}, 13 }); // a member already
    };
    trainer.run();
    std::vector<std::pair<std::string, std::uint64_t>> resizes;
    for (const auto& a : tap.answers)
        if (a.first == "remove-worker" || a.first == "add-worker" || a.first == "add-server"
            || a.first == "resize-refused")
            resizes.push_back(a);
    EXPECT_EQ(resizes,
        (std::vector<std::pair<std::string, std::uint64_t>> {
            { "remove-worker", 0 }, { "add-worker", 11 }, { "add-server", 12 }, { "resize-refused", 13 } }));
}

// A note asked for before a resize at the same safe point is recorded before it: an
// operator's unfreeze comes first in the job's store, then the removals it let through.
TEST(ElasticTrainer, ANoteAskedForBeforeAResizeIsRecordedBeforeIt)
{
    Tap tap;
    run_asking(tap, 9, [](train::JobControl& control) {
        control.record({ EventKind::JobUnfrozen, "the elastic scheduler may resize it again",
            EventActor::person("operator", "test"), std::nullopt });
        control.request_resize({ AddWorker, std::nullopt, EventActor::scheduler("eps"), {}, {} });
    });
    std::vector<std::string> kinds;
    for (const EventRecord& e : tap.events)
        if (e.kind == "job-unfrozen" || e.kind == "add-worker")
            kinds.push_back(e.kind + "@" + std::to_string(e.iteration));
    EXPECT_EQ(kinds, (std::vector<std::string> { "job-unfrozen@10", "add-worker@10" }));
}

// A note asked for after the last barrier (a pooled process released as the job ends) is
// still recorded, before job-finished.
TEST(ElasticTrainer, ANoteAskedForAfterTheLastBarrierIsRecordedBeforeTheJobsEnd)
{
    Tap tap;
    const std::int64_t last = elastic_config({}).iterations - 1;
    run_asking(tap, last, [](train::JobControl& control) {
        control.record(
            { EventKind::WorkerReleased, "pooled worker on pool-1 leaves worker 1", EventActor::scheduler("eps"), 1 });
    });
    ASSERT_GE(tap.events.size(), 2u);
    EXPECT_EQ(tap.events[tap.events.size() - 2].kind, "worker-released");
    EXPECT_EQ(tap.events[tap.events.size() - 2].iteration, last);
    EXPECT_EQ(tap.events.back().kind, "job-finished");
}

TEST(ElasticTrainer, AWorkerCannotLeaveWhenOnlyExcludedWorkersWouldRemain)
{
    Tap tap;
    auto config = elastic_config({ at(5, RemoveWorker, 1) });
    tap.parameters = config.prototype->parameter_count();
    train::BspTrainer trainer(std::move(config), balance::make_policy({}), tap);
    trainer.manager().exclude(0, std::nullopt, EventActor::person("operator", "test"));
    EXPECT_THROW(trainer.manager().pin(3, 10, EventActor::person("operator", "test")),
        balance::OverrideError); // slot 3 is not a member yet
    trainer.run();
    const auto refused = tap.of_kind("resize-refused");
    ASSERT_EQ(refused.size(), 1u);
    EXPECT_NE(refused[0].message.find("last-worker"), std::string::npos) << refused[0].message;
    EXPECT_EQ(tap.barriers.back().workers, std::vector<WorkerId> { 1 });
}

TEST(ElasticTrainer, NonBarrierSyncModelsAndFederatedDataRefuseElasticity)
{
    auto config = elastic_config({ at(3, AddWorker) });
    config.sync.type = sync::SyncType::Asp;
    Tap tap;
    EXPECT_THROW(train::BspTrainer(config, balance::make_policy({}), tap), std::invalid_argument);
    config.sync.type = sync::SyncType::Bsp;
    config.elastic.initial_workers = 7;
    EXPECT_THROW(train::BspTrainer(config, balance::make_policy({}), tap), std::invalid_argument);
}

// The one check every resize passes, whoever asks (an operator through fulcrumd, the elastic
// scheduler, a scenario): its default target and each refusal, in its order.
TEST(ResizeCheck, NamesTheTargetOrTheRefusal)
{
    using train::Membership;
    using train::ResizeAction;
    const Membership job { 7, { true, true, false, false }, 2, 100, 2, 3 };
    const auto code = [](const Membership& m, ResizeAction action, std::optional<int> target) -> std::string {
        try {
            const train::ResizeRequest r = train::resolve_resize(m, { action, target, EventActor::elastic(), {}, {} });
            return "target " + std::to_string(*r.target);
        } catch (const train::ResizeError& e) {
            return e.code();
        }
    };
    EXPECT_EQ(code(job, ResizeAction::AddWorker, std::nullopt), "target 2");
    EXPECT_EQ(code(job, ResizeAction::AddWorker, 3), "target 3");
    EXPECT_EQ(code(job, ResizeAction::AddWorker, 1), "already-member");
    EXPECT_EQ(code(job, ResizeAction::AddWorker, 9), "unknown-worker");
    EXPECT_EQ(code(job, ResizeAction::RemoveWorker, std::nullopt), "below-min-workers");
    EXPECT_EQ(code(job, ResizeAction::RemoveWorker, 2), "not-a-member");
    EXPECT_EQ(code(job, ResizeAction::RemoveWorker, -1), "unknown-worker");
    EXPECT_EQ(code(job, ResizeAction::AddServer, std::nullopt), "target 2");
    EXPECT_EQ(code(job, ResizeAction::RemoveServer, std::nullopt), "target 1");
    EXPECT_EQ(code(job, ResizeAction::RemoveServer, 2), "unknown-server");

    Membership grown = job;
    grown.apply({ ResizeAction::AddWorker, 2, EventActor::elastic(), {}, {} });
    EXPECT_EQ(grown.count(), 3);
    EXPECT_EQ(code(grown, ResizeAction::AddWorker, std::nullopt), "above-max-workers");
    EXPECT_EQ(code(grown, ResizeAction::AddWorker, 9), "unknown-worker"); // the slot named first
    EXPECT_EQ(code(grown, ResizeAction::RemoveWorker, std::nullopt), "target 2");

    Membership alone { 7, { false, true }, 1, 1, 1, 0 };
    EXPECT_EQ(code(alone, ResizeAction::RemoveWorker, std::nullopt), "last-worker");
    EXPECT_EQ(code(alone, ResizeAction::RemoveServer, std::nullopt), "last-server");
    EXPECT_EQ(code(alone, ResizeAction::AddServer, std::nullopt), "no-keys");
    EXPECT_EQ(code(alone, ResizeAction::AddWorker, std::nullopt), "target 0");
    alone.members = { true, true };
    EXPECT_EQ(code(alone, ResizeAction::AddWorker, std::nullopt), "no-free-slot");
}
