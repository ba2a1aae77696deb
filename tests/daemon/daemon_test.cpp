#include "common/error.h"
#include "daemon/auth.h"
#include "daemon/daemon.h"
#include "daemon/send_queue.h"
#include "daemon/ws_server.h"
#include "db/run_reader.h"

#include "ws_client.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <unistd.h>

using namespace fulcrum;
using namespace fulcrum::protocol;
using testing_support::WsClient;

namespace {

// A paced job slow enough to command while it runs: 4 workers, one of them slow.
const char* kScenario = R"({
  "name": "daemon-test",
  "seed": 5,
  "mode": "paced",
  "pace": 2,
  "data": { "source": "synthetic", "train_size": 1200, "test_size": 200, "dim": 12, "classes": 3 },
  "model": { "type": "mlp", "hidden": [16] },
  "training": { "total_batch": 64, "learning_rate": 0.1, "iterations": 400, "eval_interval": 50 },
  "policy": { "type": "uniform" },
  "workers": [ { "speed": 3000, "count": 3 }, { "speed": 1000 } ]
})";

class DaemonTest : public ::testing::Test {
protected:
    std::filesystem::path dir = std::filesystem::temp_directory_path() / ("fulcrum-daemon-" + std::to_string(::getpid()));
    void SetUp() override { std::filesystem::create_directories(dir); }
    void TearDown() override { std::filesystem::remove_all(dir); }

    daemon::DaemonOptions options()
    {
        daemon::DaemonOptions o;
        o.data_dir = dir;
        o.worker_slots = 8;
        return o;
    }
};

std::vector<ServerMessage> drain(daemon::Client& client)
{
    std::vector<ServerMessage> out;
    while (auto frame = client.queue().pop()) {
        const auto decoded = decode_server(**frame);
        EXPECT_TRUE(decoded) << **frame;
        if (decoded)
            out.push_back(*decoded.message);
    }
    return out;
}

std::optional<Reply> reply_to(const std::vector<ServerMessage>& messages, const std::string& id)
{
    for (const auto& m : messages)
        if (const auto* r = std::get_if<Reply>(&m); r && r->id == id)
            return *r;
    return std::nullopt;
}

} // namespace

TEST(SendQueue, DropsRowsBeyondItsLimitCoalescesStatusAndReportsWhatWasMissed)
{
    daemon::SendQueue queue(2);
    const auto frame = [](const char* text) { return std::make_shared<const std::string>(text); };
    EXPECT_TRUE(queue.push(frame("r1")));
    EXPECT_FALSE(queue.push(frame("r2")));
    EXPECT_FALSE(queue.push(frame("r3"))); // full: dropped
    EXPECT_FALSE(queue.push(frame("s1"), "job-status:1"));
    EXPECT_FALSE(queue.push(frame("s2"), "job-status:1")); // replaces s1
    EXPECT_EQ(queue.size(), 3u);
    const auto notice = decode_server(**queue.pop());
    ASSERT_TRUE(notice);
    const auto missed = std::get<Missed>(*notice.message);
    EXPECT_EQ(missed.dropped, 1);
    EXPECT_EQ(missed.coalesced, 1);
    EXPECT_EQ(**queue.pop(), "r1");
    EXPECT_EQ(**queue.pop(), "r2");
    EXPECT_EQ(**queue.pop(), "s2");
    EXPECT_FALSE(queue.pop());
    EXPECT_EQ(queue.missed().dropped, 1);
}

TEST_F(DaemonTest, EveryErrorClassIsAReplyAndTheClientStaysConnected)
{
    daemon::Daemon d(options());
    auto viewer = d.connect(Role::Viewer, "viewer");
    EXPECT_EQ(d.receive(*viewer, R"({"type": "list-jobs", "id": "early"})"), daemon::Daemon::After::KeepOpen);
    EXPECT_EQ(reply_to(drain(*viewer), "early")->error->code, "hello-first");
    d.receive(*viewer, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    ASSERT_TRUE(std::holds_alternative<Welcome>(drain(*viewer).at(0)));

    d.receive(*viewer, "{not json");
    auto messages = drain(*viewer);
    ASSERT_EQ(messages.size(), 1u);
    EXPECT_EQ(std::get<ProtocolError>(messages[0]).error.code, "malformed-json");

    d.receive(*viewer, R"({"type": "pin-worker", "id": "p", "job": 1, "worker": 0, "batch_size": 8})");
    EXPECT_EQ(reply_to(drain(*viewer), "p")->error->code, "not-authorized");

    auto op = d.connect(Role::Operator, "op");
    d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    drain(*op);
    const std::map<std::string, std::string> expected {
        { R"({"type": "reboot", "id": "a"})", "unknown-type" },
        { R"({"type": "pin-worker", "id": "b", "job": 1, "worker": 0})", "missing-field" },
        { R"({"type": "pin-worker", "id": "c", "job": 1, "worker": "w", "batch_size": 8})", "wrong-type" },
        { R"({"type": "pin-worker", "id": "d", "job": 99, "worker": 0, "batch_size": 8})", "unknown-job" },
        { R"({"type": "submit-job", "id": "e", "scenario": {"workers": []}})", "invalid-scenario" },
        { R"({"type": "inject-straggler", "id": "f", "job": 1, "worker": 0, "slowdown": -2})", "illegal-value" },
    };
    for (const auto& [frame, code] : expected) {
        d.receive(*op, frame);
        const std::string id = decode_client(frame).request_id;
        const auto reply = reply_to(drain(*op), id);
        ASSERT_TRUE(reply) << frame;
        ASSERT_TRUE(reply->error) << frame;
        EXPECT_EQ(reply->error->code, code) << frame;
    }

    auto old = d.connect(Role::Operator, "old");
    EXPECT_EQ(d.receive(*old, R"({"type": "hello", "version": 0})"), daemon::Daemon::After::Close);
    EXPECT_EQ(std::get<ProtocolError>(drain(*old).at(0)).error.code, "version-mismatch");
}

TEST_F(DaemonTest, TheTokenFileIsCreatedPrivateAndGrantsEachRole)
{
    bool created = false;
    const auto path = dir / "tokens";
    const auto store = daemon::TokenStore::load_or_create(path, &created);
    EXPECT_TRUE(created);
    EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::all,
        std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    const auto op = store.token_for(Role::Operator);
    ASSERT_TRUE(op);
    EXPECT_EQ(store.authorize("Bearer " + *op), Role::Operator);
    EXPECT_EQ(store.authorize("Bearer " + *store.token_for(Role::Viewer)), Role::Viewer);
    EXPECT_FALSE(store.authorize("Bearer nope"));
    EXPECT_FALSE(store.authorize(*op));
    bool again = true;
    daemon::TokenStore::load_or_create(path, &again);
    EXPECT_FALSE(again);
    std::ofstream(dir / "bad") << "admin 0123456789abcdef0123\n";
    try {
        daemon::TokenStore::load_or_create(dir / "bad");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "line 1");
    }
}

TEST_F(DaemonTest, ALiveJobOverTheWebSocketTakesPinAndExcludeAndIsRecordedAsStreamed)
{
    daemon::Daemon d(options());
    const auto tokens = daemon::TokenStore::load_or_create(dir / "tokens");
    daemon::ServerOptions server_options;
    server_options.port = 0;
    daemon::WebSocketServer server(d, tokens, server_options);
    server.start();

    EXPECT_THROW(WsClient(server.port(), ""), boost::system::system_error);      // no token
    EXPECT_THROW(WsClient(server.port(), "wrong-token-0000"), boost::system::system_error);

    WsClient viewer(server.port(), *tokens.token_for(Role::Viewer));
    viewer.send(Hello { kProtocolVersion, "viewer" });
    EXPECT_EQ(viewer.receive_until<Welcome>().role, Role::Viewer);
    const Reply refused = viewer.request(SubmitJob { "v1", kScenario }, "v1");
    ASSERT_TRUE(refused.error);
    EXPECT_EQ(refused.error->code, "not-authorized");

    WsClient op(server.port(), *tokens.token_for(Role::Operator));
    op.send(Hello { kProtocolVersion, "operator" });
    EXPECT_EQ(op.receive_until<Welcome>().role, Role::Operator);
    const Reply submitted = op.request(SubmitJob { "s1", kScenario }, "s1");
    ASSERT_FALSE(submitted.error) << submitted.error->message;
    const JobId job = *submitted.job;

    const Reply subscribed = op.request(Subscribe { "sub", {}, job, {} }, "sub");
    ASSERT_FALSE(subscribed.error);
    op.receive_until<SnapshotEnd>();

    std::vector<IterationRecord> streamed;
    const auto collect_until = [&](std::int64_t iteration) {
        for (;;) {
            ServerMessage m = op.receive();
            if (auto* rows = std::get_if<IterationRows>(&m)) {
                streamed.insert(streamed.end(), rows->rows.begin(), rows->rows.end());
                if (rows->iteration >= iteration)
                    return rows->iteration;
            }
        }
    };
    const std::int64_t before = collect_until(5);
    const Reply pinned = op.request(WorkerCommand { "pin", WorkerAction::Pin, job, 3, 8, std::nullopt, 1 }, "pin");
    ASSERT_FALSE(pinned.error) << pinned.error->message;
    const Reply excluded = op.request(WorkerCommand { "ex", WorkerAction::Exclude, job, 1, 0, std::nullopt, 1 }, "ex");
    ASSERT_FALSE(excluded.error) << excluded.error->message;
    const Reply bad_pin = op.request(WorkerCommand { "bad", WorkerAction::Pin, job, 3, 100000, std::nullopt, 1 }, "bad");
    ASSERT_TRUE(bad_pin.error);
    const Reply unknown_worker = op.request(WorkerCommand { "uw", WorkerAction::Exclude, job, 7, 0, std::nullopt, 1 }, "uw");
    ASSERT_TRUE(unknown_worker.error);

    // Within a few iterations: worker 3 runs a batch of 8, worker 1 runs nothing, X is kept.
    bool seen = false;
    for (int k = 0; k < 20 && !seen; ++k) {
        const IterationRows rows = op.receive_until<IterationRows>();
        streamed.insert(streamed.end(), rows.rows.begin(), rows.rows.end());
        std::int32_t total = 0;
        bool pin_ok = false, excluded_ok = true;
        for (const auto& r : rows.rows) {
            total += r.batch_size;
            pin_ok = pin_ok || (r.worker == 3 && r.batch_size == 8);
            excluded_ok = excluded_ok && r.worker != 1;
        }
        seen = pin_ok && excluded_ok && total == 64 && rows.iteration > before;
    }
    ASSERT_TRUE(seen) << "the pin and the exclusion never showed in the stream";

    const Reply cancelled = op.request(JobCommand { "c", JobAction::Cancel, job }, "c");
    ASSERT_FALSE(cancelled.error);
    for (;;) { // the rest of the stream, until the job has stopped
        ServerMessage m = op.receive();
        if (auto* rows = std::get_if<IterationRows>(&m))
            streamed.insert(streamed.end(), rows->rows.begin(), rows->rows.end());
        if (auto* s = std::get_if<JobUpdate>(&m); s && s->status.state == JobState::Stopped)
            break;
    }
    server.stop();
    server.wait();
    d.stop_all();

    // The database holds exactly what was streamed, bit for bit, with the operator's events.
    db::RunReader reader(dir / "runs" / ("job-" + std::to_string(job) + ".db"));
    const auto runs = reader.runs();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].status, "stopped");
    auto recorded = reader.iterations(runs[0].id, 0);
    for (auto& r : recorded)
        r.job = job; // the run store numbers a run's jobs from 0
    ASSERT_FALSE(streamed.empty());
    std::map<std::pair<std::int64_t, WorkerId>, IterationRecord> by_key;
    for (const auto& r : recorded)
        by_key[{ r.iteration, r.worker }] = r;
    for (const auto& r : streamed) { // every row the client saw is in the store, bit for bit
        const auto it = by_key.find({ r.iteration, r.worker });
        ASSERT_NE(it, by_key.end()) << "iteration " << r.iteration << " worker " << r.worker;
        EXPECT_EQ(r, it->second);
    }
    bool pin_event = false, exclude_event = false;
    for (const auto& e : reader.events(runs[0].id)) {
        pin_event = pin_event || (e.kind == "pin" && e.actor.rfind("operator:fulcrum-test@127.0.0.1", 0) == 0);
        exclude_event = exclude_event || (e.kind == "exclude" && e.worker == 1);
    }
    EXPECT_TRUE(pin_event);
    EXPECT_TRUE(exclude_event);
}
