#include "balance/policy_registry.h"
#include "common/job_event.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <numeric>

using namespace fulcrum;

namespace {

const EventActor kOperator = EventActor::person("operator", "test");

std::vector<balance::WorkerObservation> observe(
    const std::vector<std::int32_t>& sizes, const std::vector<double>& speeds)
{
    std::vector<balance::WorkerObservation> obs;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        if (sizes[i] == 0)
            continue; // excluded: did not run
        balance::WorkerObservation o;
        o.worker = static_cast<WorkerId>(i);
        o.batch_size = sizes[i];
        o.compute_s = sizes[i] / speeds[i];
        o.cpu_share = o.memory_share = o.next_cpu_share = o.next_memory_share = 1;
        obs.push_back(o);
    }
    return obs;
}

std::unique_ptr<balance::BatchSizeManager> cpu_manager(
    int workers, std::int32_t total, std::vector<std::int32_t> limits = {}, double damping = 0)
{
    balance::PolicySpec spec;
    spec.type = "lbbsp-cpu";
    spec.predictor.type = "memoryless";
    spec.manager.damping = damping;
    return balance::make_manager(spec, workers, total, std::move(limits));
}

int sum(const std::vector<std::int32_t>& v)
{
    return std::accumulate(v.begin(), v.end(), 0);
}

} // namespace

TEST(BatchSizeManager, APinnedWorkerKeepsItsSizeAndTheOthersAreBalancedAroundIt)
{
    auto m = cpu_manager(4, 100);
    const std::vector<double> speeds { 100, 100, 200, 400 };
    auto a = m->initial();
    m->pin(3, 10, EventActor::person("operator", "alice"));
    a = m->next(observe(a.batch_sizes, speeds), 0, 1.0);
    EXPECT_EQ(a.batch_sizes[3], 10);
    EXPECT_EQ(sum(a.batch_sizes), 100);
    EXPECT_EQ(a.batch_sizes, (std::vector<std::int32_t> { 23, 22, 45, 10 }));
    EXPECT_EQ(a.decisions[3], "pinned");
    const auto events = records(m->take_events());
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].kind, "pin");
    EXPECT_EQ(events[0].actor, "operator:alice");
    EXPECT_EQ(events[0].worker, 3);

    m->unpin(3, kOperator);
    a = m->next(observe(a.batch_sizes, speeds), 1, 2.0);
    EXPECT_EQ(a.batch_sizes, (std::vector<std::int32_t> { 13, 12, 25, 50 }));
}

TEST(BatchSizeManager, AnExcludedWorkerGetsNothingAndItsShareGoesToTheOthers)
{
    auto m = cpu_manager(3, 90);
    const std::vector<double> speeds { 100, 100, 100 };
    auto a = m->initial();
    m->exclude(1, std::nullopt, kOperator);
    a = m->next(observe(a.batch_sizes, speeds), 0, 1.0);
    EXPECT_EQ(a.batch_sizes, (std::vector<std::int32_t> { 45, 0, 45 }));
    EXPECT_TRUE(m->state(1).excluded);
    m->include(1, kOperator);
    a = m->next(observe(a.batch_sizes, speeds), 1, 2.0);
    EXPECT_EQ(sum(a.batch_sizes), 90);
    EXPECT_GT(a.batch_sizes[1], 0);
}

TEST(BatchSizeManager, ATimedExclusionEndsAtTheFirstBarrierAfterItsTime)
{
    auto m = cpu_manager(2, 20);
    auto a = m->initial();
    m->exclude(0, 5.0, kOperator);
    a = m->next(observe(a.batch_sizes, { 10, 10 }), 0, 1.0);
    EXPECT_EQ(a.batch_sizes[0], 0);
    EXPECT_EQ(m->state(0).excluded_until, 6.0);
    a = m->next(observe(a.batch_sizes, { 10, 10 }), 1, 4.0);
    EXPECT_EQ(a.batch_sizes[0], 0);
    a = m->next(observe(a.batch_sizes, { 10, 10 }), 2, 6.5);
    EXPECT_GT(a.batch_sizes[0], 0);
    bool readmitted = false;
    for (const auto& e : records(m->take_events()))
        readmitted |= e.kind == "readmit" && e.worker == 0 && e.iteration == 2;
    EXPECT_TRUE(readmitted);
}

TEST(BatchSizeManager, BadRequestsAreRefusedWithAReasonAndChangeNothing)
{
    auto m = cpu_manager(3, 30, { 0, 12, 0 });
    auto a = m->initial();
    const auto expect_code = [](auto&& request, const std::string& code) {
        try {
            request();
            ADD_FAILURE() << "accepted a request that should be refused: " << code;
        } catch (const balance::OverrideError& e) {
            EXPECT_EQ(e.code(), code) << e.what();
        }
    };
    expect_code([&] { m->pin(7, 5, kOperator); }, "unknown-worker");
    expect_code(
        [&] { m->pin(0, 29, kOperator); }, "pin-out-of-range"); // X = 30 leaves 1 for each of the other two at most 28
    expect_code([&] { m->pin(0, 0, kOperator); }, "pin-out-of-range");
    expect_code([&] { m->pin(1, 13, kOperator); }, "over-memory-limit");
    expect_code([&] { m->unpin(0, kOperator); }, "not-pinned");
    expect_code([&] { m->include(0, kOperator); }, "not-excluded");
    m->exclude(0, std::nullopt, kOperator);
    m->exclude(1, std::nullopt, kOperator);
    expect_code([&] { m->exclude(2, std::nullopt, kOperator); }, "last-worker");
    expect_code([&] { m->exclude(-1, 3.0, kOperator); }, "unknown-worker");
    a = m->next(observe(a.batch_sizes, { 1, 1, 1 }), 0, 1);
    EXPECT_EQ(a.batch_sizes, (std::vector<std::int32_t> { 0, 0, 30 }));
}

// A GPU worker's x_o measured on its device replaces the limit its profile gave (or sets
// one where it gave none); a worker without one keeps its own.
TEST(BatchSizeManager, MeasuredMemoryLimitsReplaceTheProfilesOnes)
{
    auto m = cpu_manager(3, 60, { 80, 0, 25 });
    m->set_batch_limits({ 50, 45, 0 });
    auto a = m->initial();
    a = m->next(observe(a.batch_sizes, { 1000, 10, 10 }), 0, 1);
    EXPECT_EQ(sum(a.batch_sizes), 60);
    EXPECT_LE(a.batch_sizes[0], 50);
    const auto refused = [&](WorkerId worker, std::int32_t size) {
        try {
            m->pin(worker, size, kOperator);
        } catch (const balance::OverrideError& e) {
            return e.code() == "over-memory-limit";
        }
        return false;
    };
    EXPECT_TRUE(refused(0, 51));
    EXPECT_TRUE(refused(1, 46));
    EXPECT_TRUE(refused(2, 26));
    EXPECT_FALSE(refused(0, 50));
}

TEST(BatchSizeManager, APolicyAskingBeyondAMemoryLimitIsRefusedAndTheRunGoesOn)
{
    // Worker 0 is ten times faster, so Alg. 1 wants to give it ~91 samples; its memory holds 60.
    auto m = cpu_manager(2, 100, { 60, 0 });
    auto a = m->initial();
    a = m->next(observe(a.batch_sizes, { 1000, 100 }), 0, 1);
    EXPECT_EQ(a.batch_sizes, (std::vector<std::int32_t> { 50, 50 }) /* initial split kept */);
    const auto events = records(m->take_events());
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.back().kind, "warning");
    EXPECT_NE(events.back().message.find("memory limit of 60"), std::string::npos);

    balance::PolicySpec fixed;
    fixed.type = "fixed";
    fixed.batch_sizes = { 90, 10 };
    auto refuse = balance::make_manager(fixed, 2, 100, { 40, 0 });
    EXPECT_THROW(refuse->initial(), std::invalid_argument);
}

TEST(BatchSizeManager, ANewPolicyTakesOverAtTheNextBarrierAndTheOperatorsOverridesStay)
{
    auto m = balance::make_manager({}, 3, 90, { 0, 0, 40 }); // uniform
    auto a = m->initial();
    EXPECT_EQ(a.batch_sizes, (std::vector<std::int32_t> { 30, 30, 30 }));
    m->pin(0, 20, EventActor::person("operator", "alice"));
    balance::PolicySpec fixed;
    fixed.type = "fixed";
    fixed.batch_sizes = { 10, 50, 30 };
    m->set_policy(balance::make_policy(fixed), fixed.manager, EventActor::person("operator", "bob"));
    EXPECT_EQ(m->policy().name(), "uniform") << "a request waits for the barrier";

    a = m->next(observe(a.batch_sizes, { 1, 1, 1 }), 0, 1.0);
    EXPECT_EQ(m->policy().name(), "fixed");
    EXPECT_EQ(a.batch_sizes[0], 20) << "the pin survives the change";
    EXPECT_EQ(sum(a.batch_sizes), 90);
    EXPECT_GT(a.batch_sizes[1], a.batch_sizes[2]) << "the others follow the fixed policy's 50:30";
    const auto events = records(m->take_events());
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].kind, "pin");
    EXPECT_EQ(events[1].kind, "policy-change");
    EXPECT_EQ(events[1].message, "uniform -> fixed");
    EXPECT_EQ(events[1].actor, "operator:bob");
    EXPECT_EQ(events[1].iteration, 0);

    m->unpin(0, kOperator);
    a = m->next(observe(a.batch_sizes, { 1, 1, 1 }), 1, 2.0);
    EXPECT_EQ(a.batch_sizes, (std::vector<std::int32_t> { 10, 50, 30 }));
}

TEST(BatchSizeManager, APolicyWhoseSizesBreakAMemoryLimitIsRefusedAndTheOldOneStays)
{
    auto m = balance::make_manager({}, 3, 90, { 0, 0, 40 });
    auto a = m->initial();
    balance::PolicySpec fixed;
    fixed.type = "fixed";
    fixed.batch_sizes = { 10, 30, 50 };
    try {
        m->set_policy(balance::make_policy(fixed), fixed.manager, kOperator);
        ADD_FAILURE() << "a policy giving worker 2 more than its 40 samples was accepted";
    } catch (const balance::OverrideError& e) {
        EXPECT_EQ(e.code(), "over-memory-limit");
        EXPECT_NE(std::string(e.what()).find("worker 2"), std::string::npos) << e.what();
    }
    a = m->next(observe(a.batch_sizes, { 1, 1, 1 }), 0, 1.0);
    EXPECT_EQ(m->policy().name(), "uniform");
    EXPECT_EQ(a.batch_sizes, (std::vector<std::int32_t> { 30, 30, 30 }));
    EXPECT_TRUE(records(m->take_events()).empty());
}

TEST(BatchSizeManager, DampingKeepsTheAllocationUnlessItIsPredictedToBeFaster)
{
    auto m = cpu_manager(2, 100, {}, 0.10);
    auto a = m->initial();
    a = m->next(observe(a.batch_sizes, { 100, 104 }), 0, 1); // balanced would save ~2 %
    EXPECT_EQ(a.batch_sizes, (std::vector<std::int32_t> { 50, 50 }));
    EXPECT_NE(a.decision.find("damped"), std::string::npos);
    a = m->next(observe(a.batch_sizes, { 100, 300 }), 1, 2); // saves a third
    EXPECT_EQ(a.batch_sizes, (std::vector<std::int32_t> { 25, 75 }));
}

// Elastic PS with a fixed batch per worker: X is 30 per member from the start, and after a
// join or a leave the next barrier splits the new X among the members (the others' LB-BSP
// balance kept), with a total-batch event saying so.
TEST(BatchSizeManager, FollowingTheMembersXIsTheBatchPerWorkerTimesTheMembers)
{
    auto m = cpu_manager(4, 60);
    m->follow_members(30);
    m->start_with_members({ true, true, false, false });
    EXPECT_EQ(m->total_batch(), 60);
    const std::vector<double> speeds { 100, 200, 100, 100 };
    auto a = m->initial();
    EXPECT_EQ(a.batch_sizes, (std::vector<std::int32_t> { 30, 30, 0, 0 }));
    m->join(2);
    m->join(3);
    EXPECT_EQ(m->total_batch(), 60) << "a join takes effect at the next barrier";
    a = m->next(observe(a.batch_sizes, speeds), 0, 1.0);
    EXPECT_EQ(m->total_batch(), 120);
    EXPECT_EQ(sum(a.batch_sizes), 120);
    for (const std::int32_t size : a.batch_sizes)
        EXPECT_GT(size, 0);
    const auto events = records(m->take_events());
    const auto total
        = std::find_if(events.begin(), events.end(), [](const EventRecord& e) { return e.kind == "total-batch"; });
    ASSERT_NE(total, events.end());
    EXPECT_EQ(total->iteration, 0);
    EXPECT_NE(total->message.find("X = 120 (30 per worker"), std::string::npos) << total->message;
    m->leave(0);
    a = m->next(observe(a.batch_sizes, speeds), 1, 2.0);
    EXPECT_EQ(a.batch_sizes[0], 0);
    EXPECT_EQ(sum(a.batch_sizes), 90);
}

// Issue 43's small things: an exclusion drops the worker's pin, and says so, so that a later
// unpin's refusal (which also says why) is no surprise.
TEST(BatchSizeManager, AnExclusionSaysItDropsTheWorkersPin)
{
    auto m = cpu_manager(3, 30, { 0, 0, 0 });
    auto a = m->initial();
    m->pin(1, 8, kOperator);
    a = m->next(observe(a.batch_sizes, { 1, 1, 1 }), 0, 1);
    EXPECT_EQ(a.batch_sizes[1], 8);
    m->exclude(1, 30.0, kOperator);
    a = m->next(observe(a.batch_sizes, { 1, 1, 1 }), 1, 2);
    EXPECT_EQ(a.batch_sizes[1], 0);
    EventRecord excluded;
    for (const auto& e : records(m->take_events()))
        if (e.kind == "exclude")
            excluded = e;
    EXPECT_EQ(excluded.message, "worker 1 excluded for 30 s; its pin at batch 8 is dropped");
    EXPECT_EQ(std::get<ExclusionLimit>(typed(excluded).detail).for_s, 30.0) << "the limit still reads back";
    m->include(1, kOperator);
    try {
        m->unpin(1, kOperator);
        ADD_FAILURE() << "unpinned a worker whose pin its exclusion dropped";
    } catch (const balance::OverrideError& e) {
        EXPECT_EQ(e.code(), "not-pinned");
        EXPECT_NE(std::string(e.what()).find("an exclusion drops a worker's pin"), std::string::npos) << e.what();
    }
}

// training.min_batch: LB-BSP gives a worker 1000 times slower one sample of 64; with a least
// batch of 4 it gets 4 (BatchNorm refuses one), X stays 64, and a pin below 4 is refused.
// Where the members outgrow X / min_batch, they share X evenly instead.
TEST(BatchSizeManager, AJobsLeastBatchHoldsForEveryWorkerThatTrains)
{
    auto plain = cpu_manager(2, 64);
    auto a = plain->initial();
    a = plain->next(observe(a.batch_sizes, { 1000, 1 }), 0, 1.0);
    EXPECT_EQ(a.batch_sizes, (std::vector<std::int32_t> { 63, 1 }));

    auto m = cpu_manager(2, 64);
    m->set_min_batch(4);
    a = m->initial();
    a = m->next(observe(a.batch_sizes, { 1000, 1 }), 0, 1.0);
    EXPECT_EQ(a.batch_sizes, (std::vector<std::int32_t> { 60, 4 }));
    try {
        m->pin(1, 3, kOperator);
        ADD_FAILURE() << "a pin below the least batch is refused";
    } catch (const balance::OverrideError& e) {
        EXPECT_EQ(e.code(), "pin-out-of-range");
        EXPECT_NE(std::string(e.what()).find("outside 4 to 60"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("least batch of 4"), std::string::npos) << e.what();
    }
    m->pin(0, 60, kOperator);
    a = m->next(observe(a.batch_sizes, { 1000, 1 }), 1, 2.0);
    EXPECT_EQ(a.batch_sizes, (std::vector<std::int32_t> { 60, 4 }));

    // An excluded worker comes back into what the pins leave: a pin leaves it its least batch
    // too (review: X = 16, least 2, worker 3 excluded, worker 0 pinned at 12 left 4 samples
    // for 3 workers once worker 3 was included, one of them a BatchNorm-breaking single one).
    auto four = cpu_manager(4, 16);
    four->set_min_batch(2);
    a = four->initial();
    four->exclude(3, std::nullopt, kOperator);
    a = four->next(observe(a.batch_sizes, { 10, 10, 10, 10 }), 0, 1.0);
    EXPECT_THROW(four->pin(0, 12, kOperator), balance::OverrideError);
    four->pin(0, 10, kOperator);
    four->include(3, kOperator);
    a = four->next(observe(a.batch_sizes, { 10, 10, 10, 10 }), 1, 2.0);
    EXPECT_EQ(a.batch_sizes, (std::vector<std::int32_t> { 10, 2, 2, 2 }));

    auto crowded = cpu_manager(3, 9);
    crowded->set_min_batch(4); // 3 x 4 > 9: the floor becomes 9 / 3
    a = crowded->initial();
    a = crowded->next(observe(a.batch_sizes, { 1000, 1, 1 }), 0, 1.0);
    EXPECT_EQ(a.batch_sizes, (std::vector<std::int32_t> { 3, 3, 3 }));
}
