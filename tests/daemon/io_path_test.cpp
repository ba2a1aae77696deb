// Issue 41's guard: no WebSocket frame handler waits for the cluster core or takes a lock
// on state another thread holds. Every client message goes through Daemon::receive (and a
// result through receive_binary) while jobs run, and IoPath counts each time a handler
// waits for the core's thread or takes a StateMutex; both counts stay 0. What a handler
// still locks is a hand-off (a send queue, a task queue, a job's result slot), held for a
// push or a pop. A debug build stops at the first breach instead.

#include "daemon/daemon.h"
#include "daemon_support.h"
#include "serve/core_thread.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <gtest/gtest.h>
#include <set>
#include <thread>
#include <unistd.h>

using namespace fulcrum;
using namespace fulcrum::protocol;
using testing_support::request_reply;
using testing_support::wait_for;

namespace {

const char* kVirtualJob = R"({"name": "io-path", "seed": 2, "mode": "paced", "pace": 1,
  "data": {"source": "synthetic", "train_size": 600, "test_size": 100, "dim": 8, "classes": 3},
  "model": {"type": "mlp", "hidden": [8]},
  "training": {"total_batch": 32, "learning_rate": 0.1, "iterations": 100000, "eval_interval": 50},
  "policy": {"type": "uniform"},
  "elastic": {"min_workers": 1, "max_workers": 3, "initial_workers": 2},
  "workers": [{"speed": 1000, "count": 3}]})";

const char* kRemoteJob = R"({"name": "io-remote", "seed": 3, "mode": "real",
  "data": {"source": "synthetic", "train_size": 600, "test_size": 100, "dim": 8, "classes": 3},
  "model": {"type": "mlp", "hidden": [8]},
  "training": {"total_batch": 32, "learning_rate": 0.1, "iterations": 100000, "eval_interval": 500},
  "policy": {"type": "uniform"},
  "workers": [{"speed": 1000}, {"speed": 1000, "remote": true}]})";

const char* kExternalJob = R"({"name": "io-external", "external": {"framework": "pytorch", "rank_timeout_s": 30},
  "training": {"total_batch": 30, "iterations": 5}, "policy": {"type": "uniform"},
  "workers": [{"name": "rank", "count": 1}]})";

// Waits for a text frame `accept` takes, passing over the binary task frames a remote
// worker's connection also gets.
template <class Accept> bool wait_for_text(serve::Client& client, Accept accept)
{
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
        while (auto frame = client.queue().pop())
            if (!(*frame)->empty() && (**frame)[0] == '{')
                if (const auto decoded = decode_server(**frame); decoded && accept(*decoded.message))
                    return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
}

class IoPathTest : public ::testing::Test {
protected:
    std::filesystem::path dir
        = std::filesystem::temp_directory_path() / ("fulcrum-io-path-" + std::to_string(::getpid()));
    void SetUp() override { std::filesystem::create_directories(dir); }
    void TearDown() override { std::filesystem::remove_all(dir); }
};

} // namespace

TEST_F(IoPathTest, NoFrameHandlerWaitsForTheClusterCore)
{
    daemon::DaemonOptions options;
    options.data_dir = dir;
    options.cluster.servers = 1;
    options.cluster.gpus_per_server = 4;
    daemon::Daemon d(options);
    using Breach = serve::IoPath::Breach;
    const std::uint64_t waits_before = serve::IoPath::breaches(Breach::WaitedForCore);
    const std::uint64_t locks_before = serve::IoPath::breaches(Breach::TookStateLock);

    std::set<std::size_t> kinds; // the ClientMessage alternatives sent
    const auto ask = [&](serve::Client& client, std::vector<ServerMessage>& seen, const ClientMessage& m) {
        kinds.insert(m.index());
        return request_reply(d, client, seen, encode(m));
    };
    auto op = d.connect(Role::Operator, "op");
    std::vector<ServerMessage> op_seen;
    kinds.insert(ClientMessage { Hello {} }.index());
    d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    const Reply submitted = ask(*op, op_seen, SubmitJob { "s1", kVirtualJob });
    ASSERT_FALSE(submitted.error) << submitted.error->message;
    const JobId job = *submitted.job;
    const JobId remote = *ask(*op, op_seen, SubmitJob { "s2", kRemoteJob }).job;
    const JobId external = *ask(*op, op_seen, SubmitJob { "s3", kExternalJob }).job;
    EXPECT_FALSE(ask(*op, op_seen, Subscribe { "sub", {}, job, {} }).error);
    EXPECT_FALSE(ask(*op, op_seen, ListJobs { "l" }).error);
    EXPECT_FALSE(ask(*op, op_seen, ListCapabilities { "c" }).error);
    EXPECT_FALSE(ask(*op, op_seen, ListRuns { "r" }).error);
    WorkerCommand pin;
    pin.id = "pin";
    pin.job = job;
    pin.batch_size = 4;
    EXPECT_FALSE(ask(*op, op_seen, pin).error);
    EXPECT_FALSE(ask(*op, op_seen, ChangeJob { "p", JobSetting::Policy, job, R"({"type": "uniform"})" }).error);
    EXPECT_FALSE(ask(*op, op_seen, JobCommand { "pause", JobAction::Pause, job }).error);
    EXPECT_FALSE(ask(*op, op_seen, JobCommand { "resume", JobAction::Resume, job }).error);
    EXPECT_FALSE(ask(*op, op_seen, ResizeJob { "grow", job, ResizeAction::AddWorker, std::nullopt }).error);
    EXPECT_FALSE(ask(*op, op_seen, SetClusterPolicy { "policy", "ff", std::nullopt, std::nullopt }).error);
    SubmitWorkload workload { "w", { { kVirtualJob, 1000 } } };
    workload.jobs[0].scenario_json.replace(workload.jobs[0].scenario_json.find(R"("mode": "paced", "pace": 1)"),
        std::string_view(R"("mode": "paced", "pace": 1)").size(), R"("mode": "virtual")");
    const Reply arriving = ask(*op, op_seen, workload);
    EXPECT_FALSE(arriving.error) << arriving.error->message;
    EXPECT_FALSE(ask(*op, op_seen, Unsubscribe { "sub" }).error);

    // A remote worker joins, and a frame that is no result of its comes back as an error.
    auto worker = d.connect(Role::Worker, "worker");
    d.receive(*worker, encode(ClientMessage { Hello { kProtocolVersion, "w" } }));
    kinds.insert(ClientMessage { JoinJob {} }.index());
    d.receive(*worker, encode(ClientMessage { JoinJob { "j", remote, 1, "host" } }));
    EXPECT_TRUE(wait_for_text(*worker, [](const ServerMessage& m) {
        const auto* r = std::get_if<Reply>(&m);
        return r && r->id == "j" && !r->error;
    }));
    // Its heartbeat says only that it is alive: no reply.
    kinds.insert(ClientMessage { Heartbeat {} }.index());
    const auto heard_before = worker->last_heard();
    d.receive(*worker, encode(ClientMessage { Heartbeat {} }));
    EXPECT_GE(worker->last_heard(), heard_before);
    d.receive_binary(*worker, "not a result");
    EXPECT_TRUE(wait_for_text(*worker, [](const ServerMessage& m) {
        const auto* e = std::get_if<ProtocolError>(&m);
        return e && e->error.code == "unexpected-binary-frame";
    }));
    auto pooled = d.connect(Role::Worker, "pooled");
    std::vector<ServerMessage> pooled_seen;
    d.receive(*pooled, encode(ClientMessage { Hello { kProtocolVersion, "p" } }));
    EXPECT_FALSE(ask(*pooled, pooled_seen, JoinPool { "pool", "pool-host" }).error);

    // An external job's rank joins and reports that it is ready; the plan comes at the barrier.
    auto rank = d.connect(Role::Worker, "rank");
    std::vector<ServerMessage> rank_seen;
    d.receive(*rank, encode(ClientMessage { Hello { kProtocolVersion, "r" } }));
    EXPECT_FALSE(ask(*rank, rank_seen, JoinJob { "rj", external, 0, "rank-host" }).error);
    ReportIteration ready;
    ready.id = "ready";
    ready.job = external;
    ready.iteration = -1;
    const Reply plan = ask(*rank, rank_seen, ready);
    EXPECT_FALSE(plan.error) << plan.error->message;
    EXPECT_TRUE(plan.plan.has_value());

    // A replay of the running job's store is opened and closed (an error reply, should its
    // store hold no run yet, goes through the same handlers).
    const Reply replay = ask(*op, op_seen, OpenReplay { "o", "job-" + std::to_string(job) + ".db", 1, 0, 0, true });
    ask(*op, op_seen,
        ReplayCommand {
            "close", ReplayAction::Close, replay.replay.value_or(0), std::nullopt, std::nullopt, std::nullopt, 1 });
    EXPECT_FALSE(ask(*op, op_seen, JobCommand { "cancel", JobAction::Cancel, job }).error);
    EXPECT_FALSE(d.metrics_text().empty());
    d.disconnect(*worker);
    d.disconnect(*pooled);
    d.disconnect(*rank);

    EXPECT_EQ(kinds.size(), std::variant_size_v<ClientMessage>) << "every client message goes through a handler";
    EXPECT_EQ(serve::IoPath::breaches(Breach::WaitedForCore), waits_before);
    EXPECT_EQ(serve::IoPath::breaches(Breach::TookStateLock), locks_before);
    d.stop_all();
}

// The check itself: a StateMutex taken off an I/O path is no breach, on one it is (and a
// debug build stops there).
TEST(IoPathCheck, AStateLockTakenOnAnIoPathIsABreach)
{
    using Breach = serve::IoPath::Breach;
    serve::StateMutex state;
    const std::uint64_t before = serve::IoPath::breaches(Breach::TookStateLock);
    {
        const std::lock_guard lock(state);
    }
    EXPECT_EQ(serve::IoPath::breaches(Breach::TookStateLock), before);
    EXPECT_DEBUG_DEATH(
        {
            const serve::IoPath on_io_path;
            const std::lock_guard lock(state);
        },
        "took a state lock");
#ifdef NDEBUG
    EXPECT_EQ(serve::IoPath::breaches(Breach::TookStateLock), before + 1);
#endif
}

// Read-copy-update: writers racing each other all land, and a reader's snapshot never
// changes under it.
TEST(IoPathCheck, CopyOnWriteKeepsEveryRacingChangeAndTheReadersSnapshots)
{
    std::atomic<std::shared_ptr<const std::vector<int>>> published { std::make_shared<const std::vector<int>>() };
    const std::shared_ptr<const std::vector<int>> first = published.load();
    // A reader that holds snapshots while the writers go on sees each stay as it was taken.
    std::atomic<bool> writing { true };
    std::atomic<int> changed_under_reader { 0 };
    std::thread reader([&] {
        while (writing.load()) {
            const std::shared_ptr<const std::vector<int>> seen = published.load();
            const std::vector<int> copy = *seen;
            std::this_thread::yield();
            if (*seen != copy)
                ++changed_under_reader;
        }
    });
    std::vector<std::thread> writers;
    writers.reserve(4);
    for (int t = 0; t < 4; ++t)
        writers.emplace_back([&, t] {
            for (int i = 0; i < 250; ++i)
                serve::copy_on_write(published, [&](std::vector<int>& v) {
                    v.push_back(t * 1000 + i);
                    return true;
                });
        });
    for (std::thread& w : writers)
        w.join();
    writing = false;
    reader.join();
    EXPECT_EQ(changed_under_reader.load(), 0);
    EXPECT_TRUE(first->empty());
    std::vector<int> all = *published.load();
    std::sort(all.begin(), all.end());
    ASSERT_EQ(all.size(), 1000u);
    EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
}

// A session that ended sets its wake and closer to nothing (ws_server's finish): a frame
// sent to the client after that, by a trainer or a replay that has not heard yet, is queued
// and calls neither; an empty function stored as one would throw bad_function_call into
// that thread.
TEST(IoPathCheck, AClientWhoseSessionEndedIsSentToWithoutCallingItsWake)
{
    serve::Client client(1, Role::Viewer, "gone", 16);
    const auto reply = [](std::string id) {
        Reply r;
        r.id = std::move(id);
        return r;
    };
    int woken = 0;
    client.set_wake([&] { ++woken; });
    client.send(reply("first"));
    EXPECT_EQ(woken, 1);
    client.set_wake({});
    client.set_closer({});
    ASSERT_TRUE(client.queue().pop().has_value());
    EXPECT_NO_THROW(client.send(reply("after the end")));
    EXPECT_NO_THROW(client.close_for("gone"));
    EXPECT_EQ(woken, 1);
    EXPECT_TRUE(client.queue().pop().has_value());
}
