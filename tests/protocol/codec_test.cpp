#include "protocol/codec.h"

#include <gtest/gtest.h>

#include <random>

using namespace fulcrum;
using namespace fulcrum::protocol;

namespace {

template <class Message>
Message round_trip_client(const Message& m)
{
    const std::string frame = encode(ClientMessage { m });
    const auto decoded = decode_client(frame);
    EXPECT_TRUE(decoded) << frame << ": " << decoded.error.message;
    return std::get<Message>(*decoded.message);
}

template <class Message>
Message round_trip_server(const Message& m)
{
    const std::string frame = encode(ServerMessage { m });
    const auto decoded = decode_server(frame);
    EXPECT_TRUE(decoded) << frame << ": " << decoded.error.message;
    return std::get<Message>(*decoded.message);
}

ErrorInfo client_error(std::string_view frame)
{
    const auto decoded = decode_client(frame);
    EXPECT_FALSE(decoded) << frame;
    return decoded.error;
}

IterationRecord row(WorkerId worker)
{
    IterationRecord r;
    r.job = 3;
    r.worker = worker;
    r.iteration = 41;
    r.start_s = 12.25;
    r.end_s = 12.25 + 0.1 * (worker + 1) / 3.0; // not exactly representable: tests the round trip
    r.batch_size = 64 + worker;
    r.compute_s = 0.0731;
    r.comm_s = 0.0042;
    r.wait_s = 0.017;
    r.cpu_share = 0.93;
    r.memory_share = 0.5;
    r.speed = 875.5;
    if (worker % 2)
        r.predicted_speed = 870.125;
    r.loss = 0.4187;
    r.decision = "lbbsp-cpu: narx";
    return r;
}

} // namespace

TEST(ProtocolCodec, EveryClientMessageSurvivesARoundTrip)
{
    EXPECT_EQ(round_trip_client(Hello { 1, "test client" }).client, "test client");
    const Subscribe s = round_trip_client(Subscribe { "s1", { Stream::Iterations, Stream::Jobs }, 2, { 0, 3 } });
    EXPECT_EQ(s.streams, (std::vector { Stream::Iterations, Stream::Jobs }));
    EXPECT_EQ(s.job, 2);
    EXPECT_EQ(s.workers, (std::vector<WorkerId> { 0, 3 }));
    EXPECT_EQ(round_trip_client(Unsubscribe { "s1" }).id, "s1");
    EXPECT_EQ(round_trip_client(ListJobs { "l" }).id, "l");
    const SubmitJob submit = round_trip_client(SubmitJob { "r1", R"({"name":"demo","workers":[{"name":"w0"}]})" });
    EXPECT_EQ(submit.scenario_json, R"({"name":"demo","workers":[{"name":"w0"}]})");
    for (JobAction a : { JobAction::Cancel, JobAction::Pause, JobAction::Resume }) {
        const JobCommand c = round_trip_client(JobCommand { "c", a, 7 });
        EXPECT_EQ(c.action, a);
        EXPECT_EQ(c.job, 7);
    }
    WorkerCommand pin { "p", WorkerAction::Pin, 1, 2, 96, std::nullopt, 1 };
    EXPECT_EQ(round_trip_client(pin).batch_size, 96);
    WorkerCommand exclude { "e", WorkerAction::Exclude, 1, 2, 0, 30.5, 1 };
    EXPECT_EQ(round_trip_client(exclude).for_s, 30.5);
    WorkerCommand inject { "i", WorkerAction::InjectStraggler, 1, 2, 0, std::nullopt, 4 };
    EXPECT_EQ(round_trip_client(inject).slowdown, 4);
    for (WorkerAction a : { WorkerAction::Unpin, WorkerAction::Include, WorkerAction::ClearStraggler })
        EXPECT_EQ(round_trip_client(WorkerCommand { "x", a, 1, 2, 0, std::nullopt, 1 }).action, a);
}

TEST(ProtocolCodec, RecordsRoundTripBitForBit)
{
    IterationRows rows { 3, 41, { row(0), row(1), row(2) } };
    EXPECT_EQ(round_trip_server(rows).rows, rows.rows);
    EvaluationRecord e { 3, 40, 12.5, 3.25, 0.75, 0.51, 0.49, 0.8125 };
    EXPECT_EQ(round_trip_server(Evaluation { e }).evaluation, e);
    EventRecord pinned { 3, 41, 12.5, "pin", 2, "worker 2 pinned to 96", "operator:alice" };
    EXPECT_EQ(round_trip_server(Event { pinned }).event, pinned);
    EventRecord no_worker { 3, 0, 0, "job-started", std::nullopt, "", "system" };
    EXPECT_EQ(round_trip_server(Event { no_worker }).event, no_worker);
    JobStatus status;
    status.job = 3;
    status.name = "demo";
    status.state = JobState::Paused;
    status.iteration = 41;
    status.iterations = 400;
    status.accuracy = 0.8125;
    status.database = "/var/lib/fulcrum/runs/job-3.db";
    status.run = 1;
    EXPECT_EQ(round_trip_server(JobUpdate { status }).status, status);
    WorkerState w;
    w.worker = 2;
    w.pinned = 96;
    w.excluded = true;
    w.excluded_until = 30;
    w.slowdown = 3;
    EXPECT_EQ(round_trip_server(WorkerUpdate { 3, { w } }).workers.front(), w);
    Reply reply { "r1", ErrorInfo { "unknown-worker", "job 3 has no worker 9", "worker" }, std::nullopt, {} };
    EXPECT_EQ(round_trip_server(reply).error, reply.error);
    EXPECT_EQ(round_trip_server(Reply { "r2", std::nullopt, 4, { status } }).jobs.front(), status);
    EXPECT_EQ(round_trip_server(Welcome { 1, "fulcrumd", Role::Operator }).role, Role::Operator);
    EXPECT_EQ(round_trip_server(Missed { 10, 4 }).dropped, 10);
    EXPECT_EQ(round_trip_server(SnapshotEnd { "s1" }).id, "s1");
}

TEST(ProtocolCodec, MalformedFramesGetACodeAndNeverThrow)
{
    EXPECT_EQ(client_error("{\"type\": \"hello\"").code, "malformed-json");
    EXPECT_EQ(client_error("").code, "malformed-json");
    EXPECT_EQ(client_error("[1, 2]").code, "wrong-type");
    EXPECT_EQ(client_error(std::string(200, '[') + std::string(200, ']')).code, "malformed-json"); // too deep
    const ErrorInfo no_type = client_error(R"({"id": "a"})");
    EXPECT_EQ(no_type.code, "missing-field");
    EXPECT_EQ(no_type.field, "type");
    const ErrorInfo unknown = client_error(R"({"type": "reboot", "id": "a"})");
    EXPECT_EQ(unknown.code, "unknown-type");
    EXPECT_NE(unknown.message.find("reboot"), std::string::npos);
}

TEST(ProtocolCodec, FieldErrorsNameTheFieldAndKeepTheRequestId)
{
    const auto missing = decode_client(R"({"type": "pin-worker", "id": "r7", "job": 1, "worker": 2})");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.request_id, "r7");
    EXPECT_EQ(missing.error.code, "missing-field");
    EXPECT_EQ(missing.error.field, "batch_size");

    const ErrorInfo mistyped = client_error(R"({"type": "pin-worker", "id": "r", "job": 1, "worker": "two", "batch_size": 8})");
    EXPECT_EQ(mistyped.code, "wrong-type");
    EXPECT_EQ(mistyped.field, "worker");
    EXPECT_NE(mistyped.message.find("a string"), std::string::npos);

    EXPECT_EQ(client_error(R"({"type": "pin-worker", "id": "r", "job": 1, "worker": 2.5, "batch_size": 8})").code, "wrong-type");
    const ErrorInfo negative = client_error(R"({"type": "cancel-job", "id": "r", "job": -1})");
    EXPECT_EQ(negative.code, "illegal-value");
    EXPECT_EQ(negative.field, "job");
    EXPECT_EQ(client_error(R"({"type": "exclude-worker", "id": "r", "job": 1, "worker": 0, "for_s": 0})").field, "for_s");
    EXPECT_EQ(client_error(R"({"type": "inject-straggler", "id": "r", "job": 1, "worker": 0, "slowdown": 0.5})").code,
        "illegal-value");
    const ErrorInfo stream = client_error(R"({"type": "subscribe", "id": "s", "streams": ["iterations", "gossip"]})");
    EXPECT_EQ(stream.field, "streams[1]");
    EXPECT_EQ(client_error(R"({"type": "submit-job", "id": "s", "scenario": 42})").field, "scenario");
    EXPECT_EQ(client_error(R"({"type": "pin-worker", "id": "r", "job": 1, "worker": 3000000000, "batch_size": 8})").code,
        "illegal-value");
}

TEST(ProtocolCodec, OversizedFramesAreRefusedUnread)
{
    std::string frame = R"({"type": "hello", "client": ")" + std::string(kMaxFrameBytes, 'x') + "\"}";
    const ErrorInfo e = client_error(frame);
    EXPECT_EQ(e.code, "frame-too-large");
}

TEST(ProtocolCodec, RandomMutationsOfValidFramesNeverThrow)
{
    const std::vector<std::string> seeds {
        encode(ClientMessage { WorkerCommand { "p", WorkerAction::Pin, 1, 2, 96, std::nullopt, 1 } }),
        encode(ClientMessage { Subscribe { "s1", { Stream::Iterations }, 2, { 0, 3 } } }),
        encode(ServerMessage { IterationRows { 3, 41, { row(0), row(1) } } }),
    };
    std::mt19937 rng(7);
    int decoded = 0;
    for (int trial = 0; trial < 20000; ++trial) {
        std::string frame = seeds[static_cast<std::size_t>(trial) % seeds.size()];
        const int edits = 1 + static_cast<int>(rng() % 4);
        for (int k = 0; k < edits && !frame.empty(); ++k) {
            const std::size_t at = rng() % frame.size();
            switch (rng() % 3) {
            case 0:
                frame[at] = static_cast<char>(rng() % 256);
                break;
            case 1:
                frame.erase(at, 1 + rng() % 8);
                break;
            default:
                frame.insert(at, 1, "{}[]\",:0-e."[rng() % 11]);
            }
        }
        decoded += decode_client(frame) ? 1 : 0;
        decoded += decode_server(frame) ? 1 : 0;
    }
    EXPECT_GT(decoded, 0); // some mutations stay valid, and every one returned instead of throwing
}
