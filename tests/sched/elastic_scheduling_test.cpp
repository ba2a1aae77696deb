#include "common/error.h"
#include "sched/elastic_simulator.h"
#include "sched/model_templates.h"
#include "temp_file.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>

using namespace fulcrum;
using sched::ElasticPolicy;

namespace {

sched::PsJobSpec job(
    int id, int workers, int servers, std::int64_t iterations, double arrival, const char* model = "resnet50")
{
    sched::PsJobSpec j;
    j.id = id;
    j.name = "j" + std::to_string(id);
    j.model = *sched::find_model_template(model);
    j.workers = workers;
    j.servers = servers;
    j.iterations = iterations;
    j.arrival_s = arrival;
    return j;
}

sched::ElasticOptions options(ElasticPolicy policy)
{
    sched::ElasticOptions o;
    o.policy = policy;
    o.iteration_noise = 0; // exact measurements unless a test wants noise
    return o;
}

sched::PsClusterModel cluster(int slots)
{
    sched::PsClusterModel c;
    c.slots = slots;
    return c;
}

} // namespace

TEST(PsThroughputModel, FewServersMakeAJobServerBoundAndMatchedGrowthHelps)
{
    const sched::PsClusterModel c = cluster(64);
    const auto resnet = *sched::find_model_template("resnet50");
    // One server carries w x M each way: eight workers are slower per worker than two.
    EXPECT_LT(c.throughput(resnet, 8, 1) / 8, c.throughput(resnet, 2, 1) / 2);
    EXPECT_GT(c.throughput(resnet, 8, 8), 3.5 * c.throughput(resnet, 8, 1));
    EXPECT_GT(c.throughput(resnet, 5, 5), c.throughput(resnet, 4, 4));
    EXPECT_DOUBLE_EQ(c.iteration_s(resnet, 2, 2),
        resnet.forward_s + resnet.backward_s + 2 * resnet.model_bytes * c.seconds_per_byte + 2 * c.barrier_overhead_s);
}

TEST(ElasticSimulator, StaticFifoRunsAJobAtItsRequestAndMakesTheNextOneWait)
{
    const sched::PsClusterModel c = cluster(8);
    const auto result = sched::simulate_elastic(
        c, { job(0, 4, 2, 1000, 0), job(1, 3, 1, 500, 10) }, options(ElasticPolicy::StaticFifo));
    ASSERT_EQ(result.jobs.size(), 2u);
    const auto& first = result.jobs[0];
    const double expected = first.job.samples() / c.throughput(first.job.model, 4, 2);
    EXPECT_NEAR(first.finish_s, expected, 1e-6 * expected);
    EXPECT_NEAR(result.jobs[1].start_s, first.finish_s, 1e-9); // 6 + 4 slots do not fit in 8
    EXPECT_NEAR(first.feedback_s, 0.1 * expected, 1e-6 * expected);
    EXPECT_EQ(first.peak_workers, 4);
    EXPECT_TRUE(result.changes.empty());
}

TEST(ElasticSimulator, EpsGrowsALoneJobOnIdleSlotsAndFinishesSoonerThanStatic)
{
    const sched::PsClusterModel c = cluster(16);
    const auto jobs = std::vector { job(0, 2, 1, 3000, 0) };
    const auto fixed = sched::simulate_elastic(c, jobs, options(ElasticPolicy::StaticFifo));
    const auto eps = sched::simulate_elastic(c, jobs, options(ElasticPolicy::Eps));
    const auto& grown = eps.jobs[0];
    EXPECT_GT(grown.grown, 3);
    EXPECT_EQ(grown.peak_workers, 2 + grown.grown - grown.rolled_back);
    EXPECT_LE(grown.peak_workers + grown.peak_servers, 16);
    EXPECT_LT(grown.jct(), 0.5 * fixed.jobs[0].jct());
    EXPECT_GT(eps.cpu_util, fixed.cpu_util);
    // Each growth step paused the job for one add-server and one add-worker.
    double pauses = 0;
    for (const auto& change : eps.changes)
        pauses += change.total_s;
    EXPECT_NEAR(grown.paused_s, pauses, 1e-9);
}

TEST(ElasticSimulator, ANewcomerTakesSlotsFromAJobPastEarlyFeedbackInsteadOfQueueing)
{
    const sched::PsClusterModel c = cluster(8);
    const auto jobs = std::vector { job(0, 5, 3, 10000, 0), job(1, 2, 1, 300, 600) };
    const auto eps = sched::simulate_elastic(c, jobs, options(ElasticPolicy::Eps));
    ASSERT_GT(eps.jobs[0].feedback_s, 0);
    ASSERT_LT(eps.jobs[0].feedback_s, 600);
    EXPECT_DOUBLE_EQ(eps.jobs[1].start_s, 600);
    EXPECT_EQ(eps.jobs[0].released, 3);
    const auto fixed = sched::simulate_elastic(c, jobs, options(ElasticPolicy::StaticFifo));
    EXPECT_GT(fixed.jobs[1].start_s, eps.jobs[0].finish_s * 0.5);
    EXPECT_LT(eps.jobs[1].feedback_latency(), 0.1 * fixed.jobs[1].feedback_latency());
}

TEST(ElasticSimulator, KillRestartMakesTheSameMovesButPaysARestartForEach)
{
    const sched::PsClusterModel c = cluster(16);
    const auto jobs = std::vector { job(0, 2, 1, 3000, 0), job(1, 2, 2, 2000, 300) };
    const auto eps = sched::simulate_elastic(c, jobs, options(ElasticPolicy::Eps));
    const auto restart = sched::simulate_elastic(c, jobs, options(ElasticPolicy::KillRestart));
    int restarts = 0;
    for (const auto& j : restart.jobs) {
        restarts += j.restarts;
        EXPECT_GT(j.restarts, 0);
    }
    ASSERT_EQ(restart.changes.size(), 1u);
    EXPECT_EQ(restart.changes[0].change, "restart");
    EXPECT_EQ(restart.changes[0].count, restarts);
    EXPECT_NEAR(restart.changes[0].total_s / restarts, c.restart_cost(jobs[0].model), 1e-9);
    EXPECT_GT(restart.jobs[0].jct() + restart.jobs[1].jct(), eps.jobs[0].jct() + eps.jobs[1].jct());
}

TEST(ElasticSimulator, AGrowthStepMeasuredSlowerIsRolledBackAndTheJobGrowsNoFurther)
{
    // Under the throughput model a matched step is never truly slower, so the rollback is
    // driven by what the policy measures: a window of noisy iterations. With noise as large
    // as the gains, some step looks slower; it is undone and never retried.
    const sched::PsClusterModel c = cluster(64);
    auto o = options(ElasticPolicy::Eps);
    o.iteration_noise = 3;
    o.seed = 3;
    const auto eps = sched::simulate_elastic(c, { job(0, 2, 2, 6000, 0) }, o);
    const auto& j = eps.jobs[0];
    EXPECT_EQ(j.rolled_back, 1);
    EXPECT_LT(j.grown, 30); // it stopped growing with slots still idle
    std::map<std::string, int> counts;
    for (const auto& change : eps.changes)
        counts[change.change] = change.count;
    EXPECT_EQ(counts["add-worker"], j.grown);
    EXPECT_EQ(counts["remove-worker"], 1);
    EXPECT_EQ(counts["remove-server"], 1);
    EXPECT_EQ(j.peak_workers, 2 + j.grown);
}

TEST(ElasticSimulator, SameSeedSameResultAndNoiseChangesDecisionsOnlyThroughTheSeed)
{
    const sched::PsClusterModel c = cluster(64);
    const auto jobs = sched::generate_ps_workload({ .jobs = 30, .mean_gap_s = 120, .seed = 4 });
    auto o = options(ElasticPolicy::Eps);
    o.iteration_noise = 0.1;
    const auto a = sched::simulate_elastic(c, jobs, o), b = sched::simulate_elastic(c, jobs, o);
    EXPECT_EQ(sched::elastic_metrics_json(a, o), sched::elastic_metrics_json(b, o));
    EXPECT_EQ(a.jobs.size(), 30u);
}

TEST(ElasticSimulator, AJobLargerThanTheClusterIsRejectedWithTheReason)
{
    const auto result = sched::simulate_elastic(
        cluster(8), { job(0, 8, 2, 100, 0), job(1, 2, 1, 100, 5) }, options(ElasticPolicy::Eps));
    ASSERT_EQ(result.rejected.size(), 1u);
    EXPECT_EQ(result.rejected[0].reason, "asks for 8 workers and 2 servers (10 slots); the cluster has 8");
    EXPECT_EQ(result.jobs.size(), 1u);
}

TEST(PsWorkload, GeneratedMixFollowsItsRangesAndRoundTripsThroughTheFile)
{
    const auto jobs = sched::generate_ps_workload({ .jobs = 200, .mean_gap_s = 60, .seed = 9 });
    ASSERT_EQ(jobs.size(), 200u);
    double last = 0;
    for (const auto& j : jobs) {
        EXPECT_GE(j.workers, 2);
        EXPECT_LE(j.workers, 8);
        EXPECT_GE(j.servers, 1);
        EXPECT_LE(j.servers, 4);
        EXPECT_GE(j.iterations, 500);
        EXPECT_LE(j.iterations, 3000);
        EXPECT_GE(j.arrival_s, last);
        last = j.arrival_s;
    }
    EXPECT_NEAR(last / 199, 60, 15); // mean gap of the Poisson arrivals
    const auto read
        = sched::load_ps_workload(write_temp_file("fulcrum-ps-roundtrip.csv", sched::ps_workload_csv(jobs)));
    ASSERT_EQ(read.size(), jobs.size());
    EXPECT_EQ(read[17].model.name, jobs[17].model.name);
    EXPECT_EQ(read[17].workers, jobs[17].workers);
    EXPECT_EQ(read[17].iterations, jobs[17].iterations);
}

TEST(PsWorkload, BadFilesAreRefusedWithFileLineAndField)
{
    const auto refused = [](const std::string& text, const std::string& field, const std::string& words) {
        const std::string path = write_temp_file("fulcrum-ps-bad.csv", text);
        try {
            sched::load_ps_workload(path);
            ADD_FAILURE() << "accepted: " << text;
        } catch (const InputError& e) {
            EXPECT_EQ(e.field(), field) << e.what();
            EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
        }
    };
    refused("", "", "is empty");
    refused("name,model,workers,servers,iterations,arrival_s\n", "", "no jobs");
    refused("name,model,gpus,iterations,arrival_s\n", "header",
        "expected 'name,model,workers,servers,iterations,arrival_s'");
    refused(
        "name,model,workers,servers,iterations,arrival_s\na,resnet50,0,1,10,0\n", "workers", "positive whole number");
    refused("name,model,workers,servers,iterations,arrival_s\na,alexnet,2,1,10,0\n", "model", "expected one of vgg16");
    refused("name,model,workers,servers,iterations,arrival_s\na,resnet50,2,1,10\n", "",
        "expected 6 comma-separated fields");
    refused("name,model,workers,servers,iterations,arrival_s\na,resnet50,2,1,10,-3\n", "arrival_s",
        "seconds from the start");
}

TEST(EarlyFeedback, ParsesEachKindAndNamesWhatWasExpected)
{
    EXPECT_EQ(sched::parse_early_feedback("fraction:0.25").kind, sched::EarlyFeedback::Kind::Fraction);
    EXPECT_DOUBLE_EQ(sched::parse_early_feedback("iterations:200").value, 200);
    EXPECT_EQ(sched::parse_early_feedback("accuracy:0.5").kind, sched::EarlyFeedback::Kind::Accuracy);
    EXPECT_EQ(sched::to_string(sched::parse_early_feedback("accuracy:0.5")), "accuracy:0.5");
    for (const char* bad : { "0.1", "fraction:0", "fraction:1.5", "iterations:2.5", "iterations:0", "accuracy:1",
             "accuracy:x", "epochs:3", "fraction:" }) {
        try {
            sched::parse_early_feedback(bad);
            ADD_FAILURE() << bad << " was accepted";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find("expected"), std::string::npos) << e.what();
        }
    }
    EXPECT_NE(std::string([] {
        try {
            sched::parse_early_feedback("accuracy:1.2");
        } catch (const std::invalid_argument& e) {
            return e.what();
        }
        return "";
    }())
                  .find("(0, 1)"),
        std::string::npos);
}

TEST(EarlyFeedback, TheLearningCurveRisesToTheModelsFinalAccuracyAndInvertsExactly)
{
    const auto resnet = *sched::find_model_template("resnet50");
    EXPECT_DOUBLE_EQ(sched::modelled_accuracy(resnet, 0), 0);
    EXPECT_NEAR(sched::modelled_accuracy(resnet, 1), sched::final_accuracy(resnet), 1e-12);
    double previous = 0;
    for (double p = 0.05; p <= 1; p += 0.05) {
        EXPECT_GT(sched::modelled_accuracy(resnet, p), previous);
        previous = sched::modelled_accuracy(resnet, p);
    }
    const auto p = sched::progress_for_accuracy(resnet, 0.5);
    ASSERT_TRUE(p);
    EXPECT_NEAR(sched::modelled_accuracy(resnet, *p), 0.5, 1e-12);
    EXPECT_FALSE(sched::progress_for_accuracy(*sched::find_model_template("lstm-ptb"), 0.5));
}

TEST(EarlyFeedback, IterationsAndAccuracyPointsAreReachedAtTheirSampleCounts)
{
    const sched::PsClusterModel c = cluster(8);
    const auto lone = std::vector { job(0, 4, 2, 1000, 0) };
    const double rate = c.throughput(lone[0].model, 4, 2);

    auto o = options(ElasticPolicy::StaticFifo);
    o.feedback = sched::parse_early_feedback("iterations:250");
    const auto by_iterations = sched::simulate_elastic(c, lone, o);
    EXPECT_NEAR(by_iterations.jobs[0].feedback_s, 250.0 * 4 * lone[0].model.batch_size / rate, 1e-6);

    o.feedback = sched::parse_early_feedback("accuracy:0.6");
    const auto by_accuracy = sched::simulate_elastic(c, lone, o);
    const double p = *sched::progress_for_accuracy(lone[0].model, 0.6);
    EXPECT_NEAR(by_accuracy.jobs[0].feedback_s, p * lone[0].samples() / rate, 1e-6);
    EXPECT_FALSE(by_accuracy.jobs[0].feedback_at_finish);
}

TEST(EarlyFeedback, AJobThatNeverReachesItsAccuracyKeepsItsSlotsAndCountsFeedbackAtItsFinish)
{
    const sched::PsClusterModel c = cluster(8);
    // The PTB LSTM never reaches 0.5 accuracy: the newcomer cannot take its slots and waits.
    const auto jobs = std::vector { job(0, 5, 3, 3000, 0, "lstm-ptb"), job(1, 2, 1, 300, 60) };
    auto o = options(ElasticPolicy::Eps);
    o.feedback = sched::parse_early_feedback("accuracy:0.5");
    const auto never = sched::simulate_elastic(c, jobs, o);
    EXPECT_TRUE(never.jobs[0].feedback_at_finish);
    EXPECT_DOUBLE_EQ(never.jobs[0].feedback_s, never.jobs[0].finish_s);
    EXPECT_EQ(never.jobs[0].released, 0);
    EXPECT_GE(never.jobs[1].start_s, never.jobs[0].finish_s);

    o.feedback = sched::parse_early_feedback("accuracy:0.1"); // reachable: the newcomer starts as soon as it is reached
    const auto reached = sched::simulate_elastic(c, jobs, o);
    EXPECT_FALSE(reached.jobs[0].feedback_at_finish);
    EXPECT_GT(reached.jobs[0].released, 0);
    EXPECT_NEAR(reached.jobs[1].start_s, reached.jobs[0].feedback_s, 1e-9);
    EXPECT_LT(reached.jobs[1].start_s, 0.5 * never.jobs[1].start_s);
}

namespace {

// A: 4 slots, borrows; B: 4 slots, does not.
sched::TenantQuotas two_tenants(bool a_borrows = true)
{
    sched::TenantQuotas q;
    q.named["A"] = { .gpus = 4, .borrow = a_borrows, .weight = 1 };
    q.named["B"] = { .gpus = 4, .borrow = false, .weight = 1 };
    return q;
}

sched::PsJobSpec tenant_job(int id, const char* tenant, int workers, int servers, std::int64_t iterations, double at)
{
    sched::PsJobSpec j = job(id, workers, servers, iterations, at);
    j.tenant = tenant;
    return j;
}

const sched::PsJobOutcome& outcome_of(const sched::ElasticResult& r, int id)
{
    for (const sched::PsJobOutcome& o : r.jobs)
        if (o.job.id == id)
            return o;
    throw std::out_of_range("no job " + std::to_string(id));
}

} // namespace

TEST(ElasticTenants, ABorrowerTakesIdleSlotsAndTheOwnersNewcomerReclaimsThem)
{
    // A's job asks for the whole cluster (8 slots, 4 beyond its quota) and gets it while B is
    // idle; B's job arrives once A's is past early feedback and takes its 4 back at once.
    sched::ElasticOptions o = options(ElasticPolicy::Eps);
    o.tenants = two_tenants();
    const double b_arrives = 2000;
    const auto r = sched::simulate_elastic(
        cluster(8), { tenant_job(0, "A", 4, 4, 20000, 0), tenant_job(1, "B", 2, 2, 500, b_arrives) }, o);
    ASSERT_EQ(r.jobs.size(), 2u);
    const sched::PsJobOutcome& a = outcome_of(r, 0);
    const sched::PsJobOutcome& b = outcome_of(r, 1);
    ASSERT_LT(a.feedback_s, b_arrives) << "the test needs A's job past its early feedback when B's arrives";
    EXPECT_EQ(a.peak_workers + a.peak_servers, 8) << "A borrowed B's idle quota";
    EXPECT_DOUBLE_EQ(b.start_s, b_arrives) << "B's job waited for nothing";
    EXPECT_EQ(a.reclaimed, 4) << "A gave back exactly what it borrowed";
    EXPECT_EQ(a.released, 0);
    EXPECT_EQ(b.peak_workers + b.peak_servers, 4);
    EXPECT_EQ(o.tenants.of("B").gpus, 4);
}

TEST(ElasticTenants, WithoutBorrowingATenantNeverHoldsMoreThanItsQuota)
{
    sched::ElasticOptions o = options(ElasticPolicy::Eps);
    o.tenants = two_tenants(false);
    const auto r = sched::simulate_elastic(cluster(8), { tenant_job(0, "A", 4, 4, 2000, 0) }, o);
    ASSERT_EQ(r.jobs.size(), 1u);
    EXPECT_EQ(r.jobs[0].peak_workers + r.jobs[0].peak_servers, 4) << "it starts within its quota and grows no further";
    EXPECT_LT(r.allocated_util, 0.51) << "the other 4 slots idle: B's quota, which nobody borrows";
}

TEST(ElasticTenants, ARigidBorrowerIsRequeuedFromACheckpointOrWaitedFor)
{
    // Static: no job resizes. A's job holds all 8 slots; B's arrives meanwhile.
    const auto run = [](sched::RigidBorrowers rigid) {
        sched::ElasticOptions o = options(ElasticPolicy::StaticFifo);
        o.tenants = two_tenants();
        o.tenants.rigid = rigid;
        return sched::simulate_elastic(
            cluster(8), { tenant_job(0, "A", 4, 4, 4000, 0), tenant_job(1, "B", 2, 2, 500, 100) }, o);
    };
    const auto waited = run(sched::RigidBorrowers::Wait);
    EXPECT_DOUBLE_EQ(outcome_of(waited, 1).start_s, outcome_of(waited, 0).finish_s) << "B waits for A's end";
    EXPECT_EQ(outcome_of(waited, 0).requeued, 0);

    const auto requeued = run(sched::RigidBorrowers::Requeue);
    const sched::PsJobOutcome& a = outcome_of(requeued, 0);
    EXPECT_DOUBLE_EQ(outcome_of(requeued, 1).start_s, 100) << "A stopped at a checkpoint for B";
    EXPECT_EQ(a.requeued, 1);
    EXPECT_EQ(a.reclaimed, 8) << "a rigid job gives all it holds";
    EXPECT_GT(a.paused_s, 0) << "its restart from the checkpoint costs";
    EXPECT_LT(a.finish_s, outcome_of(waited, 0).finish_s + outcome_of(requeued, 1).jct() + a.paused_s + 1)
        << "it went on from its checkpoint, not from the beginning";
    EXPECT_GT(a.finish_s, outcome_of(waited, 0).finish_s);
}

TEST(ElasticTenants, AJobItsTenantsQuotaCanNeverHoldIsRejectedNamingTheQuota)
{
    sched::ElasticOptions o = options(ElasticPolicy::StaticFifo);
    o.tenants = two_tenants();
    const auto r = sched::simulate_elastic(cluster(8), { tenant_job(0, "B", 4, 2, 100, 0) }, o);
    ASSERT_EQ(r.rejected.size(), 1u);
    EXPECT_EQ(r.rejected[0].reason, "needs 6 slots to start; tenant B's quota is 4 and it does not borrow");
}

TEST(ElasticTenants, OneTenantsBacklogDoesNotHoldUpAnotherTenantsJob)
{
    // Without quotas the queue is one FIFO: B's small job waits behind A's second large one.
    // With quotas each tenant has its own queue, and B's job starts in its quota at once.
    const std::vector<sched::PsJobSpec> jobs { tenant_job(0, "A", 2, 2, 3000, 0), tenant_job(1, "A", 3, 3, 1000, 10),
        tenant_job(2, "B", 1, 1, 100, 20) };
    sched::ElasticOptions fifo = options(ElasticPolicy::StaticFifo);
    const auto shared = sched::simulate_elastic(cluster(8), jobs, fifo);
    EXPECT_GT(outcome_of(shared, 2).start_s, 20);
    sched::ElasticOptions quotas = fifo;
    quotas.tenants = two_tenants();
    const auto separate = sched::simulate_elastic(cluster(8), jobs, quotas);
    EXPECT_DOUBLE_EQ(outcome_of(separate, 2).start_s, 20);
}

TEST(ElasticTenants, GeneratedJobsAreTheSameDealtToTenantsOrNot)
{
    const auto plain = sched::generate_ps_workload({ .jobs = 50, .seed = 3 });
    const auto dealt = sched::generate_ps_workload({ .jobs = 50, .seed = 3, .tenants = { { "x", 3 }, { "y", 1 } } });
    ASSERT_EQ(plain.size(), dealt.size());
    std::map<std::string, int> per_tenant;
    for (std::size_t i = 0; i < plain.size(); ++i) {
        EXPECT_EQ(plain[i].iterations, dealt[i].iterations);
        EXPECT_EQ(plain[i].arrival_s, dealt[i].arrival_s);
        EXPECT_EQ(plain[i].tenant, "default");
        ++per_tenant[dealt[i].tenant];
    }
    EXPECT_EQ(per_tenant.size(), 2u);
    EXPECT_GT(per_tenant["x"], per_tenant["y"]) << "dealt in proportion to the shares";
}
