#include "protocol/codec.h"
#include "protocol/worker_frames.h"

#include <gtest/gtest.h>
#include <limits>
#include <random>

using namespace fulcrum;
using namespace fulcrum::protocol;

namespace {

template <class Message> Message round_trip_client(const Message& m)
{
    const std::string frame = encode(ClientMessage { m });
    const auto decoded = decode_client(frame);
    EXPECT_TRUE(decoded) << frame << ": " << decoded.error.message;
    return std::get<Message>(*decoded.message);
}

template <class Message> Message round_trip_server(const Message& m)
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
    if (worker % 2) {
        r.predicted_speed = 870.125;
        r.gpu = { 1.5, 0.03125, 0.875 };
    }
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
    const SubmitWorkload workload
        = round_trip_client(SubmitWorkload { "w1", { { R"({"name":"a"})", 0 }, { R"({"name":"b"})", 120.5 } } });
    EXPECT_EQ(workload.jobs,
        (std::vector<SubmitWorkload::Arrival> { { R"({"name":"a"})", 0 }, { R"({"name":"b"})", 120.5 } }));
    for (JobAction a :
        { JobAction::Cancel, JobAction::Pause, JobAction::Resume, JobAction::Freeze, JobAction::Unfreeze }) {
        const JobCommand c = round_trip_client(JobCommand { "c", a, 7 });
        EXPECT_EQ(c.action, a);
        EXPECT_EQ(c.job, 7);
    }
    const ResizeJob resize = round_trip_client(ResizeJob { "rz", 7, ResizeAction::RemoveWorker, 3 });
    EXPECT_EQ(resize.action, ResizeAction::RemoveWorker);
    EXPECT_EQ(resize.worker, 3);
    const SetClusterPolicy both = round_trip_client(SetClusterPolicy { "cp", "lwf-2", "eps", std::nullopt });
    EXPECT_EQ(both.placement, "lwf-2");
    EXPECT_EQ(both.elastic, "eps");
    const SetClusterPolicy one = round_trip_client(SetClusterPolicy { "cp", std::nullopt, "static", std::nullopt });
    EXPECT_EQ(one.placement, std::nullopt);
    EXPECT_EQ(one.elastic, "static");
    EXPECT_EQ(one.comm, std::nullopt);
    const SetClusterPolicy comm = round_trip_client(SetClusterPolicy { "cp", std::nullopt, std::nullopt, "srsf-1" });
    EXPECT_EQ(comm.comm, "srsf-1");
    EXPECT_EQ(comm.elastic, std::nullopt);
    const JoinPool pool = round_trip_client(JoinPool { "jp", "node-a" });
    EXPECT_EQ(pool.id, "jp");
    EXPECT_EQ(pool.host, "node-a");
    const ChangeJob policy
        = round_trip_client(ChangeJob { "cp", JobSetting::Policy, 7, R"({"type":"lbbsp-cpu","blocking":true})" });
    EXPECT_EQ(policy.setting, JobSetting::Policy);
    EXPECT_EQ(policy.job, 7);
    EXPECT_EQ(policy.spec_json, R"({"type":"lbbsp-cpu","blocking":true})");
    const ChangeJob sync_model = round_trip_client(ChangeJob { "cs", JobSetting::SyncModel, 7, R"("bsp")" });
    EXPECT_EQ(sync_model.setting, JobSetting::SyncModel);
    EXPECT_EQ(sync_model.spec_json, R"("bsp")");
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
    status.tenant = "research";
    EXPECT_EQ(round_trip_server(JobUpdate { status }).status, status);
    status.placement = { 4, 5, -1 };
    EXPECT_EQ(round_trip_server(JobUpdate { status }).status, status);
    status.elastic = JobStatus::ElasticBounds { 1, 3, false };
    EXPECT_EQ(round_trip_server(JobUpdate { status }).status, status);
    status.elastic->frozen = true;
    EXPECT_EQ(round_trip_server(JobUpdate { status }).status, status);
    status.link = JobStatus::LinkUse { 120, 31, 4.125 };
    EXPECT_EQ(round_trip_server(JobUpdate { status }).status, status);
    status.daemon_clock = JobStatus::DaemonClock { 120.5, std::nullopt, std::nullopt };
    EXPECT_EQ(round_trip_server(JobUpdate { status }).status, status);
    status.daemon_clock = JobStatus::DaemonClock { 120.5, 130.25, 402.75 };
    EXPECT_EQ(round_trip_server(JobUpdate { status }).status, status);
    ClusterState cluster { "lwf-1", "eps", "ada-srsf", 1, 2, 16,
        { { 0, 0, 4.5, 120.25, { 3, 7 } }, { 1, 0, 16, 0, {} } }, { 9, 11 },
        { { "node-a", 3, 1 }, { "node-b", -1, -1 } } };
    EXPECT_EQ(round_trip_server(ClusterUpdate { cluster }).cluster, cluster);
    const ClusterUpdate live = round_trip_server(ClusterUpdate { cluster });
    EXPECT_EQ(live.replay, 0);
    EXPECT_FALSE(live.time_s) << "a live cluster state carries no run time";
    const ClusterUpdate replayed = round_trip_server(ClusterUpdate { cluster, 4, 12.5 });
    EXPECT_EQ(replayed.cluster, cluster);
    EXPECT_EQ(replayed.replay, 4);
    EXPECT_EQ(replayed.time_s, 12.5);
    WorkerAssigned assigned; // assigned field by field: GCC 12 misreads the aggregate (maybe-uninitialized)
    assigned.assignment.job = 3;
    assigned.assignment.worker = 1;
    assigned.assignment.scenario_json = R"({"name":"pooled"})";
    assigned.reason = "eps: growth round 2 on idle pool";
    EXPECT_EQ(round_trip_server(assigned), assigned);
    EXPECT_EQ(type_name(ServerMessage { assigned }), "worker-assigned");
    const WorkerReleased released { 3, 1, "eps: released for job 4" };
    EXPECT_EQ(round_trip_server(released), released);
    EXPECT_EQ(type_name(ServerMessage { released }), "worker-released");
    EXPECT_EQ(type_name(ServerMessage { ClusterUpdate { cluster } }), "cluster-state");
    WorkerState w;
    w.worker = 2;
    w.pinned = 96;
    w.excluded = true;
    w.excluded_until = 30;
    w.slowdown = 3;
    w.device = "cuda:1";
    w.sms = 64;
    EXPECT_EQ(round_trip_server(WorkerUpdate { 3, { w } }).workers.front(), w);
    w.stalled_since = 12.25;
    w.predicted_s = 0.04;
    EXPECT_EQ(round_trip_server(WorkerUpdate { 3, { w } }).workers.front(), w);
    Reply reply { "r1", ErrorInfo { "unknown-worker", "job 3 has no worker 9", "worker" }, std::nullopt, {}, {}, {}, {},
        {}, {} };
    EXPECT_EQ(round_trip_server(reply).error, reply.error);
    EXPECT_EQ(round_trip_server(Reply { "r2", std::nullopt, 4, { status }, {}, {}, {}, {}, {} }).jobs.front(), status);
    EXPECT_EQ(round_trip_server(Welcome { 1, "fulcrumd", Role::Operator }).role, Role::Operator);
    const Welcome admin = round_trip_server(Welcome { 3, "fulcrumd", Role::Admin, "research", true });
    EXPECT_EQ(admin.role, Role::Admin);
    EXPECT_EQ(admin.tenant, "research");
    EXPECT_TRUE(admin.all_tenants);
    EXPECT_EQ(
        std::get<Welcome>(*decode_server(R"({"type": "welcome", "version": 3, "role": "viewer"})").message).tenant,
        "default")
        << "a server of the last release names no tenant";
    EXPECT_EQ(round_trip_server(Missed { 10, 4 }).dropped, 10);
    EXPECT_EQ(round_trip_server(SnapshotEnd { "s1" }).id, "s1");
}

TEST(ProtocolCodec, ExternalJobMessagesSurviveARoundTrip)
{
    ReportIteration report;
    report.id = "r7";
    report.job = 4;
    report.rank = 2;
    report.iteration = 17;
    report.batch_size = 96;
    report.compute_s = 0.0125;
    report.sync_s = 0.003;
    report.cpu_share = 0.5;
    report.memory_share = 0.75;
    report.gpu_memory_gb = 1.5;
    report.loss = 0.4375;
    report.test_accuracy = 0.8125;
    const ReportIteration back = round_trip_client(report);
    EXPECT_EQ(back.rank, 2);
    EXPECT_EQ(back.iteration, 17);
    EXPECT_EQ(back.batch_size, 96);
    EXPECT_EQ(back.compute_s, 0.0125);
    EXPECT_EQ(back.sync_s, 0.003);
    EXPECT_EQ(back.cpu_share, 0.5);
    EXPECT_EQ(back.gpu_memory_gb, 1.5);
    EXPECT_EQ(back.test_accuracy, 0.8125);
    EXPECT_FALSE(back.test_loss);
    EXPECT_EQ(type_name(ClientMessage { report }), "report-iteration");
    // A rank's heartbeat says whether it evaluates and whether it waits in the all-reduce.
    for (const Heartbeat beat : { Heartbeat {}, Heartbeat { true, false }, Heartbeat { false, true } }) {
        const Heartbeat heard = round_trip_client(beat);
        EXPECT_EQ(heard.evaluating, beat.evaluating);
        EXPECT_EQ(heard.collective, beat.collective);
    }
    EXPECT_EQ(encode(ClientMessage { Heartbeat {} }), R"({"type":"heartbeat"})");
    // Ready: iteration -1 carries no measurements.
    const ReportIteration ready
        = round_trip_client(ReportIteration { "r0", 4, 1, -1, 0, 0, 0, 1, 1, {}, 0, {}, {}, {} });
    EXPECT_EQ(ready.iteration, -1);
    EXPECT_FALSE(ready.resume_from);
    // A restarted group's ready report: the iteration its checkpoint goes on from.
    const ReportIteration resumed
        = round_trip_client(ReportIteration { "r0", 4, 1, -1, 0, 0, 0, 1, 1, {}, 0, {}, {}, 40 });
    EXPECT_EQ(resumed.resume_from, 40);
    EXPECT_FALSE(
        decode_client(R"({"type":"report-iteration","id":"r","job":1,"rank":0,"iteration":-1,"resume_from":-3})"))
        << "a negative iteration to resume from is refused";

    Reply reply;
    reply.id = "r7";
    reply.plan = RankPlan { "train", 18, { 40, 0, 88 }, { 1, 1, 2.5 }, "", {} };
    const auto decoded = decode_server(encode(ServerMessage { reply }));
    ASSERT_TRUE(decoded) << decoded.error.message;
    ASSERT_TRUE(std::get<Reply>(*decoded.message).plan);
    EXPECT_EQ(*std::get<Reply>(*decoded.message).plan, *reply.plan);
    EXPECT_EQ(encode(ServerMessage { reply }).find("ahead"), std::string::npos) << "no plan ahead: none sent";

    // A job with external.plan_ahead: the sizes of the iterations after it, as planned.
    reply.plan->ahead = { { 40, 0, 88 }, { 50, 10, 68 } };
    const auto ahead = decode_server(encode(ServerMessage { reply }));
    ASSERT_TRUE(ahead) << ahead.error.message;
    EXPECT_EQ(*std::get<Reply>(*ahead.message).plan, *reply.plan);
    const auto bad_ahead = decode_server(
        R"({"type":"reply","id":"r","plan":{"state":"train","iteration":1,"batch_sizes":[1],"slowdowns":[1],"ahead":[[1],[-2]]}})");
    ASSERT_FALSE(bad_ahead);
    EXPECT_EQ(bad_ahead.error.field, "plan.ahead[1][0]");

    // A share above 1, a negative batch: refused, naming the field.
    const auto bad = decode_client(
        R"({"type":"report-iteration","id":"x","job":1,"rank":0,"iteration":3,"batch_size":4,"compute_s":0.1,"cpu_share":1.5})");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error.field, "cpu_share");
    const auto negative = decode_client(
        R"({"type":"report-iteration","id":"x","job":1,"rank":0,"iteration":3,"batch_size":-4,"compute_s":0.1})");
    ASSERT_FALSE(negative);
    EXPECT_EQ(negative.error.field, "batch_size");
}

TEST(ProtocolCodec, CapabilitiesSurviveARoundTrip)
{
    EXPECT_EQ(round_trip_client(ListCapabilities { "caps" }).id, "caps");
    EXPECT_EQ(type_name(ClientMessage { ListCapabilities { "caps" } }), "list-capabilities");
    Reply reply;
    reply.id = "caps";
    reply.capabilities
        = Capabilities { { { "uniform", "X / n each", "", {} }, { "fixed", "given", "", { "batch_sizes" } } },
              { { "bsp", "a barrier", "barrier", {} }, { "backup", "k late", "barrier", {}, { "backups" } } },
              { { "narx", "a network", "", {} } }, { { "lwf-K", "least workload first", "", {} } },
              { { "srsf-N", "at most N a link", "", {} } }, { { "eps", "grows jobs", "", {} } },
              { { "zipline", "one sweep", "", {} } }, { { "mlp", "a perceptron", "", {} } } };
    const auto decoded = decode_server(encode(ServerMessage { reply }));
    ASSERT_TRUE(decoded) << decoded.error.message;
    const Reply& back = std::get<Reply>(*decoded.message);
    ASSERT_TRUE(back.capabilities);
    EXPECT_EQ(*back.capabilities, *reply.capabilities);

    // A server from before the comm, elastic, window and model lists: they are empty.
    const auto older = decode_server(R"({"type": "reply", "id": "c", "ok": true, "capabilities": {"policies": []}})");
    ASSERT_TRUE(older) << older.error.message;
    ASSERT_TRUE(std::get<Reply>(*older.message).capabilities);
    EXPECT_TRUE(std::get<Reply>(*older.message).capabilities->comm_policies.empty());
}

TEST(ProtocolCodec, ReplayMessagesSurviveARoundTrip)
{
    EXPECT_EQ(round_trip_client(ListRuns { "l" }).id, "l");
    const OpenReplay open = round_trip_client(OpenReplay { "o", "job-3.db", 2, 0, 40, true });
    EXPECT_EQ(open.database, "job-3.db");
    EXPECT_EQ(open.run, 2);
    EXPECT_EQ(open.speed, 0);
    EXPECT_EQ(open.from_iteration, 40);
    EXPECT_TRUE(open.paused);
    const ReplayCommand seek = round_trip_client(ReplayCommand { "s", ReplayAction::Seek, 5, 120, std::nullopt, 2, 1 });
    EXPECT_EQ(seek.replay, 5);
    EXPECT_EQ(seek.iteration, 120);
    EXPECT_EQ(seek.job, 2);
    EXPECT_EQ(
        round_trip_client(ReplayCommand { "t", ReplayAction::Seek, 5, std::nullopt, 12.25, std::nullopt, 1 }).time_s,
        12.25);
    EXPECT_EQ(
        round_trip_client(ReplayCommand { "v", ReplayAction::SetSpeed, 5, std::nullopt, std::nullopt, std::nullopt, 8 })
            .speed,
        8);
    for (ReplayAction a : { ReplayAction::Play, ReplayAction::Pause, ReplayAction::Close })
        EXPECT_EQ(
            round_trip_client(ReplayCommand { "p", a, 5, std::nullopt, std::nullopt, std::nullopt, 1 }).action, a);

    RunListing listing { "job-1.db", 1, "demo", "paced", "finished", "2026-11-22T10:00:00Z", "2026-11-22T10:01:00Z", 1,
        400, 3200, "research" };
    Reply runs;
    runs.id = "l";
    runs.runs = { listing };
    runs.replay = 5;
    const Reply back = round_trip_server(runs);
    EXPECT_EQ(back.runs.front(), listing);
    EXPECT_EQ(back.replay, 5);
    ReplayState state { 5, "job-1.db", 1, ReplayPhase::Playing, 4, 120, 400, 1, 119, 60.5, 200.25, true };
    EXPECT_EQ(round_trip_server(state), state);
    // Stream messages carry their replay, and a live one (0) leaves the field out.
    EXPECT_EQ(round_trip_server(IterationRows { 1, 7, {}, 5 }).replay, 5);
    EXPECT_EQ(encode(ServerMessage { IterationRows { 1, 7, {}, 0 } }).find("replay"), std::string::npos);
    EXPECT_EQ(round_trip_server(Event { {}, 5 }).replay, 5);
    EXPECT_EQ(round_trip_server(Evaluation { {}, 5 }).replay, 5);
    EXPECT_EQ(round_trip_server(JobUpdate { {}, 5 }).replay, 5);
    EXPECT_EQ(round_trip_server(WorkerUpdate { 1, {}, 5 }).replay, 5);
}

TEST(ProtocolCodec, WorkerMessagesAndBinaryFramesSurviveARoundTrip)
{
    const JoinJob join = round_trip_client(JoinJob { "j", 3, 2, "node7" });
    EXPECT_EQ(join.job, 3);
    EXPECT_EQ(join.worker, 2);
    EXPECT_EQ(join.host, "node7");
    EXPECT_FALSE(round_trip_client(JoinJob { "j", 3, std::nullopt, "" }).worker);
    Reply joined;
    joined.id = "j";
    joined.assignment = WorkerAssignment { 3, 2, R"({"name":"demo"})", 7850 };
    EXPECT_EQ(round_trip_server(joined).assignment, joined.assignment);
    EXPECT_EQ(round_trip_server(Welcome { 1, "fulcrumd", Role::Worker }).role, Role::Worker);

    const std::vector<float> parameters { 0.5f, -1.25f, 3.0e-8f, 1.0e30f };
    const std::string task = encode_task(41, 64, parameters);
    EXPECT_TRUE(is_worker_frame(task));
    EXPECT_FALSE(is_worker_frame(R"({"type": "hello"})"));
    const auto back = decode_task(task, nullptr);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->iteration, 41);
    EXPECT_EQ(back->batch_size, 64);
    EXPECT_EQ(back->parameters, parameters);
    WorkerResult result { 41, 64, 0.6931, 0.0123, 0.97, 0.61, parameters, {} };
    const auto result_back = decode_result(encode_result(result), nullptr);
    ASSERT_TRUE(result_back);
    EXPECT_EQ(result_back->loss, 0.6931);
    EXPECT_EQ(result_back->cpu_share, 0.97);
    EXPECT_EQ(result_back->gradient, parameters);
    EXPECT_EQ(result_back->gpu, GpuUse {});
    // A GPU worker's reading follows the gradient; what it could not measure stays unset.
    result.gpu = { 0.75, 0.0625, std::nullopt };
    const auto gpu_back = decode_result(encode_result(result), nullptr);
    ASSERT_TRUE(gpu_back);
    EXPECT_EQ(gpu_back->gpu, result.gpu);
    EXPECT_EQ(gpu_back->gradient, parameters);
    EXPECT_FALSE(decode_result(encode_result(result) + "x", nullptr));
    // Found by the fuzzer: a GPU block must hold a reading, each finite and >= 0 or the one
    // NaN encode writes, so that what decodes re-encodes to the same frame.
    const std::string plain = encode_result(WorkerResult { 41, 64, 0.6931, 0.0123, 0.97, 0.61, parameters, {} });
    const auto with_block = [&](double a, double b, double c) {
        std::string frame = plain + "FGPU";
        for (const double v : { a, b, c })
            frame.append(reinterpret_cast<const char*>(&v), sizeof v);
        return frame;
    };
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::string why;
    EXPECT_FALSE(decode_result(with_block(nan, nan, nan), &why));
    EXPECT_NE(why.find("GPU block"), std::string::npos) << why;
    EXPECT_FALSE(decode_result(with_block(-1.0, nan, nan), nullptr));
    EXPECT_FALSE(decode_result(with_block(std::numeric_limits<double>::infinity(), nan, nan), nullptr));
    EXPECT_FALSE(decode_result(with_block(-nan, nan, nan), nullptr)) << "another NaN than encode's";
    const auto one = decode_result(with_block(2.0, nan, nan), nullptr);
    ASSERT_TRUE(one);
    EXPECT_EQ(encode_result(*one), with_block(2.0, nan, nan));
    // Truncated, padded or mislabelled frames are refused with a reason, never read past.
    std::string error;
    EXPECT_FALSE(decode_task(task.substr(0, task.size() - 1), &error));
    EXPECT_NE(error.find("task"), std::string::npos);
    EXPECT_FALSE(decode_task(task + "x", &error));
    EXPECT_FALSE(decode_result(task, &error));
    std::string huge = encode_task(1, 1, {});
    huge.replace(huge.size() - 8, 8, std::string(8, '\xff')); // a count of 2^64 - 1 floats
    EXPECT_FALSE(decode_task(huge, &error));
}

// Found by the fuzzer: a number beyond a double's range inside a free-form section became
// infinity, which encode could not write back as JSON. Every such number is refused, named
// by its path.
TEST(ProtocolCodec, ANumberBeyondADoublesRangeIsRefusedWhereverItIs)
{
    const ErrorInfo nested = client_error(R"({"type": "set-policy", "id": "p1", "job": 1,
        "policy": {"type": "lbbsp-cpu", "predictor": {"ema_alpha": -5e607}}})");
    EXPECT_EQ(nested.code, "illegal-value");
    EXPECT_EQ(nested.field, "policy.predictor.ema_alpha");
    EXPECT_NE(nested.message.find("beyond the range of a double"), std::string::npos) << nested.message;
    EXPECT_EQ(
        client_error(R"({"type": "submit-job", "id": "s", "scenario": {"workers": [{"speed": 1}, {"speed": 1e999}]}})")
            .field,
        "scenario.workers[1].speed");
    EXPECT_EQ(client_error(R"({"type": "set-replay-speed", "id": "s", "replay": 1, "speed": 1e400})").field, "speed");
}

TEST(ProtocolCodec, ReplayFieldErrorsNameTheField)
{
    const ErrorInfo both
        = client_error(R"({"type": "seek-replay", "id": "s", "replay": 1, "iteration": 3, "time_s": 2})");
    EXPECT_EQ(both.code, "illegal-value");
    EXPECT_EQ(both.field, "iteration");
    EXPECT_EQ(client_error(R"({"type": "seek-replay", "id": "s", "replay": 1})").code, "illegal-value");
    const ErrorInfo fast = client_error(R"({"type": "set-replay-speed", "id": "s", "replay": 1, "speed": 1e9})");
    EXPECT_EQ(fast.code, "illegal-value");
    EXPECT_EQ(fast.field, "speed");
    EXPECT_EQ(client_error(R"({"type": "set-replay-speed", "id": "s", "replay": 1, "speed": -1})").field, "speed");
    EXPECT_EQ(client_error(R"({"type": "open-replay", "id": "o", "run": 1})").field, "database");
    EXPECT_EQ(
        client_error(R"({"type": "open-replay", "id": "o", "database": "a.db", "run": 0})").code, "illegal-value");
    EXPECT_EQ(client_error(R"({"type": "play-replay", "id": "p", "replay": "one"})").code, "wrong-type");
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

    const ErrorInfo mistyped
        = client_error(R"({"type": "pin-worker", "id": "r", "job": 1, "worker": "two", "batch_size": 8})");
    EXPECT_EQ(mistyped.code, "wrong-type");
    EXPECT_EQ(mistyped.field, "worker");
    EXPECT_NE(mistyped.message.find("a string"), std::string::npos);

    EXPECT_EQ(client_error(R"({"type": "pin-worker", "id": "r", "job": 1, "worker": 2.5, "batch_size": 8})").code,
        "wrong-type");
    const ErrorInfo negative = client_error(R"({"type": "cancel-job", "id": "r", "job": -1})");
    EXPECT_EQ(negative.code, "illegal-value");
    EXPECT_EQ(negative.field, "job");
    EXPECT_EQ(
        client_error(R"({"type": "exclude-worker", "id": "r", "job": 1, "worker": 0, "for_s": 0})").field, "for_s");
    EXPECT_EQ(client_error(R"({"type": "inject-straggler", "id": "r", "job": 1, "worker": 0, "slowdown": 0.5})").code,
        "illegal-value");
    EXPECT_EQ(decode_client(R"({"type": "subscribe", "id": "s", "streams": ["cluster"]})").message.has_value(), true);
    const ErrorInfo stream = client_error(R"({"type": "subscribe", "id": "s", "streams": ["iterations", "gossip"]})");
    EXPECT_EQ(stream.field, "streams[1]");
    EXPECT_EQ(client_error(R"({"type": "submit-job", "id": "s", "scenario": 42})").field, "scenario");
    const ErrorInfo no_policy = client_error(R"({"type": "set-policy", "id": "s", "job": 1})");
    EXPECT_EQ(no_policy.code, "missing-field");
    EXPECT_EQ(no_policy.field, "policy");
    const ErrorInfo policy_name = client_error(R"({"type": "set-policy", "id": "s", "job": 1, "policy": "uniform"})");
    EXPECT_EQ(policy_name.code, "wrong-type") << "a policy is an object (it may carry parameters)";
    EXPECT_EQ(policy_name.field, "policy");
    EXPECT_EQ(client_error(R"({"type": "set-sync-model", "id": "s", "job": 1, "sync": [1]})").field, "sync");
    EXPECT_EQ(
        client_error(R"({"type": "pin-worker", "id": "r", "job": 1, "worker": 3000000000, "batch_size": 8})").code,
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
