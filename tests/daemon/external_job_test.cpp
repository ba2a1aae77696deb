// External framework jobs through fulcrumd's protocol, in process: ranks that join, report
// and receive their plans; operator commands reaching the ranks at the next barrier; a
// rank that goes away; bad reports. The PyTorch client's own tests (tests/torch) run the
// same protocol with real torch.distributed ranks against a real fulcrumd.

#include "daemon/daemon.h"
#include "daemon_support.h"
#include "db/run_reader.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <gtest/gtest.h>
#include <thread>
#include <unistd.h>

using namespace fulcrum;
using namespace fulcrum::protocol;
using testing_support::request_reply;
using testing_support::wait_for;

namespace {

// `timeouts`: the external section's timeout fields.
std::string external_job(int ranks, const std::string& policy, std::int64_t iterations,
    const std::string& timeouts = R"("rank_timeout_s": 30)")
{
    return R"({"name": "torch-job", "external": {"framework": "pytorch", )" + timeouts + R"(},
      "training": {"total_batch": 120, "iterations": )"
        + std::to_string(iterations) + R"(}, "policy": )" + policy + R"(, "workers": [{"name": "rank", "count": )"
        + std::to_string(ranks) + "}]}";
}

class ExternalJobTest : public ::testing::Test {
protected:
    std::filesystem::path dir
        = std::filesystem::temp_directory_path() / ("fulcrum-external-" + std::to_string(::getpid()));
    void SetUp() override { std::filesystem::create_directories(dir); }
    void TearDown() override { std::filesystem::remove_all(dir); }
    daemon::DaemonOptions options() const
    {
        daemon::DaemonOptions o;
        o.data_dir = dir;
        return o;
    }
};

struct Rank {
    std::shared_ptr<serve::Client> client;
    std::vector<ServerMessage> seen;
    WorkerId rank = 0;
    int sent = 0;

    Reply request(daemon::Daemon& d, ClientMessage m) { return request_reply(d, *client, seen, encode(m)); }
    // A report that comes after the rank was lost (a SIGCONT): the reply it gets.
    Reply late_report(daemon::Daemon& d, JobId job, std::int64_t iteration, std::int32_t batch)
    {
        ReportIteration r;
        r.id = "late";
        r.job = job;
        r.rank = rank;
        r.iteration = iteration;
        r.batch_size = batch;
        return request(d, r);
    }
    // Reports `iteration` with a batch computed at `speed` samples/s; returns the plan. A ready
    // report (iteration -1) of a restarted group says where its checkpoint goes on from.
    RankPlan report(daemon::Daemon& d, JobId job, std::int64_t iteration, std::int32_t batch, double speed,
        std::optional<std::int64_t> resume_from = std::nullopt)
    {
        ReportIteration r;
        r.resume_from = resume_from;
        r.id = "r" + std::to_string(rank) + "-" + std::to_string(sent++);
        r.job = job;
        r.rank = rank;
        r.iteration = iteration;
        r.batch_size = batch;
        r.compute_s = batch / speed;
        r.sync_s = 0.001;
        r.loss = 1.0 / static_cast<double>(iteration + 2);
        d.receive(*client, encode(ClientMessage { r }));
        std::optional<RankPlan> plan;
        EXPECT_TRUE(wait_for(*client, seen, [&](const ServerMessage& m) {
            const auto* reply = std::get_if<Reply>(&m);
            if (reply && reply->id == r.id) {
                EXPECT_FALSE(reply->error) << reply->error->message;
                plan = reply->plan.value_or(RankPlan { "no plan", 0, {}, {}, "", {} });
            }
            return plan.has_value();
        }));
        return plan.value_or(RankPlan { "no reply", 0, {}, {}, "", {} });
    }
};

// Each rank on its own thread, as the framework's processes would be.
template <class Body> void each_rank(std::vector<Rank>& ranks, Body body)
{
    std::vector<std::thread> threads;
    for (Rank& r : ranks)
        threads.emplace_back([&r, &body] { body(r); });
    for (std::thread& t : threads)
        t.join();
}

// An operator connection that said hello and follows every stream.
std::shared_ptr<serve::Client> operator_of(daemon::Daemon& d)
{
    auto op = d.connect(Role::Operator, "op");
    d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    d.receive(*op, encode(ClientMessage { Subscribe { "all", {}, std::nullopt, {} } }));
    return op;
}

JobId submit(daemon::Daemon& d, serve::Client& op, std::vector<ServerMessage>& seen, const std::string& scenario)
{
    const Reply reply = request_reply(d, op, seen, encode(ClientMessage { SubmitJob { "submit", scenario } }));
    EXPECT_FALSE(reply.error) << reply.error->message;
    return reply.job.value_or(0);
}

std::vector<Rank> join_ranks(daemon::Daemon& d, JobId job, int count)
{
    std::vector<Rank> ranks(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
        Rank& r = ranks[static_cast<std::size_t>(i)];
        r.client = d.connect(Role::Worker, "rank " + std::to_string(i));
        r.rank = i;
        d.receive(*r.client, encode(ClientMessage { Hello { kProtocolVersion, "fulcrum_torch test" } }));
        const Reply joined = r.request(d, JoinJob { "join", job, i, "host-" + std::to_string(i) });
        EXPECT_FALSE(joined.error) << joined.error->message;
        EXPECT_EQ(joined.assignment.value_or(WorkerAssignment {}).worker, i);
    }
    return ranks;
}

// `count` ranks joined, ready, and through iteration 0 at batches of 40.
std::vector<Rank> ranks_past_iteration_0(daemon::Daemon& d, JobId job, int count)
{
    std::vector<Rank> ranks = join_ranks(d, job, count);
    each_rank(ranks, [&](Rank& r) { r.report(d, job, -1, 0, 1000); });
    each_rank(ranks, [&](Rank& r) { r.report(d, job, 0, 40, 1000); });
    return ranks;
}

// The job's first event of `kind` on the operator's streams (none after the wait's limit).
std::optional<EventRecord> first_event(
    serve::Client& op, std::vector<ServerMessage>& seen, JobId job, const std::string& kind)
{
    std::optional<EventRecord> found;
    EXPECT_TRUE(wait_for(op, seen,
        [&](const ServerMessage& m) {
            if (const auto* e = std::get_if<Event>(&m); e && e->event.job == job && e->event.kind == kind)
                found = e->event;
            return found.has_value();
        }))
        << "no " << kind << " event";
    return found;
}

} // namespace

// LB-BSP Algorithm 1 on three ranks whose speeds are 1 : 1 : 1/3: the slow rank's share
// shrinks until the iteration is balanced; every iteration of every rank is recorded. The
// job says its epoch is 600 samples, so its summary counts 30 x 120 / 600 = 6 epochs.
TEST_F(ExternalJobTest, RanksGetBalancedBatchSizesAndEveryReportIsRecorded)
{
    daemon::Daemon d(options());
    std::vector<ServerMessage> seen;
    auto op = operator_of(d);
    const JobId job = submit(d, *op, seen,
        external_job(3, R"({"type": "lbbsp-cpu", "predictor": {"type": "memoryless"}})", 30,
            R"("rank_timeout_s": 30, "samples_per_epoch": 600)"));
    std::vector<Rank> ranks = join_ranks(d, job, 3);
    std::vector<std::vector<std::int32_t>> sizes(3);
    each_rank(ranks, [&](Rank& r) {
        const double speed = r.rank == 2 ? 1000.0 : 3000.0;
        RankPlan plan = r.report(d, job, -1, 0, speed);
        while (plan.state == "train") {
            const std::int32_t mine = plan.batch_sizes.at(static_cast<std::size_t>(r.rank));
            sizes[static_cast<std::size_t>(r.rank)].push_back(mine);
            plan = r.report(d, job, plan.iteration, mine, speed);
        }
        EXPECT_EQ(plan.state, "finished") << plan.message;
    });
    EXPECT_EQ(sizes[0].front(), 40) << "uniform to start";
    EXPECT_NEAR(sizes[2].back(), 120.0 / 7, 2) << "a third of a fast rank's share: 120 x 1/7";
    EXPECT_EQ(sizes[0].back() + sizes[1].back() + sizes[2].back(), 120);

    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        const auto* u = std::get_if<JobUpdate>(&m);
        return u && u->status.job == job && u->status.state == JobState::Finished;
    }));
    d.stop_all();
    db::RunReader reader(dir / "runs" / ("job-" + std::to_string(job) + ".db"));
    const auto rows = reader.iterations(reader.runs().back().id, job);
    EXPECT_EQ(rows.size(), 90u);
    EXPECT_EQ(rows.back().batch_size, sizes[2].back());
    EXPECT_EQ(reader.runs().back().status, "finished");
    EXPECT_NE(reader.runs().back().summary_json.find(R"("epochs":6)"), std::string::npos)
        << reader.runs().back().summary_json;
}

// Pause holds the ranks' next plan; a pin and an exclusion made meanwhile are in that plan.
// An excluded rank gets 0 (its gradient weighs nothing in eq. 7) and the others share X.
TEST_F(ExternalJobTest, PinsAndExclusionsReachTheRanksAtTheNextBarrier)
{
    daemon::Daemon d(options());
    std::vector<ServerMessage> seen;
    auto op = operator_of(d);
    const JobId job = submit(d, *op, seen, external_job(3, R"({"type": "uniform"})", 1000));
    std::vector<Rank> ranks = join_ranks(d, job, 3);
    std::vector<RankPlan> plans(3);
    each_rank(ranks, [&](Rank& r) { plans[static_cast<std::size_t>(r.rank)] = r.report(d, job, -1, 0, 1000); });
    ASSERT_EQ(plans[0].batch_sizes, (std::vector<std::int32_t> { 40, 40, 40 }));

    EXPECT_FALSE(
        request_reply(d, *op, seen, encode(ClientMessage { JobCommand { "p", JobAction::Pause, job } })).error);
    std::thread ranks_report([&] {
        each_rank(ranks, [&](Rank& r) { plans[static_cast<std::size_t>(r.rank)] = r.report(d, job, 0, 40, 1000); });
    });
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        const auto* e = std::get_if<Event>(&m);
        return e && e->event.kind == "job-paused";
    }));
    WorkerCommand pin { "pin", WorkerAction::Pin, job, 0, 70, std::nullopt, 1 };
    EXPECT_FALSE(request_reply(d, *op, seen, encode(ClientMessage { pin })).error);
    WorkerCommand exclude { "ex", WorkerAction::Exclude, job, 2, 0, std::nullopt, 1 };
    EXPECT_FALSE(request_reply(d, *op, seen, encode(ClientMessage { exclude })).error);
    // set-sync-model is the framework's: refused, the job goes on.
    const Reply sync = request_reply(
        d, *op, seen, encode(ClientMessage { ChangeJob { "s", JobSetting::SyncModel, job, "\"asp\"" } }));
    ASSERT_TRUE(sync.error);
    EXPECT_EQ(sync.error->code, "sync-model-not-switchable");
    EXPECT_FALSE(
        request_reply(d, *op, seen, encode(ClientMessage { JobCommand { "r", JobAction::Resume, job } })).error);
    ranks_report.join();
    EXPECT_EQ(plans[1].iteration, 1);
    EXPECT_EQ(plans[1].batch_sizes, (std::vector<std::int32_t> { 70, 50, 0 })) << "pinned, the rest, excluded";

    // A report of the wrong iteration, or for a rank this connection does not hold.
    ReportIteration wrong;
    wrong.id = "wrong";
    wrong.job = job;
    wrong.rank = 0;
    wrong.iteration = 5;
    const Reply refused = ranks[0].request(d, wrong);
    ASSERT_TRUE(refused.error);
    EXPECT_EQ(refused.error->code, "wrong-iteration");
    wrong.rank = 1;
    const Reply not_joined = ranks[0].request(d, wrong);
    ASSERT_TRUE(not_joined.error);
    EXPECT_EQ(not_joined.error->code, "not-joined");
    d.stop_all();
}

// A rank whose connection closes is lost: the others waiting at the barrier are told at
// once, the job is "lost", and every row recorded before stays.
TEST_F(ExternalJobTest, ALostRankEndsTheJobAndNoOtherRankWaits)
{
    daemon::Daemon d(options());
    std::vector<ServerMessage> seen;
    auto op = operator_of(d);
    const JobId job = submit(d, *op, seen, external_job(3, R"({"type": "uniform"})", 1000));
    std::vector<Rank> ranks = join_ranks(d, job, 3);
    std::vector<RankPlan> last(3);
    each_rank(ranks, [&](Rank& r) {
        RankPlan plan = r.report(d, job, -1, 0, 1000);
        for (std::int64_t k = 0; plan.state == "train"; ++k) {
            if (r.rank == 1 && k == 5) {
                d.disconnect(*r.client); // killed before reporting iteration 5
                return;
            }
            plan = r.report(d, job, plan.iteration, 40, 1000);
        }
        last[static_cast<std::size_t>(r.rank)] = plan;
    });
    EXPECT_EQ(last[0].state, "lost");
    EXPECT_NE(last[2].message.find("rank 1 (rank-1) lost at iteration 5"), std::string::npos) << last[2].message;
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        const auto* u = std::get_if<JobUpdate>(&m);
        return u && u->status.job == job && u->status.state == JobState::Lost;
    }));
    // A lost rank cannot come back into the job.
    Rank again;
    again.client = d.connect(Role::Worker, "again");
    d.receive(*again.client, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    const Reply rejoin = again.request(d, JoinJob { "j", job, 1, "" });
    ASSERT_TRUE(rejoin.error);
    EXPECT_EQ(rejoin.error->code, "rank-lost");
    d.stop_all();
    db::RunReader reader(dir / "runs" / ("job-" + std::to_string(job) + ".db"));
    const RunId run = reader.runs().back().id;
    EXPECT_EQ(reader.runs().back().status, "lost");
    EXPECT_EQ(reader.iterations(run, job).size(), 15u) << "iterations 0 to 4 of three ranks";
    const auto events = reader.events(run);
    EXPECT_TRUE(std::any_of(
        events.begin(), events.end(), [](const EventRecord& e) { return e.kind == "worker-lost" && e.worker == 1; }));
}

// Issue 43 item 4, as torchrun --max_restarts 1 runs a job: a lost rank ends the attempt (its
// run recorded lost) but not the job, which says why and waits for its ranks to join again;
// the restarted group's processes join the same job and go on from their own checkpoint, in
// a new run of the same store. The first group's survivor holds nothing any more.
TEST_F(ExternalJobTest, ARestartedGroupRejoinsTheSameJobAndGoesOnFromItsCheckpoint)
{
    daemon::Daemon d(options());
    std::vector<ServerMessage> seen;
    auto op = operator_of(d);
    const JobId job = submit(
        d, *op, seen, external_job(2, R"({"type": "uniform"})", 12, R"("rank_timeout_s": 30, "max_restarts": 1)"));
    std::vector<Rank> first = join_ranks(d, job, 2);
    each_rank(first, [&](Rank& r) {
        RankPlan plan = r.report(d, job, -1, 0, 1000);
        while (plan.state == "train") {
            if (r.rank == 1 && plan.iteration == 6) {
                d.disconnect(*r.client); // killed: torchrun stops the group and starts it again
                return;
            }
            plan = r.report(d, job, plan.iteration, 60, 1000);
        }
        EXPECT_EQ(plan.state, "lost") << "the attempt is over for its survivor";
    });
    const std::optional<EventRecord> restarted = first_event(*op, seen, job, "job-restarted");
    ASSERT_TRUE(restarted);
    EXPECT_NE(restarted->message.find("rank 1 (rank-1) lost at iteration 6"), std::string::npos) << restarted->message;
    EXPECT_NE(restarted->message.find("restart 1 of 1: waiting for its 2 ranks to join again"), std::string::npos)
        << restarted->message;
    for (const JobStatus& s : d.jobs())
        if (s.job == job) {
            EXPECT_EQ(s.state, JobState::Running) << s.message;
        }

    std::vector<Rank> second = join_ranks(d, job, 2); // the restarted processes
    std::vector<std::int64_t> from(2, -1);
    each_rank(second, [&](Rank& r) {
        RankPlan plan = r.report(d, job, -1, 0, 1000, 4); // their checkpoint: after iteration 3
        from[static_cast<std::size_t>(r.rank)] = plan.iteration;
        while (plan.state == "train")
            plan = r.report(d, job, plan.iteration, 60, 1000);
        EXPECT_EQ(plan.state, "finished") << plan.message;
    });
    EXPECT_EQ(from, (std::vector<std::int64_t> { 4, 4 })) << "rank 0's checkpoint: iteration 4 on";
    const Reply stale = first[0].late_report(d, job, 6, 60);
    ASSERT_FALSE(stale.error) << stale.error->message;
    ASSERT_TRUE(stale.plan);
    EXPECT_EQ(stale.plan->state, "lost") << "the first group's survivor, late, hears how its attempt ended";
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        const auto* u = std::get_if<JobUpdate>(&m);
        return u && u->status.job == job && u->status.state == JobState::Finished;
    }));
    d.stop_all();

    db::RunReader reader(dir / "runs" / ("job-" + std::to_string(job) + ".db"));
    const auto runs = reader.runs();
    ASSERT_EQ(runs.size(), 2u) << "one run per attempt";
    EXPECT_EQ(runs[0].status, "lost");
    EXPECT_EQ(runs[0].id + 1, runs[1].id);
    const auto rows = reader.iterations(runs[1].id, job);
    ASSERT_EQ(rows.size(), 16u) << "iterations 4 to 11 of two ranks";
    EXPECT_EQ(rows.front().iteration, 4);
    const auto events = reader.events(runs[1].id);
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.front().kind, "job-restarted") << "the attempt's run says why it exists";
}

// Ranks that would resume from different iterations (a state folder not shared between their
// hosts) would train diverged replicas: the job fails, saying which ranks disagree.
TEST_F(ExternalJobTest, RanksThatWouldResumeFromDifferentIterationsFailTheJob)
{
    daemon::Daemon d(options());
    std::vector<ServerMessage> seen;
    auto op = operator_of(d);
    const JobId job = submit(d, *op, seen, external_job(2, R"({"type": "uniform"})", 12));
    std::vector<Rank> ranks = join_ranks(d, job, 2);
    std::vector<RankPlan> first(2);
    each_rank(ranks,
        [&](Rank& r) { first[static_cast<std::size_t>(r.rank)] = r.report(d, job, -1, 0, 1000, r.rank == 0 ? 4 : 0); });
    EXPECT_EQ(first[0].state, "stopped");
    EXPECT_NE(first[1].message.find("the ranks would resume from different iterations: rank 0 (rank-0) from 4, "
                                    "rank 1 (rank-1) from 0"),
        std::string::npos)
        << first[1].message;
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        const auto* u = std::get_if<JobUpdate>(&m);
        return u && u->status.job == job && u->status.state == JobState::Failed;
    }));
    d.stop_all();
}

// A rank that heartbeats (protocol 3) is alive while it sends anything, report or heartbeat,
// however long its iteration takes; silent for the worker timeout (a SIGSTOP, a hung host),
// it is lost even though no rank could report (its peers wait for it in their all-reduce),
// its connection is closed saying why, and the job ends lost.
TEST_F(ExternalJobTest, ARankSilentForTheWorkerTimeoutIsLostWithoutAnyReport)
{
    daemon::Daemon d(options());
    std::vector<ServerMessage> seen;
    auto op = operator_of(d);
    std::string scenario = external_job(2, R"({"type": "uniform"})", 100);
    scenario.insert(1, R"("worker_timeout_s": 3, )");
    const JobId job = submit(d, *op, seen, scenario);
    std::vector<Rank> ranks = join_ranks(d, job, 2);
    std::vector<RankPlan> first(2);
    each_rank(ranks, [&](Rank& r) { first[static_cast<std::size_t>(r.rank)] = r.report(d, job, -1, 0, 1000); });
    ASSERT_EQ(first[0].state, "train");

    // A long iteration (an evaluation, say): heartbeats only, for longer than the timeout.
    for (int beat = 0; beat < 9; ++beat) {
        for (Rank& r : ranks)
            d.receive(*r.client, encode(ClientMessage { Heartbeat {} }));
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    std::vector<RankPlan> second(2);
    each_rank(ranks, [&](Rank& r) { second[static_cast<std::size_t>(r.rank)] = r.report(d, job, 0, 50, 1000); });
    EXPECT_EQ(second[0].state, "train") << "4.5 s of heartbeats are not a lost rank";

    // Then it stops: neither a report nor a heartbeat. Rank 0 reports and waits.
    std::string closed_for;
    ranks[1].client->set_closer([&closed_for](const std::string& reason) { closed_for = reason; });
    const auto stopped = std::chrono::steady_clock::now();
    const RankPlan plan = ranks[0].report(d, job, 1, 50, 1000);
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count();
    EXPECT_EQ(plan.state, "lost");
    EXPECT_NE(plan.message.find("silent for 3 s"), std::string::npos) << plan.message;
    EXPECT_GE(waited, 2.5) << "lost only once silent for the timeout";
    EXPECT_LT(waited, 6.0);
    EXPECT_NE(closed_for.find("rank 1 of job " + std::to_string(job) + " was silent for 3 s"), std::string::npos)
        << closed_for;
    // Its report, if it ever comes (a SIGCONT), is answered with why it was lost.
    const Reply refused = ranks[1].late_report(d, job, 1, 50);
    ASSERT_TRUE(refused.error);
    EXPECT_EQ(refused.error->code, "rank-lost");
    EXPECT_NE(refused.error->message.find("silent for 3 s"), std::string::npos) << refused.error->message;
    d.stop_all();
}

// Issue 43: rank 0 evaluates before it reports, for longer than the rank timeout after its
// plan. An evaluation the rank announced (fulcrum_torch's job.evaluating()) does not count
// against it, however long; an unannounced delay of the same length still loses the rank.
TEST_F(ExternalJobTest, AnAnnouncedEvaluationLongerThanTheRankTimeoutKeepsTheRank)
{
    daemon::Daemon d(options());
    std::vector<ServerMessage> seen;
    auto op = operator_of(d);
    const JobId job = submit(d, *op, seen, external_job(2, R"({"type": "uniform"})", 100, R"("rank_timeout_s": 2)"));
    std::vector<Rank> ranks = join_ranks(d, job, 2);
    each_rank(ranks, [&](Rank& r) { r.report(d, job, -1, 0, 1000); });
    const auto beat
        = [&](Rank& r, bool evaluating) { d.receive(*r.client, encode(ClientMessage { Heartbeat { evaluating } })); };
    for (Rank& r : ranks)
        beat(r, false); // both clients heartbeat, as fulcrum_torch's do

    std::vector<RankPlan> plans(2);
    beat(ranks[0], true); // announced before rank 1 reports, as rank 0 evaluates before its report
    each_rank(ranks, [&](Rank& r) {
        if (r.rank == 0) { // evaluates for 2.5 rank timeouts (well within the worker timeout)
            std::this_thread::sleep_for(std::chrono::milliseconds(5000));
            beat(r, false);
        }
        plans[static_cast<std::size_t>(r.rank)] = r.report(d, job, 0, 60, 1000);
    });
    EXPECT_EQ(plans[0].state, "train") << plans[0].message;
    EXPECT_EQ(plans[1].state, "train") << plans[1].message;

    // The same delay unannounced: rank 0 is lost one rank timeout after its plan, heartbeats
    // or not.
    std::thread evaluating_silently([&] {
        for (int i = 0; i < 10; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(500));
            beat(ranks[0], false);
        }
    });
    const RankPlan lost = ranks[1].report(d, job, 1, 60, 1000);
    evaluating_silently.join();
    EXPECT_EQ(lost.state, "lost");
    EXPECT_NE(lost.message.find("did not report iteration 1 within 2 s of its plan"), std::string::npos)
        << lost.message;
    const Reply refused = ranks[0].late_report(d, job, 1, 60);
    ASSERT_TRUE(refused.error);
    EXPECT_EQ(refused.error->code, "rank-lost");
    d.stop_all();
}

// Issue 42's stall detection for an external job: a rank that has neither reported nor said
// it waits in its framework's all-reduce, past its limit (5 x its predicted time, at least
// 2 s) after its plan, is recorded stalled; its peers, which say they wait in the
// collective, are not; when it reports, it has recovered. Nothing is lost.
TEST_F(ExternalJobTest, ARankThatNeitherReportsNorWaitsInTheCollectiveIsStalled)
{
    daemon::Daemon d(options());
    std::vector<ServerMessage> seen;
    auto op = operator_of(d);
    const JobId job = submit(d, *op, seen, external_job(3, R"({"type": "uniform"})", 100));
    std::vector<Rank> ranks = ranks_past_iteration_0(d, job, 3); // measured: 40 samples in 0.04 s
    const auto beat = [&](Rank& r, bool collective) {
        d.receive(*r.client, encode(ClientMessage { Heartbeat { false, collective } }));
    };
    std::vector<RankPlan> plans(3);
    std::thread iteration([&] {
        each_rank(ranks, [&](Rank& r) {
            for (int i = 0; i < 6; ++i) { // 3 s: ranks 0 and 2 wait in the all-reduce for rank 1
                beat(r, r.rank != 1);
                std::this_thread::sleep_for(std::chrono::milliseconds(500));
            }
            // As fulcrum_torch does: still said to wait in the collective when the report goes.
            plans[static_cast<std::size_t>(r.rank)] = r.report(d, job, 1, 40, 1000);
        });
    });
    std::optional<EventRecord> stalled, recovered;
    EXPECT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        if (const auto* e = std::get_if<Event>(&m); e && e->event.job == job) {
            if (e->event.kind == "worker-stalled") {
                EXPECT_FALSE(stalled) << "a second stall: " << e->event.message;
                stalled = e->event;
            }
            if (e->event.kind == "worker-recovered")
                recovered = e->event;
        }
        return recovered.has_value();
    }));
    iteration.join();
    ASSERT_TRUE(stalled);
    EXPECT_EQ(stalled->worker, 1);
    EXPECT_EQ(stalled->iteration, 1);
    EXPECT_NE(stalled->message.find("rank 1 (rank-1) stalled: its batch of 40 has taken 2"), std::string::npos)
        << stalled->message;
    EXPECT_NE(stalled->message.find("predicted 0.04 s"), std::string::npos) << stalled->message;
    ASSERT_TRUE(recovered);
    EXPECT_EQ(recovered->worker, 1);
    for (const RankPlan& p : plans)
        EXPECT_EQ(p.state, "train") << p.message;
    d.stop_all();
}

// A rank hung in its own code keeps heartbeating, and its peers wait in the all-reduce, so
// no rank reports: the rank timeout runs from each rank's plan (issue 43 item 3), so it
// loses the hung rank, not the peers that said they wait for it in the collective.
TEST_F(ExternalJobTest, ARankTimeoutRunsFromItsPlanWhenNoRankReports)
{
    daemon::Daemon d(options());
    std::vector<ServerMessage> seen;
    auto op = operator_of(d);
    const JobId job = submit(d, *op, seen, external_job(3, R"({"type": "uniform"})", 100, R"("rank_timeout_s": 2)"));
    std::vector<Rank> ranks = ranks_past_iteration_0(d, job, 3);
    const auto beat = [&](Rank& r, bool collective) {
        d.receive(*r.client, encode(ClientMessage { Heartbeat { false, collective } }));
    };
    std::atomic<bool> over { false };
    std::thread hung([&] { // rank 1: alive, heartbeating, never done with its batch
        while (!over.load()) {
            for (Rank& r : ranks)
                beat(r, r.rank != 1);
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
        }
    });
    const std::optional<EventRecord> lost = first_event(*op, seen, job, "worker-lost");
    over = true;
    hung.join();
    ASSERT_TRUE(lost);
    EXPECT_EQ(lost->worker, 1);
    EXPECT_NE(lost->message.find("did not report iteration 1 within 2 s of its plan"), std::string::npos)
        << lost->message;
    // A peer that reports now (its all-reduce given up) hears that the job is lost.
    const RankPlan plan = ranks[0].report(d, job, 1, 40, 1000);
    EXPECT_EQ(plan.state, "lost");
    d.stop_all();
}

// Issue 43 item 3 with clients that say nothing but their reports (no heartbeat, no word of
// the collective: a loop of one's own, an older client): a rank that stalls before its
// all-reduce holds every peer's report back, and the rank timeout, counted from each rank's
// plan, still ends the wait. Counted from the first report, it never started.
TEST_F(ExternalJobTest, ARankTimeoutEndsTheWaitWhenNoRankReportsOrSaysWhy)
{
    daemon::Daemon d(options());
    std::vector<ServerMessage> seen;
    auto op = operator_of(d);
    const JobId job = submit(d, *op, seen, external_job(2, R"({"type": "uniform"})", 100, R"("rank_timeout_s": 2)"));
    std::vector<Rank> ranks = ranks_past_iteration_0(d, job, 2);
    // Neither rank reports iteration 1: rank 1 hangs, rank 0 waits for it in the all-reduce.
    const std::optional<EventRecord> lost = first_event(*op, seen, job, "worker-lost");
    ASSERT_TRUE(lost);
    EXPECT_NE(lost->message.find("did not report iteration 1 within 2 s of its plan"), std::string::npos)
        << lost->message;
    d.stop_all();
}

// A rank stuck in an announced evaluation keeps heartbeating: external.evaluation_timeout_s
// loses it all the same.
TEST_F(ExternalJobTest, AnEvaluationPastItsLimitLosesTheRank)
{
    daemon::Daemon d(options());
    std::vector<ServerMessage> seen;
    auto op = operator_of(d);
    const JobId job = submit(d, *op, seen,
        external_job(2, R"({"type": "uniform"})", 100, R"("rank_timeout_s": 1, "evaluation_timeout_s": 2)"));
    std::vector<Rank> ranks = join_ranks(d, job, 2);
    each_rank(ranks, [&](Rank& r) { r.report(d, job, -1, 0, 1000); });
    d.receive(*ranks[0].client, encode(ClientMessage { Heartbeat { true } }));
    const auto asked = std::chrono::steady_clock::now();
    std::atomic<bool> reported { false };
    std::thread hung([&] { // evaluating for ever, heartbeats and all
        while (!reported) {
            d.receive(*ranks[0].client, encode(ClientMessage { Heartbeat { true } }));
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
    });
    const RankPlan lost = ranks[1].report(d, job, 0, 60, 1000);
    reported = true;
    hung.join();
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
    EXPECT_EQ(lost.state, "lost");
    EXPECT_NE(lost.message.find("evaluated for more than 2 s"), std::string::npos) << lost.message;
    EXPECT_GE(waited, 1.9);
    d.stop_all();
}

// Bad input: a scenario section that belongs to the framework, a protocol-1 client's report.
TEST_F(ExternalJobTest, BadExternalJobsAndOldClientsAreRefusedByName)
{
    daemon::Daemon d(options());
    auto op = d.connect(Role::Operator, "op");
    std::vector<ServerMessage> seen;
    d.receive(*op, encode(ClientMessage { Hello { 1, "an old console" } }));
    const Reply with_model = request_reply(d, *op, seen,
        encode(ClientMessage { SubmitJob { "m",
            R"({"external": {}, "model": {"type": "mlp"}, "training": {"total_batch": 8, "iterations": 2},
                "workers": [{"count": 2}]})" } }));
    ASSERT_TRUE(with_model.error);
    EXPECT_EQ(with_model.error->field, "model");
    const Reply asp = request_reply(d, *op, seen,
        encode(ClientMessage { SubmitJob { "a",
            R"({"external": {}, "sync": "asp", "training": {"total_batch": 8, "iterations": 2}, "workers": [{}]})" } }));
    ASSERT_TRUE(asp.error);
    EXPECT_EQ(asp.error->field, "sync");
    const JobId job = submit(d, *op, seen, external_job(2, R"({"type": "uniform"})", 5));
    ReportIteration ready;
    ready.id = "old";
    ready.job = job;
    const Reply old = request_reply(d, *op, seen, encode(ClientMessage { ready }));
    ASSERT_TRUE(old.error);
    EXPECT_EQ(old.error->code, "version-too-old");
    d.stop_all();
}

// external.plan_ahead 2 (issue 43, for a DataLoader that prefetches): every plan also
// carries the sizes of the next two iterations, which the next plans keep to; LB-BSP sizes
// iteration k + 3 from the reports of k, so the slow rank's share first shrinks at iteration
// 3, and every rank trained what its plans said. An operator's pin first shows in a plan two
// iterations on, and its event is marked at that iteration (stop 55's review, finding 5).
TEST_F(ExternalJobTest, PlansAheadCarryTheSizesOfTheNextIterationsAndKeepToThem)
{
    daemon::Daemon d(options());
    std::vector<ServerMessage> seen;
    auto op = operator_of(d);
    const JobId job = submit(d, *op, seen,
        external_job(3, R"({"type": "lbbsp-cpu", "predictor": {"type": "memoryless"}})", 12,
            R"("rank_timeout_s": 30, "plan_ahead": 2)"));
    std::vector<Rank> ranks = join_ranks(d, job, 3);
    std::vector<std::vector<RankPlan>> plans(3);
    std::string running_status = "never read";
    each_rank(ranks, [&](Rank& r) {
        const double speed = r.rank == 2 ? 1000.0 : 3000.0;
        RankPlan plan = r.report(d, job, -1, 0, speed);
        while (plan.state == "train") {
            if (r.rank == 0 && plan.iteration == 5) {
                for (const JobStatus& s : d.jobs())
                    if (s.job == job)
                        running_status = s.message;
                const WorkerCommand pin { "pin", WorkerAction::Pin, job, 1, 33, std::nullopt, 1 };
                EXPECT_FALSE(request_reply(d, *op, seen, encode(ClientMessage { pin })).error);
            }
            plans[static_cast<std::size_t>(r.rank)].push_back(plan);
            plan = r.report(d, job, plan.iteration, plan.batch_sizes.at(static_cast<std::size_t>(r.rank)), speed);
        }
        EXPECT_EQ(plan.state, "finished") << plan.message;
    });
    const std::vector<RankPlan>& mine = plans[0];
    ASSERT_EQ(mine.size(), 12u);
    for (std::size_t k = 0; k < mine.size(); ++k) {
        EXPECT_EQ(mine[k].ahead.size(), std::min<std::size_t>(2, 11 - k)) << "none past the last iteration";
        for (std::size_t j = 0; j < mine[k].ahead.size(); ++j)
            EXPECT_EQ(mine[k].ahead[j], mine[k + 1 + j].batch_sizes)
                << "iteration " << k + 1 + j << " as planned at " << k;
        EXPECT_EQ(plans[1][k], mine[k]) << "every rank is sent the same plan";
    }
    for (std::size_t k = 0; k < 3; ++k)
        EXPECT_EQ(mine[k].batch_sizes, (std::vector<std::int32_t> { 40, 40, 40 }))
            << "the initial sizes, planned ahead";
    EXPECT_LT(mine[3].batch_sizes[2], 40) << "sized from the reports of iteration 0";
    EXPECT_EQ(running_status.find("waiting for"), std::string::npos)
        << "once its ranks train, the job's status no longer says it waits for them: " << running_status;
    const auto pinned
        = std::find_if(mine.begin(), mine.end(), [](const RankPlan& p) { return p.batch_sizes.at(1) == 33; });
    ASSERT_NE(pinned, mine.end()) << "the pin took effect";
    EXPECT_GT(pinned->iteration, 6) << "planned ahead: the pin waits for the plans already sent";

    // An unknown depth is refused by name.
    const Reply refused = request_reply(d, *op, seen,
        encode(ClientMessage {
            SubmitJob { "bad", external_job(3, R"({"type": "uniform"})", 5, R"("plan_ahead": 17)") } }));
    ASSERT_TRUE(refused.error);
    EXPECT_EQ(refused.error->field, "external.plan_ahead");
    const Reply restarts = request_reply(d, *op, seen,
        encode(ClientMessage {
            SubmitJob { "bad", external_job(3, R"({"type": "uniform"})", 5, R"("max_restarts": 101)") } }));
    ASSERT_TRUE(restarts.error);
    EXPECT_EQ(restarts.error->field, "external.max_restarts");
    d.stop_all();
    db::RunReader reader(dir / "runs" / ("job-" + std::to_string(job) + ".db"));
    const auto events = reader.events(reader.runs().back().id);
    const auto pin_event
        = std::find_if(events.begin(), events.end(), [](const EventRecord& e) { return e.kind == "pin"; });
    ASSERT_NE(pin_event, events.end());
    EXPECT_EQ(pin_event->iteration, pinned->iteration) << "marked where it applies, not where it was decided";
}
