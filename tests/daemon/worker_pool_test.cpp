// fulcrumd's worker pool against real fulcrum-worker --pool processes on loopback: the
// elastic scheduler (eps) hands pooled workers to real-mode jobs whose workers are all
// remote, grows them on idle pooled workers, takes workers back for a newcomer from a job
// past its early feedback, replaces one whose process died, and returns every worker to the
// pool when its job ends; under static it hands out whole requests, first come first served.

#include "daemon/daemon.h"
#include "daemon_support.h"
#include "db/run_reader.h"
#include "process_support.h"
#include "served.h"
#include "ws_client.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace fulcrum;
using namespace fulcrum::protocol;
using testing_support::request_reply;
using testing_support::Served;
using testing_support::wait_for;
using testing_support::WsClient;

namespace {

// A real-mode job of three remote worker slots that starts with one and may grow to three.
std::string pooled_job(const std::string& name, int initial)
{
    return R"({"name": ")" + name + R"(", "mode": "real", "seed": 3,
      "data": {"source": "synthetic", "train_size": 3000, "test_size": 300, "dim": 20, "classes": 4},
      "model": {"type": "mlp", "hidden": [32]},
      "training": {"total_batch": 96, "learning_rate": 0.1, "iterations": 1000000, "eval_interval": 1000},
      "policy": {"type": "uniform"},
      "workers": [{"name": "pooled", "count": 3, "speed": 1000, "remote": true}],
      "elastic": {"initial_workers": )"
        + std::to_string(initial) + R"(, "min_workers": 1, "max_workers": 3}})";
}

// The pooled workers computing for `job`.
int members(const daemon::Daemon& d, JobId job)
{
    const auto pool = d.cluster().pool;
    return static_cast<int>(
        std::count_if(pool.begin(), pool.end(), [&](const PooledWorker& p) { return p.job == job; }));
}

int idle(const daemon::Daemon& d)
{
    const auto pool = d.cluster().pool;
    return static_cast<int>(std::count_if(pool.begin(), pool.end(), [](const PooledWorker& p) { return p.job < 0; }));
}

JobStatus status_of(const daemon::Daemon& d, JobId job)
{
    for (const JobStatus& s : d.jobs())
        if (s.job == job)
            return s;
    return {};
}

// Polls `condition` for up to 60 s.
template <class Condition> bool eventually(Condition condition)
{
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
        if (condition())
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
}

class WorkerPoolTest : public ::testing::Test {
protected:
    std::filesystem::path dir
        = std::filesystem::temp_directory_path() / ("fulcrum-worker-pool-" + std::to_string(::getpid()));
    std::vector<pid_t> workers;
    std::map<std::string, pid_t> pids; // by the name each was given (its host in the pool)
    void SetUp() override { std::filesystem::create_directories(dir); }
    void TearDown() override
    {
        for (const pid_t pid : workers) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
        std::filesystem::remove_all(dir);
    }
    daemon::DaemonOptions options() const
    {
        daemon::DaemonOptions o;
        o.data_dir = dir;
        o.cluster.servers = 1;
        o.cluster.gpus_per_server = 4;
        o.elastic.policy = sched::ElasticPolicy::Eps;
        o.elastic.round_s = 0.3;
        o.elastic.observe_iterations = 5;
        o.elastic.feedback = { sched::EarlyFeedback::Kind::Iterations, 30 };
        return o;
    }
    // One fulcrum-worker --pool on `served`'s port with a worker token, named `name`.
    pid_t spawn_pooled(Served& served, const std::string& name)
    {
        return spawn_pooled(served.server.port(), *served.tokens.token_for(Role::Worker), name);
    }
    pid_t spawn_pooled(unsigned short port, const std::string& token, const std::string& name)
    {
        const pid_t pid
            = testing_support::spawn_logged({ FULCRUM_WORKER_BINARY, "--server", "127.0.0.1:" + std::to_string(port),
                                                "--pool", "--token", token, "--name", name },
                dir / (name + ".log"));
        workers.push_back(pid);
        pids[name] = pid;
        return pid;
    }
    // Kills (SIGKILL, as a crash) the pooled process computing `job`'s `worker`; false when
    // no pooled process computes it.
    bool kill_pooled(const daemon::Daemon& d, JobId job, WorkerId worker)
    {
        for (const PooledWorker& p : d.cluster().pool)
            if (p.job == job && p.worker == worker) {
                const pid_t victim = pids.at(p.host);
                ::kill(victim, SIGKILL);
                ::waitpid(victim, nullptr, 0);
                std::erase(workers, victim);
                return true;
            }
        return false;
    }
    std::vector<EventRecord> recorded(JobId job) const
    {
        db::RunReader reader(dir / "runs" / ("job-" + std::to_string(job) + ".db"));
        return reader.events(reader.runs().at(0).id);
    }
};

bool has_event(const std::vector<EventRecord>& events, const std::string& kind, const std::string& text)
{
    return std::any_of(events.begin(), events.end(),
        [&](const EventRecord& e) { return e.kind == kind && e.message.find(text) != std::string::npos; });
}

} // namespace

TEST_F(WorkerPoolTest, EpsHandsPooledWorkersToRealModeJobsTakesThemBackAndReplacesALostOne)
{
    Served served(options(), dir / "tokens");
    daemon::Daemon& d = served.daemon;

    // The protocol's checks: a viewer may not join the pool, a connection joins it once and
    // then may not also join a job.
    const std::string token = *served.tokens.token_for(Role::Worker);
    const unsigned short port = served.server.port();
    WsClient viewer(port, *served.tokens.token_for(Role::Viewer));
    viewer.send(Hello { kProtocolVersion, "viewer" });
    EXPECT_EQ(viewer.request(JoinPool { "p", "x" }, "p").error->code, "not-authorized");
    {
        WsClient twice(port, token);
        twice.send(Hello { kProtocolVersion, "twice" });
        EXPECT_FALSE(twice.request(JoinPool { "p1", "twice-host" }, "p1").error);
        EXPECT_EQ(twice.request(JoinPool { "p2", "twice-host" }, "p2").error->code, "already-joined");
        EXPECT_EQ(twice.request(JoinJob { "j", 1, std::nullopt, "x" }, "j").error->code, "already-joined");
        ASSERT_TRUE(eventually([&] { return d.cluster().pool.size() == 1; }));
    } // its connection closes: it leaves the pool
    ASSERT_TRUE(eventually([&] { return d.cluster().pool.empty(); }));

    auto op = d.connect(Role::Operator, "op");
    std::vector<ServerMessage> seen;
    d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    d.receive(*op, encode(ClientMessage { Subscribe { "s", { Stream::Events, Stream::Iterations }, {}, {} } }));

    // A job fed by the pool waits for pooled workers.
    const JobId waiting = d.submit(pooled_job("waiting", 2), "test");
    ASSERT_TRUE(eventually([&] {
        const auto jobs = d.jobs();
        return !jobs.empty() && jobs.front().message.find("pooled workers") != std::string::npos;
    }));
    EXPECT_NE(d.jobs().front().message.find("fulcrum-worker --pool"), std::string::npos) << d.jobs().front().message;
    ASSERT_FALSE(
        request_reply(d, *op, seen, encode(ClientMessage { JobCommand { "cw", JobAction::Cancel, waiting } })).error);

    // With two in the pool, a job asking for two starts with both.
    spawn_pooled(served, "pool-1");
    spawn_pooled(served, "pool-2");
    ASSERT_TRUE(eventually([&] { return d.cluster().pool.size() == 2; }));
    const JobId a = d.submit(pooled_job("pooled-a", 2), "test");
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        const auto* r = std::get_if<IterationRows>(&m);
        return r && r->job == a && r->rows.size() == 2
            && std::all_of(r->rows.begin(), r->rows.end(), [](const IterationRecord& x) { return x.compute_s > 0; });
    })) << "job a's two pooled workers never computed a barrier together";
    EXPECT_EQ(members(d, a), 2);
    EXPECT_EQ(idle(d), 0);

    // The process computing job a's worker 1 dies: the job loses it at its barrier, and the
    // scheduler gives the slot the next pooled worker, which the job includes again.
    ASSERT_TRUE(kill_pooled(d, a, 1));
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        const auto* e = std::get_if<Event>(&m);
        return e && e->event.job == a && e->event.kind == "worker-lost";
    }));
    spawn_pooled(served, "pool-3");
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        const auto* e = std::get_if<Event>(&m);
        return e && e->event.job == a && e->event.kind == "worker-assigned"
            && e->event.message.find("has no process") != std::string::npos;
    })) << "job a's lost worker was never replaced";
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        const auto* r = std::get_if<IterationRows>(&m);
        return r && r->job == a && std::any_of(r->rows.begin(), r->rows.end(), [](const IterationRecord& x) {
            return x.worker == 1 && x.compute_s > 0;
        });
    })) << "job a's worker 1 never trained on its replacement";

    // Job b asks for one worker and none idles: eps takes one from job a once a is past its
    // early feedback (iteration 30). It leaves job a at a barrier, goes back to the pool and
    // is handed to job b.
    const JobId b = d.submit(pooled_job("pooled-b", 1), "test");
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        const auto* r = std::get_if<IterationRows>(&m);
        return r && r->job == b && !r->rows.empty() && r->rows.front().compute_s > 0;
    })) << "job b never trained";
    EXPECT_EQ(members(d, a), 1);
    EXPECT_EQ(members(d, b), 1);
    EXPECT_EQ(idle(d), 0);

    // With no idle pooled worker, an operator's add-worker is refused with the reason, and
    // the job goes on.
    const Reply refused = request_reply(
        d, *op, seen, encode(ClientMessage { ResizeJob { "rz", b, ResizeAction::AddWorker, std::nullopt } }));
    ASSERT_TRUE(refused.error);
    EXPECT_EQ(refused.error->code, "no-pooled-worker");
    EXPECT_NE(refused.error->message.find("fulcrum-worker --pool"), std::string::npos) << refused.error->message;

    // Another pooled worker: a growth round gives it to one of the jobs, as an add-worker by
    // the scheduler naming the pooled worker's host.
    spawn_pooled(served, "pool-4");
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        const auto* e = std::get_if<Event>(&m);
        return e && e->event.kind == "add-worker"
            && e->event.message.find("pooled worker on pool-4") != std::string::npos;
    })) << "no job grew on the idle pooled worker";

    // Cancelled, the jobs' workers wait in the pool again.
    ASSERT_FALSE(request_reply(d, *op, seen, encode(ClientMessage { JobCommand { "c", JobAction::Cancel, a } })).error);
    ASSERT_FALSE(
        request_reply(d, *op, seen, encode(ClientMessage { JobCommand { "c2", JobAction::Cancel, b } })).error);
    ASSERT_TRUE(eventually([&] { return members(d, a) + members(d, b) == 0; }));
    EXPECT_EQ(idle(d), 3);

    // The run stores keep each hand-over with the scheduler's reason.
    const auto events_a = recorded(a);
    EXPECT_TRUE(has_event(events_a, "worker-assigned", "pooled worker on pool-"));
    EXPECT_TRUE(has_event(events_a, "remove-worker", "released for job " + std::to_string(b)));
    EXPECT_TRUE(has_event(events_a, "worker-released", "released for job " + std::to_string(b)));
    EXPECT_TRUE(has_event(events_a, "worker-lost", ""));
    EXPECT_TRUE(has_event(events_a, "worker-assigned", "has no process"));
    EXPECT_TRUE(has_event(recorded(b), "worker-assigned", "pooled worker on pool-"));

    // Stopped, a pooled worker says what it served and exits 0.
    const pid_t first = pids.at("pool-1");
    ::kill(first, SIGTERM);
    int status = 0;
    ::waitpid(first, &status, 0);
    std::erase(workers, first);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

// A real-mode elastic job that mixes a local worker (slot 0, on a cluster GPU) with remote
// slots fed by the pool: it starts with its local worker on a GPU and a pooled process for
// slot 1, grows slot 2 on the next idle pooled process, and an operator's resizes of its
// local slot free and take a GPU, of a remote slot give the process back to the pool.
TEST_F(WorkerPoolTest, AJobMixingLocalAndRemoteWorkersTakesGpusForTheOneAndPooledWorkersForTheOther)
{
    Served served(options(), dir / "tokens");
    daemon::Daemon& d = served.daemon;
    spawn_pooled(served, "pool-1");
    ASSERT_TRUE(eventually([&] { return idle(d) == 1; }));

    auto op = d.connect(Role::Operator, "op");
    std::vector<ServerMessage> seen;
    d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    d.receive(*op, encode(ClientMessage { Subscribe { "s", { Stream::Events, Stream::Iterations }, {}, {} } }));
    std::string scenario = pooled_job("mixed", 2);
    const std::string slots = R"([{"name": "pooled", "count": 3, "speed": 1000, "remote": true}])";
    scenario.replace(scenario.find(slots), slots.size(),
        R"([{"name": "local", "speed": 1000}, {"name": "pooled", "count": 2, "speed": 1000, "remote": true}])");
    const JobId job = d.submit(scenario, "test");
    const auto gpus_of_job = [&] { return testing_support::gpus_in_book(d, job); };
    ASSERT_TRUE(wait_for(*op, seen,
        [&](const ServerMessage& m) {
            const auto* r = std::get_if<IterationRows>(&m);
            return r && r->job == job && r->rows.size() == 2
                && std::all_of(
                    r->rows.begin(), r->rows.end(), [](const IterationRecord& x) { return x.compute_s > 0; });
        }))
        << "its local worker and its pooled one never computed a barrier together: " << status_of(d, job).message;
    EXPECT_EQ(gpus_of_job(), 1) << "its local worker's GPU";
    EXPECT_EQ(members(d, job), 1) << "a pooled process for slot 1";
    EXPECT_GE(status_of(d, job).placement.at(0), 0) << "slot 0 is placed on a GPU";
    EXPECT_EQ(status_of(d, job).placement.at(1), -1);

    spawn_pooled(served, "pool-2");
    std::optional<EventRecord> grown;
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        if (const auto* e = std::get_if<Event>(&m); e && e->event.job == job && e->event.kind == "add-worker")
            grown = e->event;
        return grown.has_value();
    })) << "no growth round gave slot 2 the idle pooled worker";
    EXPECT_EQ(grown->worker, 2);
    EXPECT_NE(grown->message.find("pooled worker on pool-2"), std::string::npos) << grown->message;
    EXPECT_EQ(gpus_of_job(), 1) << "a remote slot takes no GPU";

    // Frozen, so that no verdict on the step moves it under the operator's resizes.
    ASSERT_FALSE(
        request_reply(d, *op, seen, encode(ClientMessage { JobCommand { "f", JobAction::Freeze, job } })).error);
    const auto resize = [&](ResizeAction action, WorkerId worker) {
        return request_reply(d, *op, seen, encode(ClientMessage { ResizeJob { "r", job, action, worker } }));
    };
    const Reply local_removed = resize(ResizeAction::RemoveWorker, 0);
    ASSERT_FALSE(local_removed.error) << local_removed.error->code << ": " << local_removed.error->message;
    EXPECT_EQ(gpus_of_job(), 0) << "the local worker's GPU is free at once";
    // The trainer's event may come before the command's reply, read with it already.
    ASSERT_TRUE(testing_support::seen_or_wait_for(*op, seen, [&](const ServerMessage& m) {
        const auto* e = std::get_if<Event>(&m);
        return e && e->event.job == job && e->event.kind == "remove-worker" && e->event.worker == 0;
    })) << "the trainer never removed worker 0";
    const Reply local_added = resize(ResizeAction::AddWorker, 0);
    ASSERT_FALSE(local_added.error) << local_added.error->code << ": " << local_added.error->message;
    EXPECT_EQ(gpus_of_job(), 1) << "an idle GPU for the local slot, not a pooled process";
    const Reply remote_removed = resize(ResizeAction::RemoveWorker, 1);
    ASSERT_FALSE(remote_removed.error) << remote_removed.error->code << ": " << remote_removed.error->message;
    ASSERT_TRUE(eventually([&] { return idle(d) == 1; })) << "slot 1's process waits in the pool again";
    EXPECT_EQ(gpus_of_job(), 1);
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        const auto* r = std::get_if<IterationRows>(&m);
        return r && r->job == job && std::any_of(r->rows.begin(), r->rows.end(), [](const IterationRecord& x) {
            return x.worker == 0 && x.compute_s > 0;
        }) && std::none_of(r->rows.begin(), r->rows.end(), [](const IterationRecord& x) {
            return x.worker == 1 && x.compute_s > 0;
        });
    })) << "the job never trained on its local worker without slot 1";

    ASSERT_FALSE(
        request_reply(d, *op, seen, encode(ClientMessage { JobCommand { "c", JobAction::Cancel, job } })).error);
    ASSERT_TRUE(eventually([&] { return idle(d) == 2 && gpus_of_job() == 0; }));
    d.stop_all();
    const auto events = recorded(job);
    EXPECT_TRUE(has_event(events, "job-placed", "and, its local ones, on"));
    EXPECT_TRUE(has_event(events, "worker-assigned", "pooled worker on pool-1 takes worker 1"));
    EXPECT_TRUE(has_event(events, "worker-released", "leaves worker 1"));
    // The slot is the events' worker too, so the console's Events list and a replay name it.
    for (const char* kind : { "worker-assigned", "worker-released" })
        EXPECT_TRUE(std::any_of(events.begin(), events.end(), [&](const EventRecord& e) {
            return e.kind == kind && e.worker == std::optional<WorkerId>(1);
        })) << kind;
}

// Under kill-restart the pool feeds a job the same way, and a growth step is carried out by
// a checkpoint, a stop and a restart: the pooled process given the new slot stays connected
// through the restart and computes the restarted job's batches.
TEST_F(WorkerPoolTest, KillRestartGrowsAPooledJobByRestartingItWithTheNewWorker)
{
    daemon::DaemonOptions o = options();
    o.elastic.policy = sched::ElasticPolicy::KillRestart;
    Served served(o, dir / "tokens");
    daemon::Daemon& d = served.daemon;
    auto op = d.connect(Role::Operator, "op");
    std::vector<ServerMessage> seen;
    d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    d.receive(*op, encode(ClientMessage { Subscribe { "s", { Stream::Events, Stream::Iterations }, {}, {} } }));
    spawn_pooled(served, "pool-1");
    spawn_pooled(served, "pool-2");
    ASSERT_TRUE(eventually([&] { return d.cluster().pool.size() == 2; }));

    const JobId job = d.submit(pooled_job("restarted", 1), "test");
    std::optional<EventRecord> restarted;
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        const auto* e = std::get_if<Event>(&m);
        if (e && e->event.job == job && e->event.kind == "job-restarted")
            restarted = e->event;
        return restarted.has_value();
    })) << "the job was never restarted to grow";
    EXPECT_EQ(restarted->actor, "scheduler (kill-restart)");
    EXPECT_NE(restarted->message.find("pooled worker on pool-"), std::string::npos) << restarted->message;
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        const auto* r = std::get_if<IterationRows>(&m);
        return r && r->job == job && std::any_of(r->rows.begin(), r->rows.end(), [](const IterationRecord& x) {
            return x.worker == 1 && x.compute_s > 0;
        });
    })) << "the pooled worker added by the restart never computed";
    EXPECT_EQ(members(d, job), 2);

    ASSERT_FALSE(
        request_reply(d, *op, seen, encode(ClientMessage { JobCommand { "c", JobAction::Cancel, job } })).error);
    ASSERT_TRUE(eventually([&] { return idle(d) == 2; })) << "the cancelled job's pooled workers are idle again";
    const auto events = recorded(job);
    EXPECT_FALSE(has_event(events, "worker-lost", "")) << "a restart loses no pooled worker";
}

// Under --elastic static the pool feeds the same jobs first come, first served: a job starts
// only when its whole request idles in the pool, a job behind one that waits waits too (even
// when its own request would fit), and a job keeps what it started with until it ends.
TEST_F(WorkerPoolTest, StaticHandsOutWholeRequestsFirstComeFirstServed)
{
    daemon::DaemonOptions o = options();
    o.elastic.policy = sched::ElasticPolicy::StaticFifo;
    Served served(o, dir / "tokens");
    daemon::Daemon& d = served.daemon;
    for (const char* name : { "pool-1", "pool-2", "pool-3" })
        spawn_pooled(served, name);
    ASSERT_TRUE(eventually([&] { return idle(d) == 3; }));

    const JobId first = d.submit(pooled_job("first", 2), "test");
    ASSERT_TRUE(eventually([&] { return members(d, first) == 2; })) << status_of(d, first).message;
    const JobId second = d.submit(pooled_job("second", 2), "test");
    const JobId third = d.submit(pooled_job("third", 1), "test");
    ASSERT_TRUE(eventually([&] { return status_of(d, first).iteration >= 20; }));
    EXPECT_EQ(status_of(d, second).state, JobState::Queued) << "static takes nothing from a running job";
    EXPECT_NE(status_of(d, second).message.find("whole request"), std::string::npos) << status_of(d, second).message;
    EXPECT_EQ(status_of(d, third).state, JobState::Queued) << "first come, first served: one idle worker is not its";
    EXPECT_NE(status_of(d, third).message.find("behind job " + std::to_string(second)), std::string::npos)
        << status_of(d, third).message;
    EXPECT_EQ(idle(d), 1);
    EXPECT_EQ(members(d, first), 2) << "no growth round under static";

    d.cancel(first, EventActor::person("admin", "test"));
    ASSERT_TRUE(eventually([&] { return members(d, second) == 2 && members(d, third) == 1; }))
        << status_of(d, second).message << " / " << status_of(d, third).message;
    ASSERT_TRUE(eventually([&] { return status_of(d, third).iteration >= 10; })) << "the pooled workers train it";
    d.cancel(second, EventActor::person("admin", "test"));
    d.cancel(third, EventActor::person("admin", "test"));
    ASSERT_TRUE(eventually([&] { return idle(d) == 3; }));
    d.stop_all();
    EXPECT_TRUE(has_event(recorded(second), "worker-assigned",
        "static: job " + std::to_string(second) + " starts with its whole request"));
    // The workers that computed for the first job and then for another (the same data and
    // seed) took the data they had loaded instead of reading it again.
    int reused = 0;
    for (const auto& [name, pid] : pids) {
        std::ifstream log(dir / (name + ".log"));
        const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
        reused += text.find("data=\"already loaded (the last slot's)\"") != std::string::npos ? 1 : 0;
    }
    EXPECT_GE(reused, 1);
}

// An operator's resize of a pooled job that waits in the queue is held for its trainer, and
// holds nothing up: placed, the job is given a process for each member it starts with, its
// trainer starts, and at its first barrier it makes the change (here, worker 1 leaves and its
// process goes back to the pool). Before, the held ask counted as in flight, no process was
// assigned, and the job waited forever for workers that its ask kept away.
TEST_F(WorkerPoolTest, AResizeAskedWhileAPooledJobIsQueuedIsMadeOnceItTrains)
{
    daemon::DaemonOptions o = options();
    o.elastic.policy = sched::ElasticPolicy::StaticFifo;
    Served served(o, dir / "tokens");
    daemon::Daemon& d = served.daemon;
    auto op = d.connect(Role::Operator, "op");
    std::vector<ServerMessage> seen;
    d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    const JobId job = d.submit(pooled_job("held-resize", 2), "test");
    ASSERT_EQ(status_of(d, job).state, JobState::Queued) << "no pooled process yet";
    const Reply asked = request_reply(
        d, *op, seen, encode(ClientMessage { ResizeJob { "rz", job, ResizeAction::RemoveWorker, WorkerId { 1 } } }));
    ASSERT_FALSE(asked.error) << asked.error->message;

    for (const char* name : { "pool-1", "pool-2" })
        spawn_pooled(served, name);
    ASSERT_TRUE(eventually([&] { return status_of(d, job).iteration >= 5; }))
        << members(d, job) << " members: " << status_of(d, job).message;
    ASSERT_TRUE(eventually([&] { return members(d, job) == 1 && idle(d) == 1; }))
        << members(d, job) << " members, " << idle(d) << " idle";
    d.stop_all();
    EXPECT_TRUE(has_event(recorded(job), "remove-worker", "")) << "made by its trainer";
}

// Under --elastic static an operator's resize-job of a pooled job goes through the pool as
// under eps: an added remote worker takes an idle pooled process (refused with
// no-pooled-worker when none idles), a removed one's process goes back to the pool once the
// trainer has dropped it. A process that dies is not replaced (static decides nothing).
TEST_F(WorkerPoolTest, UnderStaticAnOperatorsResizeOfAPooledJobTakesAndGivesBackPooledProcesses)
{
    daemon::DaemonOptions o = options();
    o.elastic.policy = sched::ElasticPolicy::StaticFifo;
    Served served(o, dir / "tokens");
    daemon::Daemon& d = served.daemon;
    for (const char* name : { "pool-1", "pool-2" })
        spawn_pooled(served, name);
    ASSERT_TRUE(eventually([&] { return idle(d) == 2; }));
    auto op = d.connect(Role::Operator, "op");
    std::vector<ServerMessage> seen;
    d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    d.receive(*op, encode(ClientMessage { Subscribe { "s", { Stream::Events, Stream::Iterations }, {}, {} } }));
    const JobId job = d.submit(pooled_job("static-pooled", 1), "test");
    ASSERT_TRUE(eventually([&] { return members(d, job) == 1; })) << status_of(d, job).message;
    const auto resize = [&](ResizeAction action, std::optional<WorkerId> worker) {
        return request_reply(d, *op, seen, encode(ClientMessage { ResizeJob { "rz", job, action, worker } }));
    };

    // The operator adds a worker: the idle pooled process takes slot 1 and computes.
    ASSERT_FALSE(resize(ResizeAction::AddWorker, std::nullopt).error);
    EXPECT_EQ(members(d, job), 2);
    EXPECT_EQ(idle(d), 0);
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        const auto* r = std::get_if<IterationRows>(&m);
        return r && r->job == job && std::any_of(r->rows.begin(), r->rows.end(), [](const IterationRecord& x) {
            return x.worker == 1 && x.compute_s > 0;
        });
    })) << "the added worker never computed";

    // None idles now: a third is refused with the reason, and the job goes on.
    const Reply refused = resize(ResizeAction::AddWorker, std::nullopt);
    ASSERT_TRUE(refused.error);
    EXPECT_EQ(refused.error->code, "no-pooled-worker");
    EXPECT_EQ(members(d, job), 2);

    // Removed, worker 1's process goes back to the pool once the trainer has dropped it.
    ASSERT_FALSE(resize(ResizeAction::RemoveWorker, WorkerId { 1 }).error);
    ASSERT_TRUE(eventually([&] { return idle(d) == 1 && members(d, job) == 1; }))
        << members(d, job) << " members, " << idle(d) << " idle";
    const std::int64_t after = status_of(d, job).iteration;
    ASSERT_TRUE(eventually([&] { return status_of(d, job).iteration >= after + 10; })) << "the job goes on with one";

    // Added again, slot 1 takes the idle process. Its process dies: the job goes on without
    // it, and static gives the slot no other process, even one idling in the pool.
    ASSERT_FALSE(resize(ResizeAction::AddWorker, WorkerId { 1 }).error);
    EXPECT_EQ(idle(d), 0);
    ASSERT_TRUE(kill_pooled(d, job, 1));
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        const auto* e = std::get_if<Event>(&m);
        return e && e->event.job == job && e->event.kind == "worker-lost";
    }));
    spawn_pooled(served, "pool-3");
    ASSERT_TRUE(eventually([&] { return idle(d) == 1; }));
    const std::int64_t lost_at = status_of(d, job).iteration;
    ASSERT_TRUE(eventually([&] { return status_of(d, job).iteration >= lost_at + 10; }));
    EXPECT_EQ(idle(d), 1) << "static gave the lost slot a process";
    EXPECT_EQ(members(d, job), 1);

    d.cancel(job, EventActor::person("admin", "test"));
    ASSERT_TRUE(eventually([&] { return idle(d) == 2 && members(d, job) == 0; }));
    d.stop_all();
    const auto events = recorded(job);
    EXPECT_TRUE(has_event(events, "worker-assigned", "added by operator"));
    EXPECT_TRUE(has_event(events, "add-worker", ""));
    EXPECT_TRUE(has_event(events, "remove-worker", ""));
    EXPECT_TRUE(has_event(events, "worker-released", "removed by operator"));
}

// A pooled worker waiting in the pool with nothing to do stops at once on SIGTERM (as
// `systemctl stop` sends), says what it served and exits 0; fulcrumd sees it leave the
// pool. Its read of the next message wakes for the signal instead of sleeping through it
// until fulcrumd's next frame.
TEST_F(WorkerPoolTest, AnIdlePooledWorkerStopsOnSigtermAndSaysWhatItServed)
{
    Served served(options(), dir / "tokens");
    daemon::Daemon& d = served.daemon;
    const pid_t pid = spawn_pooled(served, "idle-1");
    ASSERT_TRUE(eventually([&] { return idle(d) == 1; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(300)); // well into its wait for a message
    ::kill(pid, SIGTERM);
    int status = -1;
    const bool exited = eventually([&] { return ::waitpid(pid, &status, WNOHANG) == pid; });
    ASSERT_TRUE(exited) << "the idle pooled worker did not stop on SIGTERM";
    std::erase(workers, pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    EXPECT_TRUE(eventually([&] { return d.cluster().pool.empty(); }));
    std::ifstream log(dir / "idle-1.log");
    const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("pooled: 0 job slots served"), std::string::npos) << text;
}
