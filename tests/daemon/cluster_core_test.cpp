// Issue 41 item 6: the cluster core's elastic scheduling, deterministically. The scheduler
// (daemon::ElasticScheduling with the real cluster book, worker pool and EPS rules) runs on
// a test clock, its ticks given instants, and sees jobs whose barriers the test steps: each
// applies the resizes asked of it at its next barrier, as a trainer does, and paces itself
// as uniform BSP does (n members at the slowest member's speed), so every decision falls at
// an iteration the test can name. The same decisions with real trainers, threads and wall
// time are LiveElasticTest's.

#include "daemon/cluster_book.h"
#include "daemon/elastic_job.h"
#include "daemon/elastic_scheduling.h"
#include "daemon/placement_pass.h"
#include "daemon/remote_pool.h"
#include "daemon/worker_pool.h"
#include "protocol/codec.h"
#include "scenario/job_footprint.h"
#include "scenario/scenario.h"
#include "serve/stream_hub.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <gtest/gtest.h>
#include <optional>

using namespace fulcrum;
using daemon::ElasticScheduling;
using protocol::ResizeJob;

namespace {

// A job of these tests: a parsed scenario (its slots and elastic bounds), the record of its
// members and servers that the one resize check reads (ElasticJob::resolve), the resizes
// asked of it made at its next barrier, and its pace.
class SteppedJob : public daemon::ElasticJob {
public:
    // `remote`: its workers are fulcrum-worker processes (a real-mode job), fed by the pool.
    SteppedJob(JobId id, const std::string& elastic, std::vector<double> speeds, const std::string& extra = "",
        bool remote = false)
        : id_(id)
        , speeds_(std::move(speeds))
    {
        std::string workers;
        for (const double s : speeds_)
            workers += std::string(workers.empty() ? "" : ", ") + R"({"speed": )" + std::to_string(s)
                + (remote ? R"(, "remote": true})" : "}");
        scenario_ = scenario::parse_scenario(R"({"name": "stepped", "mode": ")"
                + std::string(remote ? "real" : "virtual") + R"(", "seed": 1,
          "data": {"source": "synthetic", "train_size": 600, "test_size": 100, "dim": 8, "classes": 3},
          "model": {"type": "softmax"}, "policy": {"type": "uniform"},
          "training": {"total_batch": 48, "iterations": 100, "eval_interval": 1000},
          "workers": [)"
                + workers + "]" + (elastic.empty() ? "" : ", " + elastic) + extra + "}",
            "stepped");
        const auto& e = scenario_.elastic;
        members_.assign(speeds_.size(), false);
        std::fill_n(members_.begin(),
            std::min<std::size_t>(e.initial_workers > 0 ? e.initial_workers : speeds_.size(), speeds_.size()), true);
        since_.assign(speeds_.size(), 0);
        placement_.assign(speeds_.size(), -1);
        servers_ = scenario_.server_shards;
        time_at_.push_back(0);
        if (remote)
            remote_ = std::make_shared<daemon::RemotePool>(id_, std::vector<bool>(speeds_.size(), true), 30.0);
    }

    JobId id() const override { return id_; }
    const scenario::Scenario& scenario() const override { return scenario_; }
    protocol::JobStatus status() const override
    {
        protocol::JobStatus s;
        s.job = id_;
        s.state = state_;
        s.iteration = done();
        s.placement = placement_;
        return s;
    }
    bool frozen() const override { return frozen_; }
    train::Membership membership() const override
    {
        train::Membership m { id_, members_, servers_, 0, scenario_.elastic.min_workers,
            scenario_.elastic.max_workers };
        for (const train::ResizeRequest& r : asked_)
            m.apply(r);
        return m;
    }
    // Asks made before its trainer starts are held for it (not in flight), as JobRuntime holds them.
    int resizes_in_flight() const override { return training ? static_cast<int>(asked_.size()) : 0; }
    std::optional<Holdings> holdings() const override
    {
        if (training && !asked_.empty())
            return std::nullopt;
        return Holdings { members_, membership().members };
    }
    Work work() const override { return { done(), scenario_.iterations.value_or(0) }; }
    std::optional<double> samples_per_s(std::int64_t from, std::int64_t to) const override
    {
        if (from < 0 || to <= from || to > done())
            return std::nullopt;
        const double seconds = time_at_[static_cast<std::size_t>(to)] - time_at_[static_cast<std::size_t>(from)];
        return static_cast<double>(scenario_.total_batch * (to - from)) / seconds;
    }
    std::int64_t member_since(WorkerId worker) const override { return since_.at(static_cast<std::size_t>(worker)); }
    void resize(const train::ResizeRequest& resolved) override
    {
        if (state_ != protocol::JobState::Running)
            throw RefusedRequest("job-not-running", "ended");
        asked_.push_back(resolved);
    }
    void restart(const std::vector<ResizeJob>& changes, const EventActor& actor, const std::string& reason) override
    {
        restarts.push_back(reason);
        for (const ResizeJob& c : changes) // each resolved as if the ones before were made
            asked_.push_back(resolve(c, actor, reason));
    }
    void place_worker(WorkerId worker, std::int32_t gpu) override
    {
        placement_.at(static_cast<std::size_t>(worker)) = gpu;
    }
    void note(EventKind kind, std::optional<WorkerId> worker, const std::string& message, const EventActor&) override
    {
        notes.push_back(std::string(to_string(kind)) + (worker ? " (worker " + std::to_string(*worker) + ")" : "")
            + ": " + message);
    }
    const std::shared_ptr<daemon::RemotePool>& remote() const override { return remote_; }

    // One iteration: the resizes asked before it are made first (a refusal when the test
    // asked for one), then it runs with its members, its length uniform BSP's.
    void barrier()
    {
        for (const train::ResizeRequest& r : asked_) {
            const bool refuse = refuse_next == r.action;
            std::string what = std::string(refuse ? "refused " : "") + std::string(action_name(r.action));
            if (r.action == ResizeAction::AddWorker || r.action == ResizeAction::RemoveWorker)
                what += " " + std::to_string(*r.target);
            applied.push_back({ done(), what, r.actor.line() });
            if (refuse) {
                refuse_next.reset();
                continue;
            }
            if (r.action == ResizeAction::AddWorker)
                since_.at(static_cast<std::size_t>(*r.target)) = done();
            train::Membership m = membership_of_record();
            m.apply(r);
            members_ = m.members;
            servers_ = m.servers;
        }
        asked_.clear();
        double slowest = 1e300;
        int n = 0;
        for (std::size_t w = 0; w < members_.size(); ++w)
            if (members_[w]) {
                slowest = std::min(slowest, speeds_[w]);
                ++n;
            }
        const double share = static_cast<double>(scenario_.total_batch) / n;
        time_at_.push_back(time_at_.back() + share / slowest);
    }
    std::int64_t done() const { return static_cast<std::int64_t>(time_at_.size()) - 1; }

    struct Applied {
        std::int64_t iteration;
        std::string what;
        std::string actor;
        bool operator==(const Applied&) const = default;
    };
    std::vector<Applied> applied; // what its barriers made of the resizes asked
    std::vector<std::string> notes;
    std::vector<std::string> restarts;
    bool frozen_ = false;
    std::string tenant_ { protocol::kDefaultTenant };
    const std::string& tenant() const override { return tenant_; }
    // The trainer refuses the next such change (an add-worker: its data cannot be split so).
    std::optional<ResizeAction> refuse_next;
    // A change the trainer makes on its own (a scenario's resize), which fulcrumd learns of
    // from its members only.
    void drop_member(WorkerId worker) { members_.at(static_cast<std::size_t>(worker)) = false; }
    bool training = true; // its trainer has started (else it loads, or waits for its workers)
    protocol::JobState state_ = protocol::JobState::Running;
    std::vector<bool> members() const { return members_; }
    std::vector<std::int32_t> placement() const { return placement_; }

private:
    train::Membership membership_of_record() const
    {
        return { id_, members_, servers_, 0, scenario_.elastic.min_workers, scenario_.elastic.max_workers };
    }

    JobId id_;
    scenario::Scenario scenario_;
    std::vector<double> speeds_;
    std::vector<bool> members_;
    std::vector<std::int64_t> since_;
    std::vector<std::int32_t> placement_;
    int servers_ = 1;
    std::vector<double> time_at_; // run clock after each iteration
    std::deque<train::ResizeRequest> asked_;
    std::shared_ptr<daemon::RemotePool> remote_;
};

// Each worker's memory: two never share a GPU of 16 GB.
constexpr double kMemoryGb = 10;

std::string elastic(int initial, int min, int max)
{
    return R"("elastic": {"initial_workers": )" + std::to_string(initial) + R"(, "min_workers": )" + std::to_string(min)
        + R"(, "max_workers": )" + std::to_string(max) + "}";
}

// Pooled fulcrum-worker processes that joined the pool, `count` of them.
std::vector<std::shared_ptr<serve::Client>> join_processes(daemon::WorkerPool& pool, int count, std::uint64_t first)
{
    std::vector<std::shared_ptr<serve::Client>> processes;
    for (int k = 0; k < count; ++k) {
        processes.push_back(std::make_shared<serve::Client>(first + k, protocol::Role::Worker, "pooled", 64));
        pool.join(processes.back(), "host-" + std::to_string(k));
    }
    return processes;
}

class ClusterCore : public ::testing::Test {
protected:
    static ElasticScheduling::Clock::time_point at(double s)
    {
        return ElasticScheduling::Clock::time_point(
            std::chrono::duration_cast<ElasticScheduling::Clock::duration>(std::chrono::duration<double>(s)));
    }
    static daemon::DaemonOptions::Elastic eps(sched::ElasticPolicy policy = sched::ElasticPolicy::Eps)
    {
        daemon::DaemonOptions::Elastic e;
        e.policy = policy;
        e.round_s = 10; // of the test clock
        e.observe_iterations = 5;
        return e; // early feedback at a tenth of the planned iterations
    }
    static sched::ClusterSpec one_server(int gpus)
    {
        sched::ClusterSpec c;
        c.servers = 1;
        c.gpus_per_server = gpus;
        c.gpu_memory_gb = 16;
        return c;
    }
    // Places the job's first `workers` members (and `servers` server GPUs) as the core does
    // at its start, and tells the scheduler.
    void start(SteppedJob& job, int workers, int servers = 0)
    {
        const std::vector<int> gpus = book.place(job.id(), { workers, kMemoryGb, servers }, remaining);
        ASSERT_EQ(static_cast<int>(gpus.size()), workers + servers) << "the test's cluster has room";
        for (int w = 0; w < workers; ++w)
            job.place_worker(w, gpus[static_cast<std::size_t>(w)]);
        scheduler.started(job);
    }
    // Steps every job's barrier once a test second, the scheduler ticking after each.
    void run_until(double t, const std::vector<daemon::ElasticJob*>& running, const std::vector<SteppedJob*>& stepped)
    {
        for (; now < t; now += 1) {
            for (SteppedJob* j : stepped)
                j->barrier();
            scheduler.tick(running, true, remaining, at(now + 1));
        }
    }
    std::vector<int> gpus_of(JobId job) const { return book.gpus_of(job); }
    // An operator's `action` on two jobs whose trainers have not started (they load, or wait
    // for their workers): a pooled one, job 1, and a local one, job 2, of `workers` members
    // each. The asks are held for the trainers; `while_held` holds after them, at a tick
    // before the trainers start and at one after they took the asks but before they answered.
    // Then the trainers make the change and the scheduler ticks once more.
    void resize_before_the_trainers_start(SteppedJob& pooled, SteppedJob& local, int workers, ResizeAction action,
        std::optional<int> worker, const std::function<void()>& while_held)
    {
        pooled.training = local.training = false;
        scheduler.rebase(at(0));
        scheduler.started(pooled);
        start(local, workers);
        std::vector<bool> starting(pooled.members().size(), false);
        std::fill_n(starting.begin(), workers, true);
        EXPECT_EQ(pooled.remote()->joined_slots(), starting) << "a process for each starting member, before the ask";
        const EventActor op = EventActor::person("operator", "op", {}, "t");
        scheduler.resize(pooled, { {}, 1, action, worker }, op, remaining);
        scheduler.resize(local, { {}, 2, action, worker }, op, remaining);
        while_held();
        scheduler.tick({ &pooled, &local }, false, remaining, at(0.1));
        while_held();
        pooled.training = local.training = true;
        scheduler.tick({ &pooled, &local }, false, remaining, at(0.2)); // handed over, not answered yet
        while_held();
        pooled.barrier();
        local.barrier();
        scheduler.tick({ &pooled, &local }, false, remaining, at(0.3));
    }

    daemon::RemainingWork remaining = [](JobId) { return 100.0; };
    daemon::ClusterBook book { one_server(4), "ff" };
    daemon::WorkerPool pool;
    ElasticScheduling scheduler { eps(), book, pool };
    double now = 0;
};

} // namespace

// EPS's growth round on idle GPUs, then its judgement: a round every 10 s of the test clock
// adds a worker on an idle GPU, judged over the 5 iterations after the one that carried the
// move. Worker 1 (as fast as worker 0) doubles the pace and stays; worker 2 (ten times
// slower) drops it from 200 to 30 samples/s, so the step is rolled back at the barrier after
// the judgement and its GPU is free at once; the job grows no further.
TEST_F(ClusterCore, EpsGrowsAWorkerARoundAndRollsBackTheStepThatSlowedTheJob)
{
    SteppedJob job(1, elastic(1, 1, 3), { 100, 100, 10 });
    scheduler.rebase(at(0));
    start(job, 1);
    run_until(60, { &job }, { &job });
    const std::string eps = "scheduler (eps)";
    ASSERT_EQ(job.applied.size(), 3u);
    EXPECT_EQ(job.applied[0], (SteppedJob::Applied { 10, "add-worker 1", eps })) << "the first round, at 10 s";
    EXPECT_EQ(job.applied[1], (SteppedJob::Applied { 20, "add-worker 2", eps }));
    // Judged over iterations 21 to 26 (the barrier after 26 asks), made before iteration 26's successor.
    EXPECT_EQ(job.applied[2], (SteppedJob::Applied { 26, "remove-worker 2", eps }));
    EXPECT_EQ(job.members(), (std::vector<bool> { true, true, false }));
    EXPECT_EQ(gpus_of(1), (std::vector<int> { 0, 1 })) << "the rolled-back worker's GPU is free";
    EXPECT_EQ(job.placement(), (std::vector<std::int32_t> { 0, 1, -1 }));
    EXPECT_EQ(job.notes.size(), 1u) << "early feedback, once";
    EXPECT_EQ(job.notes.at(0).rfind("early-feedback: past its early-feedback point", 0), 0u) << job.notes.at(0);
}

// A newcomer that does not fit takes workers only from a job past its early feedback (a
// tenth of its planned iterations): before, it waits and the holder keeps every worker;
// after, the holder's highest-numbered members leave, their GPUs free at once, and the
// newcomer starts with its request. A frozen holder gives nothing, even past its feedback.
TEST_F(ClusterCore, ANewcomerTakesWorkersOnlyFromAnUnfrozenJobPastItsEarlyFeedback)
{
    SteppedJob holder(1, elastic(4, 1, 4), { 100, 100, 100, 100 });
    SteppedJob newcomer(2, elastic(2, 1, 2), { 100, 100 });
    scheduler.rebase(at(0));
    start(holder, 4);
    for (int k = 0; k < 5; ++k)
        holder.barrier();
    EXPECT_EQ(scheduler.admit(newcomer, { 2, kMemoryGb, 0 }, { &holder }, remaining), std::nullopt)
        << "5 of 100 iterations: before its early feedback";
    EXPECT_EQ(holder.resizes_in_flight(), 0);
    EXPECT_EQ(gpus_of(1).size(), 4u);

    for (int k = 0; k < 5; ++k)
        holder.barrier();
    holder.frozen_ = true;
    EXPECT_EQ(scheduler.admit(newcomer, { 2, kMemoryGb, 0 }, { &holder }, remaining), std::nullopt) << "frozen";
    EXPECT_EQ(holder.resizes_in_flight(), 0);

    holder.frozen_ = false;
    const std::optional<sched::SlotCount> start_size
        = scheduler.admit(newcomer, { 2, kMemoryGb, 0 }, { &holder }, remaining);
    ASSERT_TRUE(start_size);
    EXPECT_EQ(start_size->workers, 2) << "its whole request";
    EXPECT_EQ(gpus_of(1), (std::vector<int> { 0, 1 })) << "GPUs 2 and 3 are free at once";
    EXPECT_EQ(holder.placement(), (std::vector<std::int32_t> { 0, 1, -1, -1 }));
    holder.barrier();
    ASSERT_EQ(holder.applied.size(), 2u);
    EXPECT_EQ(holder.applied[0].what, "remove-worker 3") << "the highest-numbered member first";
    EXPECT_EQ(holder.applied[1].what, "remove-worker 2");
    EXPECT_EQ(holder.applied[0].iteration, 10);
    EXPECT_EQ(holder.members(), (std::vector<bool> { true, true, false, false }));
}

// A frozen job is not grown; unfrozen, it grows at the next round.
TEST_F(ClusterCore, AFrozenJobIsNotGrownUntilUnfrozen)
{
    SteppedJob job(1, elastic(1, 1, 2), { 100, 100 });
    scheduler.rebase(at(0));
    start(job, 1);
    job.frozen_ = true;
    run_until(35, { &job }, { &job });
    EXPECT_TRUE(job.applied.empty()) << "three rounds passed";
    job.frozen_ = false;
    run_until(45, { &job }, { &job });
    ASSERT_EQ(job.applied.size(), 1u);
    EXPECT_EQ(job.applied[0], (SteppedJob::Applied { 40, "add-worker 1", "scheduler (eps)" }));
    EXPECT_EQ(gpus_of(1), (std::vector<int> { 0, 1 }));
}

// A job whose parameter servers hold GPUs grows by a worker and a server at once, two GPUs,
// and a rolled-back step gives both back.
TEST_F(ClusterCore, AJobWhoseServersHoldGpusGrowsAndRollsBackByAWorkerAndAServer)
{
    SteppedJob job(1, elastic(1, 1, 2), { 100, 10 }, R"(, "placement": {"server_gpus": 1})");
    scheduler.rebase(at(0));
    start(job, 1, 1);
    EXPECT_EQ(gpus_of(1).size(), 2u);
    run_until(40, { &job }, { &job });
    ASSERT_EQ(job.applied.size(), 4u);
    EXPECT_EQ(job.applied[0].what, "add-worker 1");
    EXPECT_EQ(job.applied[1].what, "add-server");
    EXPECT_EQ(job.applied[0].iteration, 10);
    EXPECT_EQ(job.applied[2].what, "remove-worker 1") << "worker 1 is ten times slower";
    EXPECT_EQ(job.applied[3].what, "remove-server");
    EXPECT_EQ(job.applied[2].iteration, 16);
    EXPECT_EQ(gpus_of(1).size(), 2u) << "the step's two GPUs are free again";
    EXPECT_EQ(job.server_count(), 1);
}

// An operator's resize is checked once, by the record, and needs a GPU for an added worker:
// refused without one, changing nothing; a removed worker's GPU is free at once; a bound or
// slot is refused by the one check with its code; a job without an elastic section is not
// resized at all.
TEST_F(ClusterCore, AnOperatorsResizeIsCheckedOnceAndNeedsAGpu)
{
    SteppedJob job(1, elastic(2, 1, 3), { 100, 100, 100 });
    SteppedJob other(2, elastic(2, 2, 2), { 100, 100 });
    scheduler.rebase(at(0));
    start(job, 2);
    start(other, 2);
    const EventActor op = EventActor::person("operator", "op", {}, "t");
    const auto code_of = [&](SteppedJob& j, ResizeAction action, std::optional<WorkerId> worker) -> std::string {
        try {
            scheduler.resize(j, { {}, j.id(), action, worker }, op, remaining);
        } catch (const RefusedRequest& e) {
            return e.code();
        }
        return "asked";
    };
    EXPECT_EQ(code_of(job, ResizeAction::AddWorker, std::nullopt), "no-free-gpu");
    EXPECT_EQ(job.resizes_in_flight(), 0) << "nothing asked";
    EXPECT_EQ(gpus_of(1).size(), 2u);
    EXPECT_EQ(code_of(job, ResizeAction::RemoveWorker, 0), "asked");
    EXPECT_EQ(gpus_of(1), (std::vector<int> { 1 })) << "worker 0's GPU is free before the barrier";
    EXPECT_EQ(code_of(job, ResizeAction::RemoveWorker, 1), "last-worker")
        << "against the record, worker 0's removal counted before any barrier made it";
    EXPECT_EQ(code_of(job, ResizeAction::RemoveWorker, 0), "not-a-member") << "its removal is on the record";
    EXPECT_EQ(code_of(job, ResizeAction::AddWorker, 1), "already-member");
    EXPECT_EQ(code_of(job, ResizeAction::AddWorker, 7), "unknown-worker");
    EXPECT_EQ(code_of(job, ResizeAction::AddWorker, 2), "asked") << "on the GPU worker 0 left";
    EXPECT_EQ(code_of(job, ResizeAction::AddWorker, 0), "no-free-gpu");
    job.barrier();
    EXPECT_EQ(job.members(), (std::vector<bool> { false, true, true }));
    EXPECT_EQ(job.applied.back().actor.rfind("operator:op", 0), 0u) << job.applied.back().actor;
    EXPECT_EQ(code_of(other, ResizeAction::RemoveWorker, std::nullopt), "below-min-workers");

    SteppedJob fixed(3, R"("sync": "bsp")", { 100 });
    EXPECT_EQ(code_of(fixed, ResizeAction::AddWorker, std::nullopt), "not-elastic");
}

// A growth step the trainer refuses (its data cannot be split so) ends the job's growth,
// and the GPU taken for the step is given back at the next tick.
TEST_F(ClusterCore, AGrowthStepTheTrainerRefusesEndsTheGrowthAndFreesItsGpu)
{
    SteppedJob job(1, elastic(1, 1, 3), { 100, 100, 100 });
    scheduler.rebase(at(0));
    start(job, 1);
    job.refuse_next = ResizeAction::AddWorker;
    run_until(40, { &job }, { &job });
    ASSERT_EQ(job.applied.size(), 1u);
    EXPECT_EQ(job.applied[0], (SteppedJob::Applied { 10, "refused add-worker 1", "scheduler (eps)" }));
    EXPECT_EQ(gpus_of(1), (std::vector<int> { 0 }));
    EXPECT_EQ(job.placement(), (std::vector<std::int32_t> { 0, -1, -1 }));
}

// An operator's removal of a pooled worker that the trainer refuses leaves the worker and its
// process with the job, and the reason given for it is forgotten: when the trainer later drops
// the worker on its own (a scenario's resize), its process is released for that.
TEST_F(ClusterCore, APooledRemovalTheTrainerRefusedIsNotTheReasonGivenLater)
{
    const auto processes = join_processes(pool, 3, 900);
    SteppedJob job(1, elastic(3, 1, 3), { 100, 100, 100 }, "", true);
    scheduler.rebase(at(0));
    scheduler.started(job);
    ASSERT_EQ(job.remote()->joined_slots(), (std::vector<bool> { true, true, true }));
    job.refuse_next = ResizeAction::RemoveWorker;
    scheduler.resize(job, { {}, 1, ResizeAction::RemoveWorker, WorkerId { 2 } },
        EventActor::person("operator", "op", {}, "t"), remaining);
    job.barrier();
    scheduler.tick({ &job }, false, remaining, at(1));
    ASSERT_FALSE(job.applied.empty());
    EXPECT_EQ(job.applied.back().what, "refused remove-worker 2");
    EXPECT_EQ(job.remote()->joined_slots(), (std::vector<bool> { true, true, true })) << "its process stays";
    job.drop_member(2);
    scheduler.tick({ &job }, false, remaining, at(2));
    EXPECT_EQ(job.remote()->joined_slots(), (std::vector<bool> { true, true, false }));
    EXPECT_EQ(pool.idle(), 1);
    ASSERT_FALSE(job.notes.empty());
    EXPECT_NE(job.notes.back().find("(job 1 no longer has worker 2)"), std::string::npos) << job.notes.back();
}

// Under kill-restart the same growth step is carried out by a restart with the change, its
// reason the round's; the job's record takes it at the restarted job's first barrier.
TEST_F(ClusterCore, KillRestartCarriesTheGrowthStepOutAsARestart)
{
    ElasticScheduling restarting(eps(sched::ElasticPolicy::KillRestart), book, pool);
    SteppedJob job(1, elastic(1, 1, 2), { 100, 100 });
    restarting.rebase(at(0));
    const std::vector<int> gpus = book.place(1, { 1, kMemoryGb, 0 }, remaining);
    job.place_worker(0, gpus.at(0));
    restarting.started(job);
    for (int t = 0; t < 12; ++t) {
        job.barrier();
        restarting.tick({ &job }, true, remaining, at(t + 1));
    }
    ASSERT_EQ(job.restarts.size(), 1u);
    EXPECT_EQ(job.restarts[0].rfind("kill-restart: growth round 0 on idle GPU", 0), 0u) << job.restarts[0];
    ASSERT_EQ(job.applied.size(), 1u);
    EXPECT_EQ(job.applied[0], (SteppedJob::Applied { 10, "add-worker 1", "scheduler (kill-restart)" }));
    EXPECT_EQ(gpus_of(1), (std::vector<int> { 0, 1 }));
}

// A job whose workers are all fulcrum-worker processes takes them from the worker pool, not
// the GPUs: each member gets an idle pooled process, told worker-assigned before its first
// task; a growth step takes one more; the rolled-back step's process is told worker-released
// once the job's barrier has dropped the slot, and idles in the pool again.
TEST_F(ClusterCore, APooledJobTakesAProcessPerMemberAndGivesBackTheOneItDropped)
{
    const auto processes = join_processes(pool, 3, 100);
    SteppedJob job(1, elastic(1, 1, 3), { 100, 100, 10 }, "", true);
    scheduler.rebase(at(0));
    ASSERT_TRUE(scheduler.fed_by_pool(job));
    scheduler.started(job);
    EXPECT_EQ(pool.idle(), 2);
    EXPECT_EQ(job.remote()->joined_slots(), (std::vector<bool> { true, false, false }));
    EXPECT_TRUE(book.gpus_of(1).empty()) << "no GPU for a pooled worker";
    run_until(40, { &job }, { &job });
    ASSERT_EQ(job.applied.size(), 3u);
    EXPECT_EQ(job.applied[0].what, "add-worker 1");
    EXPECT_EQ(job.applied[1].what, "add-worker 2");
    EXPECT_EQ(job.applied[2], (SteppedJob::Applied { 26, "remove-worker 2", "scheduler (eps)" }));
    EXPECT_EQ(job.remote()->joined_slots(), (std::vector<bool> { true, true, false }));
    EXPECT_EQ(pool.idle(), 1) << "the rolled-back slot's process idles again";

    // What each process was told, in order: the pool hands out the one idle longest.
    const auto told = [](serve::Client& c) {
        std::vector<std::string> said;
        while (auto frame = c.queue().pop())
            if (const auto m = protocol::decode_server(**frame); m.message) {
                if (const auto* a = std::get_if<protocol::WorkerAssigned>(&*m.message))
                    said.push_back("assigned " + std::to_string(a->assignment.worker));
                if (const auto* r = std::get_if<protocol::WorkerReleased>(&*m.message))
                    said.push_back("released " + std::to_string(r->worker));
            }
        return said;
    };
    EXPECT_EQ(told(*processes[0]), (std::vector<std::string> { "assigned 0" }));
    EXPECT_EQ(told(*processes[1]), (std::vector<std::string> { "assigned 1" }));
    EXPECT_EQ(told(*processes[2]), (std::vector<std::string> { "assigned 2", "released 2" }));
    // Each note names the slot it is about, as the console's Events list and a replay show it.
    for (const char* expected : { "worker-assigned (worker 0): pooled worker on host-",
             "worker-assigned (worker 1): pooled worker on host-", "worker-assigned (worker 2): pooled worker on host-",
             "worker-released (worker 2): pooled worker on host-" })
        EXPECT_EQ(std::count_if(job.notes.begin(), job.notes.end(),
                      [&](const std::string& n) { return n.rfind(expected, 0) == 0; }),
            1)
            << expected;
}

// An operator's resize of a job whose trainer has not started yet (it loads, or waits for
// its workers) is held for the trainer; what the resize took for it stays through the
// scheduler's ticks: the process of an added pooled worker and the GPU of an added local one.
// Once the trainer starts and makes the change, they are its members'.
TEST_F(ClusterCore, WhatAResizeHeldForATrainerNotStartedYetTookStaysWithTheJob)
{
    const auto processes = join_processes(pool, 3, 800);
    SteppedJob pooled(1, elastic(1, 1, 3), { 100, 100, 100 }, "", true);
    SteppedJob local(2, elastic(1, 1, 3), { 100, 100, 100 });
    const auto held_as_asked = [&] {
        EXPECT_EQ(pooled.remote()->joined_slots(), (std::vector<bool> { true, true, false }));
        EXPECT_EQ(gpus_of(2).size(), 2u);
        EXPECT_EQ(pool.idle(), 1);
    };
    resize_before_the_trainers_start(pooled, local, 1, ResizeAction::AddWorker, std::nullopt, held_as_asked);
    held_as_asked();
    EXPECT_EQ(pooled.members(), (std::vector<bool> { true, true, false }));
    EXPECT_EQ(local.members(), (std::vector<bool> { true, true, false }));
    EXPECT_GE(local.placement()[1], 0) << "the added worker's GPU";
}

// ... and a removal held for it: a removed local worker's GPU is free at once and not taken
// back while the trainer starts; a removed pooled worker keeps its process until the trainer,
// which waits for every starting member's process, has dropped it.
TEST_F(ClusterCore, WhatAResizeHeldForATrainerNotStartedYetGaveBackStaysFree)
{
    const auto processes = join_processes(pool, 2, 850);
    SteppedJob pooled(1, elastic(2, 1, 3), { 100, 100, 100 }, "", true);
    SteppedJob local(2, elastic(2, 1, 3), { 100, 100, 100 });
    resize_before_the_trainers_start(pooled, local, 2, ResizeAction::RemoveWorker, WorkerId { 1 }, [&] {
        EXPECT_EQ(pooled.remote()->joined_slots(), (std::vector<bool> { true, true, false }));
        EXPECT_EQ(gpus_of(2).size(), 1u);
        EXPECT_EQ(local.placement()[1], -1);
    });
    EXPECT_EQ(pooled.remote()->joined_slots(), (std::vector<bool> { true, false, false }));
    EXPECT_EQ(pool.idle(), 1) << "its process back in the pool";
    EXPECT_EQ(gpus_of(2).size(), 1u);
    EXPECT_EQ(local.members(), (std::vector<bool> { true, false, false }));
}

// Issue 47: a pooled process serves only the tenants its token reaches. A newcomer of tenant
// b takes no process from tenant a's job, which would idle, useless to it; one of tenant a
// does. A growth round that finds no idle process for one tenant still grows another's job.
TEST_F(ClusterCore, APooledNewcomerTakesProcessesOnlyFromJobsWhoseProcessesItsTenantMayUse)
{
    std::vector<std::shared_ptr<serve::Client>> processes;
    for (int k = 0; k < 3; ++k) {
        processes.push_back(std::make_shared<serve::Client>(200 + k, protocol::Role::Worker, "pooled", 64));
        processes.back()->set_reach(access::TenantReach::of(protocol::Role::Worker, k < 2 ? "a" : "b"));
        pool.join(processes.back(), "host-" + std::to_string(k));
    }
    SteppedJob holder(1, elastic(2, 1, 2), { 100, 100 }, "", true);
    holder.tenant_ = "a";
    scheduler.rebase(at(0));
    scheduler.started(holder);
    EXPECT_EQ(holder.remote()->joined_slots(), (std::vector<bool> { true, true })) << "a's two processes";
    EXPECT_EQ(pool.idle_for("a"), 0);
    EXPECT_EQ(pool.idle_for("b"), 1);
    for (int k = 0; k < 10; ++k)
        holder.barrier(); // past its early feedback

    SteppedJob of_b(2, elastic(2, 2, 2), { 100, 100 }, "", true);
    of_b.tenant_ = "b";
    EXPECT_EQ(scheduler.admit(of_b, { 2, kMemoryGb, 0 }, { &holder }, remaining), std::nullopt)
        << "b has one process, and a's are no use to it";
    EXPECT_EQ(holder.resizes_in_flight(), 0) << "a's job keeps its workers";

    SteppedJob of_a(3, elastic(1, 1, 1), { 100 }, "", true);
    of_a.tenant_ = "a";
    const std::optional<sched::SlotCount> start_size
        = scheduler.admit(of_a, { 1, kMemoryGb, 0 }, { &holder }, remaining);
    EXPECT_EQ(holder.resizes_in_flight(), 1) << "a's own newcomer takes one of a's processes";
    EXPECT_FALSE(start_size) << "it starts once the process is back in the pool, at the holder's next barrier";
}

namespace {

// The placement queue's pass (daemon::PlacementPass) on the real cluster book, elastic
// scheduling, worker pool and resource book: which queued jobs are placed, where, and why
// the others wait, decided in one call with no thread and no clock.
class ClusterCoreQueue : public ::testing::Test {
protected:
    explicit ClusterCoreQueue(daemon::DaemonOptions::Queue order = daemon::DaemonOptions::Queue::Backfill,
        sched::ElasticPolicy policy = sched::ElasticPolicy::StaticFifo, sched::TenantQuotas tenants = {})
        : options_(make_options(order, policy, std::move(tenants)))
    {
        // As the core does: a job placed earlier in the pass counts for its own tenant.
        elastic_.set_tenant_of([this](JobId id) {
            const auto it = tenant_of_.find(id);
            return it != tenant_of_.end() ? it->second : std::string(protocol::kDefaultTenant);
        });
    }
    // A job of `tenant`, known to the core by its id.
    void of_tenant(SteppedJob& job, const std::string& tenant)
    {
        job.tenant_ = tenant;
        tenant_of_[job.id()] = tenant;
    }
    std::map<JobId, std::string> tenant_of_;
    static daemon::DaemonOptions make_options(
        daemon::DaemonOptions::Queue order, sched::ElasticPolicy policy, sched::TenantQuotas tenants)
    {
        daemon::DaemonOptions o;
        o.cluster.servers = 1;
        o.cluster.gpus_per_server = 4;
        o.cluster.gpu_memory_gb = 16;
        o.cluster.tenants = std::move(tenants);
        o.placement = "ff";
        o.queue = order;
        o.elastic.policy = policy;
        o.elastic.round_s = 10;
        o.elastic.observe_iterations = 5;
        o.resources = { 1e15, 1 << 20 };
        return o;
    }
    // A running job on the first free GPUs, as a pass before placed it.
    void running(SteppedJob& job)
    {
        const PlacementPassOutcome out = pass({ &job }, {});
        ASSERT_EQ(out.placed.size(), 1u) << (out.waiting.empty() ? "" : out.waiting[0].why);
        for (std::size_t w = 0; w < out.placed[0].placement.size(); ++w)
            job.place_worker(static_cast<WorkerId>(w), out.placed[0].placement[w]);
        elastic_.started(job);
    }
    using PlacementPassOutcome = daemon::PlacementPass::Outcome;
    PlacementPassOutcome pass(
        const std::vector<daemon::ElasticJob*>& queued, const std::vector<daemon::ElasticJob*>& live)
    {
        return placement_.run(queued, live, remaining_);
    }
    static std::map<JobId, std::string> why(const PlacementPassOutcome& out)
    {
        std::map<JobId, std::string> waits;
        for (const auto& w : out.waiting)
            waits[w.job->id()] = w.why;
        return waits;
    }
    static std::vector<JobId> placed(const PlacementPassOutcome& out)
    {
        std::vector<JobId> ids;
        for (const auto& p : out.placed)
            ids.push_back(p.job->id());
        return ids;
    }

    daemon::DaemonOptions options_;
    daemon::RemainingWork remaining_ = [](JobId) { return 100.0; };
    daemon::ClusterBook book_ { options_.cluster, options_.placement };
    daemon::WorkerPool pool_;
    ElasticScheduling elastic_ { options_.elastic, book_, pool_ };
    daemon::ResourceBook resources_ { options_.resources };
    daemon::PlacementPass placement_ { options_, book_, elastic_, pool_, resources_ };
};

class ClusterCoreFifo : public ClusterCoreQueue {
protected:
    ClusterCoreFifo()
        : ClusterCoreQueue(daemon::DaemonOptions::Queue::Fifo)
    {
    }
};

class ClusterCoreEps : public ClusterCoreQueue {
protected:
    ClusterCoreEps()
        : ClusterCoreQueue(daemon::DaemonOptions::Queue::Backfill, sched::ElasticPolicy::Eps)
    {
    }
};

sched::TenantQuotas two_tenants(sched::RigidBorrowers rigid)
{
    sched::TenantQuotas q;
    q.named["a"] = { 2, true, 1 };
    q.named["b"] = { 2, false, 1 };
    q.rigid = rigid;
    return q;
}

class ClusterCoreTenants : public ClusterCoreQueue {
protected:
    explicit ClusterCoreTenants(sched::RigidBorrowers rigid = sched::RigidBorrowers::Wait)
        : ClusterCoreQueue(daemon::DaemonOptions::Queue::Backfill, sched::ElasticPolicy::StaticFifo, two_tenants(rigid))
    {
    }
};

class ClusterCoreRequeue : public ClusterCoreTenants {
protected:
    ClusterCoreRequeue()
        : ClusterCoreTenants(sched::RigidBorrowers::Requeue)
    {
    }
};

} // namespace

// Backfill: with three of four GPUs held, a job of two waits, named with what it needs and
// what has room, and the job of one behind it takes the last GPU (first fit).
TEST_F(ClusterCoreQueue, UnderBackfillASmallerJobGoesAheadOfOneThatWaitsForGpus)
{
    SteppedJob big(1, "", { 100, 100, 100 });
    SteppedJob wide(2, "", { 100, 100 });
    SteppedJob small(3, "", { 100 });
    running(big);
    EXPECT_EQ(book_.gpus_of(1), (std::vector<int> { 0, 1, 2 }));
    const PlacementPassOutcome out = pass({ &wide, &small }, { &big });
    EXPECT_EQ(placed(out), (std::vector<JobId> { 3 }));
    EXPECT_EQ(out.placed.at(0).placement, (std::vector<std::int32_t> { 3 }));
    EXPECT_EQ(out.placed.at(0).message, "ff placed 1 local worker on " + book_.describe({ 3 }));
    EXPECT_EQ(why(out),
        (std::map<JobId, std::string> { { 2, "waiting for 2 GPUs with room for a worker; 1 have room now" } }));
    EXPECT_EQ(book_.gpus_of(2), std::vector<int> {}) << "a job that waits holds nothing";
}

// FIFO (the Elastic PS paper's baselines): no job starts before an earlier one that waits
// for GPUs, though it would fit.
TEST_F(ClusterCoreFifo, NoJobOvertakesOneThatWaitsForGpus)
{
    SteppedJob big(1, "", { 100, 100, 100 });
    SteppedJob wide(2, "", { 100, 100 });
    SteppedJob small(3, "", { 100 });
    running(big);
    const PlacementPassOutcome out = pass({ &wide, &small }, { &big });
    EXPECT_TRUE(out.placed.empty());
    EXPECT_EQ(why(out).at(2), "waiting for 2 GPUs with room for a worker; 1 have room now");
    EXPECT_EQ(why(out).at(3), "waiting behind job 2 (--queue fifo)");
    EXPECT_EQ(book_.gpus_of(3), std::vector<int> {});
}

// Under eps an elastic newcomer starts with what is free, down to its min_workers, and
// says so; one below its min_workers waits and holds nothing.
TEST_F(ClusterCoreEps, AnElasticNewcomerStartsSmallerWithWhatIsFree)
{
    SteppedJob big(1, "", { 100, 100 });
    SteppedJob grows(2, elastic(4, 1, 4), { 100, 100, 100, 100 });
    SteppedJob needs_three(3, elastic(3, 3, 3), { 100, 100, 100 });
    running(big);
    const PlacementPassOutcome out = pass({ &grows, &needs_three }, { &big });
    ASSERT_EQ(placed(out), (std::vector<JobId> { 2 }));
    EXPECT_EQ(out.placed[0].size, 2);
    EXPECT_EQ(out.placed[0].placement, (std::vector<std::int32_t> { 2, 3, -1, -1 }));
    EXPECT_EQ(out.placed[0].message,
        "ff placed 2 local workers on " + book_.describe({ 2, 3 })
            + " (eps: 2 of the 4 workers it asks for were free; it grows when GPUs are idle)");
    EXPECT_EQ(why(out).at(3), "waiting for 3 GPUs with room for a worker; 0 have room now");
    EXPECT_EQ(book_.gpus_of(3), std::vector<int> {});
}

// A job that fits the GPUs but not the memory left beside the running jobs waits for the
// memory, named by the resource book; the jobs placed before it in the pass count.
TEST_F(ClusterCoreQueue, AJobWaitsForMemoryTheJobsPlacedBeforeItInThePassHold)
{
    SteppedJob first(1, "", { 100 });
    SteppedJob second(2, "", { 100 });
    const scenario::JobFootprint each = daemon::footprint_of(first.scenario());
    resources_
        = daemon::ResourceBook({ 1.5 * each.own_bytes() + each.data_bytes, 1 << 20 }); // one job's data, read once
    const PlacementPassOutcome out = pass({ &first, &second }, {});
    EXPECT_EQ(placed(out), (std::vector<JobId> { 1 }));
    ASSERT_EQ(why(out).count(2), 1u);
    EXPECT_EQ(why(out).at(2), resources_.wait_reason(each));
    EXPECT_NE(why(out).at(2).find("memory"), std::string::npos) << why(out).at(2);
}

// Tenants (issue 47): a within-quota job is served before a borrower submitted ahead of it;
// when it does not fit, the GPUs that idle go to it, so the borrower waits too, saying for
// whom. A rigid borrower keeps what it borrowed (rigid_borrowers wait).
TEST_F(ClusterCoreTenants, AWithinQuotaJobIsServedFirstAndABorrowerWaitsBehindIt)
{
    SteppedJob a_running(1, "", { 100, 100, 100 });
    of_tenant(a_running, "a");
    running(a_running); // a holds 3: one borrowed beyond its quota of 2
    SteppedJob a_more(2, "", { 100 });
    of_tenant(a_more, "a");
    SteppedJob b_job(3, "", { 100, 100 });
    of_tenant(b_job, "b");
    const PlacementPassOutcome out = pass({ &a_more, &b_job }, { &a_running });
    EXPECT_TRUE(out.placed.empty());
    EXPECT_TRUE(out.requeue.empty()) << "rigid_borrowers wait";
    EXPECT_EQ(why(out).at(3), "waiting for 2 GPUs with room for a worker; 1 have room now");
    EXPECT_EQ(why(out).at(2),
        "waiting: job 3 of tenant b waits within its quota, and GPUs that idle or come back go to it first");
}

// ... under rigid_borrowers requeue, the borrower is named to be stopped at a checkpoint
// and queued again, with the reason its job-queued event gives.
TEST_F(ClusterCoreRequeue, AWithinQuotaJobHasTheRigidBorrowerRequeued)
{
    SteppedJob a_running(1, "", { 100, 100, 100 });
    of_tenant(a_running, "a");
    running(a_running);
    SteppedJob b_job(3, "", { 100, 100 });
    of_tenant(b_job, "b");
    const PlacementPassOutcome out = pass({ &b_job }, { &a_running });
    ASSERT_EQ(out.requeue.size(), 1u);
    EXPECT_EQ(out.requeue[0].job, 1);
    EXPECT_EQ(
        out.requeue[0].reason, "reclaimed for job 3 of tenant b (within its quota of 2 GPUs); rigid_borrowers requeue");
    EXPECT_EQ(why(out).at(3), "waiting for 2 GPUs with room for a worker; 1 have room now")
        << "it starts when the borrower's GPUs come back";
}

// A tenant that does not borrow waits for what is left of its quota, though GPUs idle.
TEST_F(ClusterCoreTenants, ATenantThatDoesNotBorrowWaitsForItsQuota)
{
    SteppedJob b_running(1, "", { 100, 100 });
    of_tenant(b_running, "b");
    running(b_running);
    SteppedJob b_more(2, "", { 100 });
    of_tenant(b_more, "b");
    SteppedJob a_job(3, "", { 100 });
    of_tenant(a_job, "a");
    const PlacementPassOutcome out = pass({ &b_more, &a_job }, { &b_running });
    EXPECT_EQ(placed(out), (std::vector<JobId> { 3 }));
    EXPECT_EQ(why(out).at(2),
        "waiting for its tenant's quota: tenant b holds 2 of its 2 GPUs and does not borrow; this job needs 1");
}

// Under --elastic static a job fed by the worker pool starts only with its whole request
// idle there; the pooled jobs behind it wait their turn (first come, first served).
TEST_F(ClusterCoreQueue, UnderStaticAPooledJobWaitsForItsWholeRequestAndTheOnesBehindItWait)
{
    const auto processes = join_processes(pool_, 2, 300);
    SteppedJob three(1, elastic(3, 3, 3), { 100, 100, 100 }, "", true);
    SteppedJob one(2, elastic(1, 1, 1), { 100 }, "", true);
    const PlacementPassOutcome out = pass({ &three, &one }, {});
    EXPECT_TRUE(out.placed.empty());
    EXPECT_EQ(why(out).at(1),
        "waiting for its whole request of 3 workers (--elastic static): pooled workers for its remote slots "
        "(fulcrum-worker --pool; 2 idle now)");
    EXPECT_EQ(why(out).at(2), "waiting behind job 1 for the worker pool (--elastic static: first come, first served)");
    const PlacementPassOutcome alone = pass({ &one }, {});
    ASSERT_EQ(placed(alone), (std::vector<JobId> { 2 }));
    EXPECT_EQ(alone.placed[0].message, "static: 1 of the 1 workers it asks for, from the worker pool (2 idle)");
}

// A tenant holds the GPUs its jobs placed earlier in the same pass hold: of two jobs of a
// non-borrowing tenant with a quota of 2, each asking for 2, one is placed and the other
// waits for the quota, though 4 GPUs were free.
TEST_F(ClusterCoreTenants, JobsPlacedEarlierInThePassCountAgainstTheirTenantsQuota)
{
    SteppedJob first(1, "", { 100, 100 });
    of_tenant(first, "b");
    SteppedJob second(2, "", { 100, 100 });
    of_tenant(second, "b");
    const PlacementPassOutcome out = pass({ &first, &second }, {});
    EXPECT_EQ(placed(out), (std::vector<JobId> { 1 }));
    EXPECT_EQ(why(out).at(2),
        "waiting for its tenant's quota: tenant b holds 2 of its 2 GPUs and does not borrow; this job needs 2");
}

// The placed event says what was placed: a job's servers' GPUs beside its workers', and under
// eps a job that starts smaller starts with fewer server GPUs too, in proportion.
TEST_F(ClusterCoreEps, AJobsServersHoldGpusBesideItsWorkersAndStartFewerWhenItStartsSmaller)
{
    SteppedJob fixed(1, "", { 100 }, R"(, "placement": {"server_gpus": 1})");
    const PlacementPassOutcome first = pass({ &fixed }, {});
    ASSERT_EQ(placed(first), (std::vector<JobId> { 1 }));
    EXPECT_EQ(first.placed[0].message, "ff placed 1 local worker and its 1 servers on " + book_.describe({ 0, 1 }));
    EXPECT_EQ(first.placed[0].placement, (std::vector<std::int32_t> { 0 })) << "the server's GPU after the worker's";
    EXPECT_EQ(book_.gpus_of(1).size(), 2u);
    for (std::size_t w = 0; w < first.placed[0].placement.size(); ++w)
        fixed.place_worker(static_cast<WorkerId>(w), first.placed[0].placement[w]);
    elastic_.started(fixed);

    SteppedJob elastic_job(2, elastic(2, 1, 2), { 100, 100 }, R"(, "placement": {"server_gpus": 2})");
    const PlacementPassOutcome second = pass({ &elastic_job }, { &fixed });
    ASSERT_EQ(placed(second), (std::vector<JobId> { 2 })) << (second.waiting.empty() ? "" : second.waiting[0].why);
    EXPECT_EQ(second.placed[0].size, 1);
    EXPECT_EQ(second.placed[0].server_gpus, 1);
    EXPECT_NE(
        second.placed[0].message.find("(eps: 1 of the 2 workers it asks for and 1 of its 2 server GPUs were free"),
        std::string::npos)
        << second.placed[0].message;
}

// Two pooled jobs in one pass do not count the same idle processes: of three, the first job
// placed takes two, and the second, asking for its whole request of two under --elastic
// static, waits, told that one is idle (without the pass's holds it was placed too, and one
// of its slots then waited for a process that was never there).
TEST_F(ClusterCoreQueue, PooledJobsPlacedInOnePassDoNotCountTheSameIdleProcesses)
{
    const auto processes = join_processes(pool_, 3, 400);
    SteppedJob first(1, elastic(2, 2, 2), { 100, 100 }, "", true);
    SteppedJob second(2, elastic(2, 2, 2), { 100, 100 }, "", true);
    const PlacementPassOutcome out = pass({ &first, &second }, {});
    ASSERT_EQ(placed(out), (std::vector<JobId> { 1 }));
    EXPECT_EQ(out.placed[0].message, "static: 2 of the 2 workers it asks for, from the worker pool (3 idle)");
    EXPECT_EQ(why(out).at(2),
        "waiting for its whole request of 2 workers (--elastic static): pooled workers for its remote slots "
        "(fulcrum-worker --pool; 1 idle now)");
    elastic_.started(first); // as the core starts it, in the same task
    pool_.drop_holds();
    EXPECT_EQ(first.remote()->joined_slots(), (std::vector<bool> { true, true }));
    EXPECT_EQ(pool_.idle(), 1);
}

// Under eps the second pooled job of the pass starts smaller, with the one process the first
// left, and each slot that starts a member has its process.
TEST_F(ClusterCoreEps, ASecondPooledJobOfThePassStartsWithTheProcessesTheFirstLeft)
{
    const auto processes = join_processes(pool_, 3, 500);
    SteppedJob first(1, elastic(2, 1, 2), { 100, 100 }, "", true);
    SteppedJob second(2, elastic(2, 1, 2), { 100, 100 }, "", true);
    const PlacementPassOutcome out = pass({ &first, &second }, {});
    ASSERT_EQ(placed(out), (std::vector<JobId> { 1, 2 }));
    EXPECT_EQ(out.placed[0].size, 2);
    EXPECT_EQ(out.placed[1].size, 1);
    EXPECT_EQ(out.placed[1].message, "eps: 1 of the 2 workers it asks for, from the worker pool (1 idle)");
    for (SteppedJob* job : { &first, &second })
        elastic_.started(*job);
    pool_.drop_holds();
    EXPECT_EQ(first.remote()->joined_slots(), (std::vector<bool> { true, true }));
    EXPECT_EQ(second.remote()->joined_slots(), (std::vector<bool> { true, false }));
    EXPECT_EQ(pool_.idle(), 0);
}

// A slot a process started by hand has joined already needs no pooled process: the first
// job holds only one of the two idle ones, and the second job of the pass takes the other.
TEST_F(ClusterCoreQueue, APooledJobHoldsNoProcessForASlotAlreadyJoined)
{
    const auto processes = join_processes(pool_, 2, 600);
    SteppedJob first(1, elastic(2, 2, 2), { 100, 100 }, "", true);
    const auto by_hand = std::make_shared<serve::Client>(700, protocol::Role::Worker, "by hand", 64);
    first.remote()->join(by_hand, 0, "host-by-hand");
    SteppedJob second(2, elastic(1, 1, 1), { 100 }, "", true);
    const PlacementPassOutcome out = pass({ &first, &second }, {});
    EXPECT_EQ(placed(out), (std::vector<JobId> { 1, 2 })) << ::testing::PrintToString(why(out));
    for (SteppedJob* job : { &first, &second })
        elastic_.started(*job);
    pool_.drop_holds();
    EXPECT_EQ(first.remote()->joined_slots(), (std::vector<bool> { true, true }));
    EXPECT_EQ(second.remote()->joined_slots(), (std::vector<bool> { true }));
    EXPECT_EQ(pool_.idle(), 0);
}

// A process started by hand that joined a slot outside the ones a job starts with is no
// process for them: with one idle, a job asking for its first two under --elastic static
// waits (before, the joined one was counted and the job placed, its second slot then waiting
// for a process forever).
TEST_F(ClusterCoreQueue, AProcessJoinedOutsideTheStartingSlotsIsNotCountedForThem)
{
    const auto processes = join_processes(pool_, 1, 900);
    SteppedJob job(1, elastic(2, 2, 3), { 100, 100, 100 }, "", true);
    job.remote()->join(std::make_shared<serve::Client>(901, protocol::Role::Worker, "by hand", 64), 2, "host-by-hand");
    const PlacementPassOutcome out = pass({ &job }, {});
    EXPECT_TRUE(out.placed.empty());
    EXPECT_EQ(why(out).at(1),
        "waiting for its whole request of 2 workers (--elastic static): pooled workers for its remote slots "
        "(fulcrum-worker --pool; 1 idle now)");
}
