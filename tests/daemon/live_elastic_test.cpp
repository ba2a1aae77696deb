#include "common/error.h"
#include "daemon/cluster_book.h"
#include "daemon/daemon.h"
#include "daemon_support.h"
#include "db/run_reader.h"
#include "replay/replay_source.h"
#include "run/run_scenario.h"
#include "scenario/scenario.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <map>
#include <unistd.h>

using namespace fulcrum;
using namespace fulcrum::protocol;
using testing_support::request_reply;
using testing_support::wait_for;

namespace {

sched::ClusterSpec one_server_of(int gpus)
{
    sched::ClusterSpec c;
    c.servers = 1;
    c.gpus_per_server = gpus;
    c.gpu_memory_gb = 16;
    return c;
}

// A paced job that runs until cancelled: `workers` is the scenario's workers array.
std::string paced_job(const std::string& name, const std::string& workers, const std::string& extra = "")
{
    return R"({"name": ")" + name + R"(", "mode": "paced", "pace": 2, "seed": 3,
      "data": {"source": "synthetic", "train_size": 600, "test_size": 100, "dim": 8, "classes": 3},
      "model": {"type": "softmax"}, "policy": {"type": "uniform"},
      "training": {"total_batch": 48, "iterations": 1000000, "eval_interval": 1000},
      "workers": )"
        + workers + extra + "}";
}

std::string elastic(int initial, int min, int max)
{
    return R"(, "elastic": {"initial_workers": )" + std::to_string(initial) + R"(, "min_workers": )"
        + std::to_string(min) + R"(, "max_workers": )" + std::to_string(max) + "}";
}

JobStatus status_of(const daemon::Daemon& d, JobId job)
{
    for (const JobStatus& s : d.jobs())
        if (s.job == job)
            return s;
    return {};
}

int gpus_held(const JobStatus& s)
{
    return static_cast<int>(
        std::count_if(s.placement.begin(), s.placement.end(), [](std::int32_t g) { return g >= 0; }));
}

bool is_scheduler(const EventRecord& e)
{
    return e.actor.rfind("scheduler (eps)", 0) == 0;
}

// The eps scheduler's first event of `kind` the client reads within 60 s.
std::optional<EventRecord> scheduler_event(
    serve::Client& client, std::vector<ServerMessage>& seen, const std::string& kind)
{
    std::optional<EventRecord> found;
    wait_for(client, seen, [&](const ServerMessage& m) {
        if (const auto* e = std::get_if<Event>(&m); e && e->event.kind == kind && is_scheduler(e->event))
            found = e->event;
        return found.has_value();
    });
    return found;
}

} // namespace

TEST(ClusterBook, AGrowingJobGetsAnIdleGpuOnItsOwnServerFirst)
{
    sched::ClusterSpec c = one_server_of(2);
    c.servers = 2;
    daemon::ClusterBook book(c, "ff");
    EXPECT_EQ(book.place(1, { 2, 16 }, {}), (std::vector<int> { 0, 1 }));
    EXPECT_EQ(book.place(2, { 1, 16 }, {}), (std::vector<int> { 2 }));
    book.release(1);
    EXPECT_EQ(book.add_gpu(2, {}), 3) << "its own server's idle GPU before a lower-numbered one elsewhere";
    EXPECT_EQ(book.add_gpu(2, {}), 0) << "then another server's";
    EXPECT_EQ(book.add_gpu(2, {}), 1);
    EXPECT_EQ(book.add_gpu(2, {}), std::nullopt) << "every GPU is taken";
    EXPECT_EQ(book.add_gpu(9, {}), std::nullopt) << "a job never placed grows nowhere";
    book.remove_gpu(2, 0);
    EXPECT_EQ(book.state({}, {}).gpus[0].jobs, std::vector<JobId> {});
    EXPECT_EQ(book.state({}, {}).gpus[1].jobs, (std::vector<JobId> { 2 }));
    EXPECT_EQ(book.room_for({ 1, 16 }), 1);
}

class LiveElasticTest : public ::testing::Test {
protected:
    std::filesystem::path dir
        = std::filesystem::temp_directory_path() / ("fulcrum-live-elastic-" + std::to_string(::getpid()));
    void SetUp() override { std::filesystem::create_directories(dir); }
    void TearDown() override { std::filesystem::remove_all(dir); }
    daemon::DaemonOptions options(sched::ElasticPolicy policy, const std::string& sub) const
    {
        daemon::DaemonOptions o;
        o.data_dir = dir / sub;
        o.cluster = one_server_of(4);
        o.elastic.policy = policy;
        o.elastic.round_s = 0.2;
        o.elastic.observe_iterations = 5;
        return o;
    }
    std::vector<EventRecord> recorded(const std::string& sub, JobId job) const
    {
        db::RunReader reader(dir / sub / "runs" / ("job-" + std::to_string(job) + ".db"));
        return reader.events(reader.runs().at(0).id);
    }
};

// Alone on four idle GPUs, an elastic job that asked for one worker grows a worker a round.
// Its second worker (as fast as the first) shortens its iterations and stays; its third,
// twenty times slower under equal batches, lengthens them: the scheduler rolls that step
// back and the job grows no further. Each change is an event with the scheduler as actor
// and its reason, in the stream and in the job's run store.
TEST_F(LiveElasticTest, AnElasticJobGrowsOnIdleGpusAndAStepThatSlowedItIsRolledBack)
{
    daemon::Daemon d(options(sched::ElasticPolicy::Eps, "grow"));
    auto op = d.connect(Role::Operator, "op");
    d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    const JobId job
        = d.submit(paced_job("grows", R"([{"speed": 3000, "count": 2}, {"speed": 150}])", elastic(1, 1, 3)), "test");
    d.receive(*op, encode(ClientMessage { Subscribe { "s", {}, job, {} } }));
    EXPECT_EQ(gpus_held(status_of(d, job)), 1) << "it asked for one worker";

    std::vector<ServerMessage> seen;
    std::optional<EventRecord> rolled_back;
    ASSERT_TRUE(wait_for(*op, seen,
        [&](const ServerMessage& m) {
            if (const auto* e = std::get_if<Event>(&m); e && e->event.kind == "remove-worker" && is_scheduler(e->event))
                rolled_back = e->event;
            return rolled_back.has_value();
        }))
        << "the slow worker's step was never judged" << [&] {
               std::string events;
               for (const ServerMessage& m : seen)
                   if (const auto* e = std::get_if<Event>(&m))
                       events += e->event.kind + " " + e->event.actor + ": " + e->event.message + "\n";
               return events + "at iteration " + std::to_string(status_of(d, job).iteration) + ": "
                   + status_of(d, job).message;
           }();
    EXPECT_EQ(rolled_back->worker, 2);
    EXPECT_NE(rolled_back->message.find("rolled back"), std::string::npos) << rolled_back->message;

    std::vector<WorkerId> added;
    for (const ServerMessage& m : seen)
        if (const auto* e = std::get_if<Event>(&m); e && e->event.kind == "add-worker" && is_scheduler(e->event)) {
            added.push_back(*e->event.worker);
            EXPECT_NE(e->event.message.find("eps: growth round"), std::string::npos) << e->event.message;
        }
    EXPECT_EQ(added, (std::vector<WorkerId> { 1, 2 }));
    // The book follows: two GPUs, the third given back; no round grows the job again.
    const auto gpus_of_job = [&] { return testing_support::gpus_in_book(d, job); };
    for (int i = 0; i < 500 && gpus_of_job() != 2; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(gpus_of_job(), 2);
    const std::int64_t at = status_of(d, job).iteration; // rounds keep coming: none grows it
    while (status_of(d, job).iteration < at + 30)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const JobStatus later = status_of(d, job);
    EXPECT_EQ(later.placement[2], -1);
    EXPECT_EQ(gpus_held(later), 2);
    EXPECT_EQ(gpus_of_job(), 2);

    ASSERT_FALSE(
        request_reply(d, *op, seen, encode(ClientMessage { JobCommand { "c", JobAction::Cancel, job } })).error);
    d.stop_all();
    int adds = 0, removes = 0;
    for (const EventRecord& e : recorded("grow", job)) {
        if (!is_scheduler(e))
            continue;
        adds += e.kind == "add-worker";
        removes += e.kind == "remove-worker";
        if (e.kind == "remove-worker") {
            EXPECT_NE(e.message.find("rolled back"), std::string::npos) << e.message;
        }
    }
    EXPECT_EQ(adds, 2);
    EXPECT_EQ(removes, 1);

    // The run store holds the cluster the job ran on at each change, and a replay of the run
    // sends it at those moments, the job under its own id: one GPU, two, three, then two.
    const std::string database = "job-" + std::to_string(job) + ".db";
    const std::filesystem::path path = dir / "grow" / "runs" / database;
    replay::ReplaySource source(path, db::RunReader(path).runs().at(0).id, 1, database);
    std::vector<std::int64_t> held;
    double last_time = 0;
    const auto follow = [&](const std::vector<ServerMessage>& messages) {
        for (const ServerMessage& m : messages)
            if (const auto* c = std::get_if<ClusterUpdate>(&m)) {
                EXPECT_EQ(c->replay, 1);
                ASSERT_TRUE(c->time_s);
                EXPECT_GE(*c->time_s, last_time) << "in the order of the run's clock";
                last_time = *c->time_s;
                const auto gpus = std::count_if(c->cluster.gpus.begin(), c->cluster.gpus.end(),
                    [&](const GpuUsage& g) { return std::find(g.jobs.begin(), g.jobs.end(), job) != g.jobs.end(); });
                if (held.empty() || held.back() != gpus)
                    held.push_back(gpus);
            }
    };
    for (std::int64_t step = 0; step < source.length(); ++step)
        follow(source.step(step));
    follow(source.finish());
    EXPECT_EQ(held, (std::vector<std::int64_t> { 1, 2, 3, 2 }));
}

// Four GPUs, all held by an elastic job. A newcomer waits while that job is before its
// early-feedback point, then takes two of its workers (the highest-numbered) and starts; an
// elastic newcomer takes one more (down to the holder's min_workers) and starts with one of
// the three it asked for. Under --elastic static the newcomer waits. An operator's growth
// with no idle GPU is refused, naming the field.
TEST_F(LiveElasticTest, NewcomersTakeWorkersFromAJobPastItsEarlyFeedbackOnly)
{
    const std::string holder_json = paced_job("holder", R"([{"speed": 1000, "count": 4}])", elastic(4, 1, 4));
    const std::string pair_json = paced_job("pair", R"([{"speed": 3000, "count": 2}])");
    {
        daemon::Daemon fixed(options(sched::ElasticPolicy::StaticFifo, "static"));
        const JobId holder = fixed.submit(holder_json, "test");
        const JobId pair = fixed.submit(pair_json, "test");
        while (status_of(fixed, holder).iteration < 40)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        EXPECT_EQ(status_of(fixed, pair).state, JobState::Queued) << "static: nothing is taken from a running job";
        EXPECT_EQ(gpus_held(status_of(fixed, holder)), 4);
    }

    daemon::DaemonOptions o = options(sched::ElasticPolicy::Eps, "eps");
    o.elastic.feedback = sched::parse_early_feedback("iterations:30");
    o.elastic.round_s = 3600; // no growth round: this test is about releases
    daemon::Daemon d(o);
    auto op = d.connect(Role::Operator, "op");
    d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    d.receive(*op, encode(ClientMessage { Subscribe { "s", {}, std::nullopt, {} } }));
    const JobId holder = d.submit(holder_json, "test");
    const JobId pair = d.submit(pair_json, "test");
    EXPECT_EQ(status_of(d, pair).state, JobState::Queued) << "the holder has not given early feedback yet";
    std::vector<ServerMessage> seen;
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        const auto* u = std::get_if<JobUpdate>(&m);
        return u && u->status.job == pair && u->status.state == JobState::Running;
    })) << "the newcomer never started";
    // The holder's workers leave at its next barrier (the early-feedback note that let them
    // go is recorded before them), which may come before the newcomer's start is streamed.
    std::vector<EventRecord> released;
    const auto note_release = [&](const ServerMessage& m) {
        if (const auto* e = std::get_if<Event>(&m);
            e && e->event.job == holder && is_scheduler(e->event) && e->event.kind == "remove-worker")
            released.push_back(e->event);
        return released.size() == 2;
    };
    for (const ServerMessage& m : seen)
        note_release(m);
    ASSERT_TRUE(released.size() == 2 || wait_for(*op, seen, note_release)) << released.size() << " workers released";
    for (const EventRecord& e : released) {
        EXPECT_GE(e.iteration, 30) << "released before its early feedback";
        EXPECT_NE(e.message.find("released for job " + std::to_string(pair)), std::string::npos) << e.message;
    }
    EXPECT_EQ(released[0].worker, 3);
    EXPECT_EQ(released[1].worker, 2);
    EXPECT_EQ(gpus_held(status_of(d, pair)), 2);

    const JobId small = d.submit(paced_job("small", R"([{"speed": 3000, "count": 3}])", elastic(3, 1, 3)), "test");
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        const auto* u = std::get_if<JobUpdate>(&m);
        return u && u->status.job == small && u->status.state == JobState::Running;
    }));
    EXPECT_EQ(gpus_held(status_of(d, small)), 1) << "one of its three: the holder went down to its minimum";
    // The book itself, not the stream: the state that shows it may have come before the
    // newcomer's start was read above (one flaky run under a loaded ctest -j2).
    const auto one_per_gpu = [&] {
        const ClusterState c = d.cluster();
        return std::all_of(c.gpus.begin(), c.gpus.end(), [](const GpuUsage& g) { return g.jobs.size() == 1; });
    };
    for (int i = 0; i < 3000 && !one_per_gpu(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_TRUE(one_per_gpu()) << "every GPU holds exactly one worker";

    // Its removal may have been read while waiting for the newcomer to start.
    const auto third_left = [&](const ServerMessage& m) {
        const auto* e = std::get_if<Event>(&m);
        return e && e->event.job == holder && e->event.kind == "remove-worker" && is_scheduler(e->event)
            && e->event.message.find("released for job " + std::to_string(small)) != std::string::npos;
    };
    ASSERT_TRUE(std::any_of(seen.begin(), seen.end(), third_left) || wait_for(*op, seen, third_left))
        << "the holder's third worker never left";

    const Reply refused = request_reply(
        d, *op, seen, encode(ClientMessage { ResizeJob { "grow", holder, ResizeAction::AddWorker, std::nullopt } }));
    ASSERT_TRUE(refused.error);
    EXPECT_EQ(refused.error->code, "no-free-gpu");
    EXPECT_EQ(refused.error->field, "action");

    d.stop_all();
    const auto events = recorded("eps", holder);
    EXPECT_EQ(std::count_if(events.begin(), events.end(),
                  [](const EventRecord& e) { return e.kind == "remove-worker" && is_scheduler(e); }),
        3);
    const auto placed = recorded("eps", small);
    ASSERT_GE(placed.size(), 2u);
    EXPECT_NE(placed[1].message.find("eps: 1 of the 3"), std::string::npos) << placed[1].message;
}

// An operator freezes the holder: past its early feedback it still keeps its four workers
// and the newcomer waits; unfrozen, the newcomer takes two of them. Freezing a job the
// scheduler never resizes is refused. The freeze, the early feedback and the release are
// events in the holder's run store.
TEST_F(LiveElasticTest, AFrozenJobKeepsItsWorkersUntilUnfrozen)
{
    daemon::DaemonOptions o = options(sched::ElasticPolicy::Eps, "frozen");
    o.elastic.feedback = sched::parse_early_feedback("iterations:10");
    o.elastic.round_s = 3600;
    daemon::Daemon d(o);
    auto op = d.connect(Role::Operator, "op");
    d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    d.receive(*op, encode(ClientMessage { Subscribe { "s", {}, std::nullopt, {} } }));
    std::vector<ServerMessage> seen;
    const auto command = [&](JobAction action, JobId job) {
        return request_reply(d, *op, seen, encode(ClientMessage { JobCommand { "c", action, job } }));
    };
    const JobId holder = d.submit(paced_job("holder", R"([{"speed": 1000, "count": 4}])", elastic(4, 1, 4)), "test");
    ASSERT_FALSE(command(JobAction::Freeze, holder).error);
    EXPECT_TRUE(status_of(d, holder).elastic->frozen);
    const JobId pair = d.submit(paced_job("pair", R"([{"speed": 3000, "count": 2}])"), "test");
    const Reply not_elastic = command(JobAction::Freeze, pair);
    ASSERT_TRUE(not_elastic.error);
    EXPECT_EQ(not_elastic.error->code, "not-elastic");

    while (status_of(d, holder).iteration < 40)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(status_of(d, pair).state, JobState::Queued) << "a frozen job gives up nothing";
    EXPECT_EQ(gpus_held(status_of(d, holder)), 4);

    ASSERT_FALSE(command(JobAction::Unfreeze, holder).error);
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        const auto* u = std::get_if<JobUpdate>(&m);
        return u && u->status.job == pair && u->status.state == JobState::Running;
    })) << "unfrozen, the holder never made room";
    // Its workers leave at its next barrier, which may come before the newcomer's start is streamed.
    int released = 0;
    const auto note_release = [&](const ServerMessage& m) {
        const auto* e = std::get_if<Event>(&m);
        released += e && e->event.job == holder && e->event.kind == "remove-worker";
        return released == 2;
    };
    for (const ServerMessage& m : seen)
        note_release(m);
    ASSERT_TRUE(released == 2 || wait_for(*op, seen, note_release)) << released << " workers released";
    d.stop_all();
    std::vector<std::string> kinds;
    for (const EventRecord& e : recorded("frozen", holder))
        if (e.kind == "job-frozen" || e.kind == "job-unfrozen" || e.kind == "early-feedback"
            || e.kind == "remove-worker")
            kinds.push_back(e.kind);
    EXPECT_EQ(kinds,
        (std::vector<std::string> {
            "job-frozen", "early-feedback", "job-unfrozen", "remove-worker", "remove-worker" }));
}

// An operator switches a running cluster's policies. A bad name is refused with its field
// and nothing changes; a viewer may not. Under static the elastic job holds its members'
// GPUs only; switched to eps, it is taken in as it is and grows onto the idle GPUs round by
// round. The switch is an event in the job's run store.
TEST_F(LiveElasticTest, AnOperatorSwitchesTheClusterToEpsAndItsRunningJobsAreTakenIn)
{
    daemon::Daemon d(options(sched::ElasticPolicy::StaticFifo, "switch"));
    auto op = d.connect(Role::Operator, "op");
    d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    auto viewer = d.connect(Role::Viewer, "v");
    d.receive(*viewer, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    std::vector<ServerMessage> seen, seen_by_viewer;
    const auto set = [&](serve::Client& client, std::vector<ServerMessage>& into, std::optional<std::string> placement,
                         std::optional<std::string> elastic) {
        return request_reply(
            d, client, into, encode(ClientMessage { SetClusterPolicy { "p", placement, elastic, std::nullopt } }));
    };
    const JobId job = d.submit(paced_job("switched", R"([{"speed": 3000, "count": 3}])", elastic(1, 1, 3)), "test");
    EXPECT_EQ(gpus_held(status_of(d, job)), 1) << "static: its one member's GPU, not every slot's";
    EXPECT_EQ(d.cluster().elastic, "static");

    const std::map<std::string, std::pair<std::optional<std::string>, std::optional<std::string>>> bad {
        { "placement", { "best-fit", std::nullopt } },
        { "elastic", { std::nullopt, "fifo" } },
    };
    for (const auto& [field, policies] : bad) {
        const Reply r = set(*op, seen, policies.first, policies.second);
        ASSERT_TRUE(r.error) << field;
        EXPECT_EQ(r.error->code, "illegal-value");
        EXPECT_EQ(r.error->field, field);
    }
    ASSERT_TRUE(set(*op, seen, std::nullopt, std::nullopt).error) << "nothing to change";
    const Reply by_viewer = set(*viewer, seen_by_viewer, std::nullopt, "eps");
    ASSERT_TRUE(by_viewer.error);
    EXPECT_EQ(by_viewer.error->code, "not-authorized");
    EXPECT_EQ(d.cluster().placement, "lwf-1");
    EXPECT_EQ(d.cluster().elastic, "static");

    while (status_of(d, job).iteration < 10)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_FALSE(set(*op, seen, "ff", "eps").error);
    EXPECT_EQ(d.cluster().placement, "ff");
    EXPECT_EQ(d.cluster().elastic, "eps");
    d.receive(*op, encode(ClientMessage { Subscribe { "s", {}, job, {} } }));
    std::vector<WorkerId> added;
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        if (const auto* e = std::get_if<Event>(&m); e && e->event.kind == "add-worker" && is_scheduler(e->event))
            added.push_back(*e->event.worker);
        return added.size() == 2;
    })) << "the job never grew under eps";
    EXPECT_EQ(added, (std::vector<WorkerId> { 1, 2 }));
    ASSERT_FALSE(
        request_reply(d, *op, seen, encode(ClientMessage { JobCommand { "c", JobAction::Cancel, job } })).error);
    d.stop_all();
    const auto events = recorded("switch", job);
    const auto changed
        = std::find_if(events.begin(), events.end(), [](const EventRecord& e) { return e.kind == "cluster-policy"; });
    ASSERT_NE(changed, events.end());
    EXPECT_EQ(changed->actor.rfind("operator:op", 0), 0u) << changed->actor;
    EXPECT_NE(changed->message.find("placement ff, elastic eps and communication none"), std::string::npos)
        << changed->message;
}

// Under static an elastic job is placed on its members' GPUs only, so the GPUs of its other
// slots stay free for other jobs; an operator's add-worker takes an idle GPU, refused with
// no-free-gpu when none is left, and remove-worker frees one.
TEST_F(LiveElasticTest, UnderStaticAnElasticJobHoldsItsMembersGpusAndAnOperatorsResizesFollowThem)
{
    daemon::Daemon d(options(sched::ElasticPolicy::StaticFifo, "static"));
    auto op = d.connect(Role::Operator, "op");
    d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    const JobId job = d.submit(paced_job("members", R"([{"speed": 3000, "count": 4}])", elastic(2, 1, 4)), "test");
    const JobId other = d.submit(paced_job("beside", R"([{"speed": 3000}])"), "test");
    EXPECT_EQ(gpus_held(status_of(d, job)), 2) << "its two members' GPUs";
    EXPECT_EQ(gpus_held(status_of(d, other)), 1) << "placed on a GPU the elastic job's other slots leave free";
    std::vector<ServerMessage> seen;
    const auto resize = [&](ResizeAction action) {
        return request_reply(d, *op, seen, encode(ClientMessage { ResizeJob { "r", job, action, std::nullopt } }));
    };
    // At once after its submission, before its trainer has started: its members are the two
    // it starts with, so a third is within its max_workers.
    const Reply added = resize(ResizeAction::AddWorker);
    ASSERT_FALSE(added.error) << added.error->code << ": " << added.error->message;
    EXPECT_EQ(gpus_held(status_of(d, job)), 3);
    const Reply refused = resize(ResizeAction::AddWorker);
    ASSERT_TRUE(refused.error) << "every GPU is held";
    EXPECT_EQ(refused.error->code, "no-free-gpu") << refused.error->message;
    const Reply removed = resize(ResizeAction::RemoveWorker);
    ASSERT_FALSE(removed.error) << removed.error->code << ": " << removed.error->message;
    EXPECT_EQ(gpus_held(status_of(d, job)), 2) << "the removed worker's GPU is free at once";
    d.stop_all();
}

// A job whose parameter servers hold GPUs (placement.server_gpus) grows as fulcrum-sim's
// parameter-server jobs do: each EPS step adds a worker and a server, two idle GPUs, and the
// book holds both (the step doubles its pace: it is kept). An operator's add-server takes
// an idle GPU too (refused when none is left), and a removed server frees its GPU at once.
TEST_F(LiveElasticTest, AJobWhoseServersHoldGpusGrowsByAWorkerAndAServer)
{
    daemon::Daemon d(options(sched::ElasticPolicy::Eps, "paired"));
    auto op = d.connect(Role::Operator, "op");
    d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    const JobId job = d.submit(paced_job("paired", R"([{"speed": 3000, "count": 3}])",
                                   elastic(1, 1, 3) + R"(, "placement": {"server_gpus": 1})"),
        "test");
    d.receive(*op, encode(ClientMessage { Subscribe { "s", {}, job, {} } }));
    const auto gpus_of_job = [&] { return testing_support::gpus_in_book(d, job); };
    EXPECT_EQ(gpus_of_job(), 2) << "its worker's GPU and its server's";
    std::vector<ServerMessage> seen;
    const std::optional<EventRecord> server_added = scheduler_event(*op, seen, "add-server");
    ASSERT_TRUE(server_added) << "no growth step added a server";
    EXPECT_NE(server_added->message.find("2 servers now"), std::string::npos) << server_added->message;
    EXPECT_NE(server_added->message.find("and a server on GPU"), std::string::npos) << server_added->message;
    const auto worker_added = std::find_if(seen.begin(), seen.end(), [](const ServerMessage& m) {
        const auto* e = std::get_if<Event>(&m);
        return e && e->event.kind == "add-worker" && is_scheduler(e->event);
    });
    ASSERT_NE(worker_added, seen.end()) << "the step's worker";
    // The book follows the trainer's events on the cluster core's thread, a moment later
    // (CI once read it between the two).
    for (int i = 0; i < 500 && (gpus_of_job() != 4 || gpus_held(status_of(d, job)) != 2); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(gpus_of_job(), 4) << "two workers and two servers: every GPU";
    EXPECT_EQ(gpus_held(status_of(d, job)), 2);

    const auto resize = [&](ResizeAction action) {
        return request_reply(d, *op, seen, encode(ClientMessage { ResizeJob { "r", job, action, std::nullopt } }));
    };
    const Reply no_room = resize(ResizeAction::AddServer);
    ASSERT_TRUE(no_room.error) << "every GPU is held";
    EXPECT_EQ(no_room.error->code, "no-free-gpu") << no_room.error->message;
    const Reply removed = resize(ResizeAction::RemoveServer);
    ASSERT_FALSE(removed.error) << removed.error->code << ": " << removed.error->message;
    EXPECT_LE(gpus_of_job(), 3) << "the removed server's GPU is free at once";
    d.stop_all();
}

// A newcomer whose servers hold GPUs and that finds only part of its request free starts
// smaller the simulator's way (sched::eps_start_size): fewer workers and fewer server GPUs,
// in proportion, its trainer starting with a server less for each server GPU it lacks. Once
// the job beside it ends, it grows by a worker and a server.
TEST_F(LiveElasticTest, ANewcomerStartingSmallStartsWithFewerServersInProportion)
{
    daemon::Daemon d(options(sched::ElasticPolicy::Eps, "fewer-servers"));
    auto op = d.connect(Role::Operator, "op");
    d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    const JobId beside = d.submit(paced_job("beside", R"([{"speed": 3000, "count": 2}])"), "test");
    const JobId job = d.submit(paced_job("paired", R"([{"speed": 3000, "count": 2}])",
                                   elastic(2, 1, 2) + R"(, "servers": {"shards": 2}, "placement": {"server_gpus": 2})"),
        "test");
    d.receive(*op, encode(ClientMessage { Subscribe { "s", {}, job, {} } }));
    const auto gpus_of_job = [&] { return testing_support::gpus_in_book(d, job); };
    EXPECT_EQ(gpus_of_job(), 2) << "of the four it asks for, two are free: a worker's and a server's";
    EXPECT_EQ(gpus_held(status_of(d, job)), 1);
    std::vector<ServerMessage> seen;
    ASSERT_FALSE(
        request_reply(d, *op, seen, encode(ClientMessage { JobCommand { "c", JobAction::Cancel, beside } })).error);
    const std::optional<EventRecord> server_added = scheduler_event(*op, seen, "add-server");
    ASSERT_TRUE(server_added) << "no growth step added a server";
    EXPECT_NE(server_added->message.find("2 servers now"), std::string::npos)
        << "it started with one server: " << server_added->message;
    for (int i = 0; i < 200 && gpus_of_job() != 4; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(gpus_of_job(), 4) << "two workers and two servers: every GPU";
    d.stop_all();
    const std::vector<EventRecord> events = recorded("fewer-servers", job);
    const auto placed
        = std::find_if(events.begin(), events.end(), [](const EventRecord& e) { return e.kind == "job-placed"; });
    ASSERT_NE(placed, events.end());
    EXPECT_NE(placed->message.find("1 of the 2 workers it asks for and 1 of its 2 server GPUs"), std::string::npos)
        << placed->message;
}

// Under kill-restart the same growth step is carried out by stopping the job at a barrier
// with a checkpoint and starting it again from there, in the same run: a job-restarted
// event says what it cost, the added worker joins at the restarted job's first barrier,
// and the run keeps every iteration once, with none superseded. The restart pauses the job
// on its run clock for what the scenario says a restart costs (elastic.pause_s.restart).
TEST_F(LiveElasticTest, KillRestartCarriesTheSameDecisionOutByRestartingTheJob)
{
    daemon::Daemon d(options(sched::ElasticPolicy::KillRestart, "restart"));
    EXPECT_EQ(d.cluster().elastic, "kill-restart");
    auto op = d.connect(Role::Operator, "op");
    d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    std::string section = elastic(1, 1, 2);
    section.insert(section.size() - 1, R"(, "pause_s": {"restart": 1.5, "add-worker": 100})");
    const JobId job = d.submit(paced_job("restarted", R"([{"speed": 3000, "count": 2}])", section), "test");
    d.receive(*op, encode(ClientMessage { Subscribe { "s", {}, job, {} } }));
    std::vector<ServerMessage> seen;
    std::optional<EventRecord> restarted, added;
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        if (const auto* e = std::get_if<Event>(&m)) {
            if (e->event.kind == "job-restarted")
                restarted = e->event;
            if (e->event.kind == "add-worker")
                added = e->event;
        }
        return restarted && added;
    })) << "the job was never restarted with its new worker";
    EXPECT_EQ(restarted->actor, "scheduler (kill-restart)");
    EXPECT_NE(restarted->message.find("kill-restart: stopped at iteration"), std::string::npos) << restarted->message;
    EXPECT_NE(restarted->message.find("growth round"), std::string::npos) << restarted->message;
    EXPECT_EQ(added->worker, 1);
    EXPECT_EQ(added->actor, "scheduler (kill-restart)");
    EXPECT_NE(added->message.find("the job pauses 1.5 s for it"), std::string::npos)
        << "the restart's pause, not the add-worker's: " << added->message;
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        const auto* rows = std::get_if<IterationRows>(&m);
        return rows && std::any_of(rows->rows.begin(), rows->rows.end(), [](const IterationRecord& r) {
            return r.worker == 1 && r.batch_size > 0;
        });
    })) << "the added worker never computed";
    EXPECT_EQ(status_of(d, job).state, JobState::Running);
    ASSERT_FALSE(
        request_reply(d, *op, seen, encode(ClientMessage { JobCommand { "c", JobAction::Cancel, job } })).error);
    for (int i = 0; i < 500 && status_of(d, job).state != JobState::Stopped; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(status_of(d, job).state, JobState::Stopped);
    d.stop_all();

    db::RunReader reader(dir / "restart" / "runs" / ("job-" + std::to_string(job) + ".db"));
    const auto runs = reader.runs();
    ASSERT_EQ(runs.size(), 1u) << "the restart goes on in the same run";
    EXPECT_EQ(runs[0].status, "stopped");
    const auto rows = reader.iterations(runs[0].id, job, 0, 1 << 30);
    std::vector<std::int64_t> iterations;
    for (const IterationRecord& r : rows)
        if (r.worker == 0)
            iterations.push_back(r.iteration);
    ASSERT_FALSE(iterations.empty());
    for (std::size_t i = 0; i < iterations.size(); ++i)
        ASSERT_EQ(iterations[i], static_cast<std::int64_t>(i)) << "worker 0's iterations, each once, in order";
    // Worker 0 alone closed every barrier before the restart: the restarted job's first
    // iteration starts 1.5 s of run clock after the last one ended.
    const auto at = [&](std::int64_t k) {
        return *std::find_if(
            rows.begin(), rows.end(), [&](const IterationRecord& r) { return r.worker == 0 && r.iteration == k; });
    };
    ASSERT_GT(added->iteration, 0);
    EXPECT_NEAR(at(added->iteration).start_s - at(added->iteration - 1).end_s, 1.5, 1e-9);
    EXPECT_NEAR(at(added->iteration - 1).start_s - at(added->iteration - 2).end_s, 0, 1e-9) << "no pause before";
    EXPECT_TRUE(reader.superseded_iterations(runs[0].id, job).empty()) << "a checkpoint at the stop: nothing redone";
}

// Nothing is lost or changed by a policy's resize: the job the EPS scheduler grew (and
// perhaps rolled back) records exactly the rows (batch sizes, times, losses) that the same
// scenario records when its own elastic.resizes make the same changes before the same
// iterations, so its parameters went through the same updates.
TEST_F(LiveElasticTest, APolicysResizesTrainExactlyAsTheSameResizesInTheScenario)
{
    const std::string workers = R"([{"speed": 3000, "count": 2}, {"speed": 150}])";
    std::string job_json = paced_job("proved", workers, elastic(1, 1, 3));
    job_json.replace(job_json.find("\"iterations\": 1000000"), 21, "\"iterations\": 120");
    job_json.replace(job_json.find("\"pace\": 2"), 9, "\"pace\": 1");
    JobId job = 0;
    {
        daemon::Daemon d(options(sched::ElasticPolicy::Eps, "proof"));
        job = d.submit(job_json, "test");
        for (int i = 0; i < 3000 && status_of(d, job).state != JobState::Finished; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        ASSERT_EQ(status_of(d, job).state, JobState::Finished) << status_of(d, job).message;
    }
    db::RunReader live(dir / "proof" / "runs" / ("job-" + std::to_string(job) + ".db"));
    const RunId live_run = live.runs().at(0).id;
    std::string resizes;
    for (const EventRecord& e : live.events(live_run))
        if (is_scheduler(e) && (e.kind == "add-worker" || e.kind == "remove-worker"))
            resizes += std::string(resizes.empty() ? "" : ", ") + R"({"before_iteration": )"
                + std::to_string(e.iteration) + R"(, "action": ")" + e.kind + R"(", "target": )"
                + std::to_string(*e.worker) + "}";
    EXPECT_NE(resizes.find("add-worker"), std::string::npos) << resizes;
    EXPECT_NE(resizes.find("remove-worker"), std::string::npos) << "the slow worker's step, rolled back: " << resizes;

    std::string scripted = job_json;
    scripted.replace(scripted.find(R"("max_workers": 3})"), 17, R"("max_workers": 3, "resizes": [)" + resizes + "]}");
    run::RunOptions offline;
    offline.database = dir / "scripted.db";
    offline.mode = scenario::Mode::Virtual;
    const run::RunSummary summary = run::run_scenario(scenario::parse_scenario(scripted, "scripted"), offline);
    db::RunReader scripted_store(dir / "scripted.db");
    const auto expected = scripted_store.iterations(summary.run, 0);
    const auto got = live.iterations(live_run, job);
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        SCOPED_TRACE("iteration " + std::to_string(got[i].iteration) + " worker " + std::to_string(got[i].worker));
        ASSERT_EQ(got[i].iteration, expected[i].iteration);
        ASSERT_EQ(got[i].worker, expected[i].worker);
        EXPECT_EQ(got[i].batch_size, expected[i].batch_size);
        EXPECT_EQ(got[i].end_s, expected[i].end_s);
        EXPECT_EQ(got[i].loss, expected[i].loss);
    }
}

// Virtual-mode elastic jobs run far faster than wall time: the scheduler decides on their
// shared clock, a round every elastic.round_s of *virtual* time, while no job goes past the
// instant it decides at. So its decisions fall at the same iterations in every run, whatever
// the machine's speed: two daemons grow and roll back the same job identically, and the
// first growth comes one round of virtual time after the job started.
TEST_F(LiveElasticTest, OnTheSharedVirtualClockTheSchedulersDecisionsAreTheSameInEveryRun)
{
    const std::string workers = R"([{"speed": 3000, "count": 2}, {"speed": 150}])";
    std::string job_json = paced_job("virtual-eps", workers, elastic(1, 1, 3));
    job_json.replace(job_json.find("\"iterations\": 1000000"), 21, "\"iterations\": 400");
    job_json.replace(job_json.find("\"mode\": \"paced\""), 15, "\"mode\": \"virtual\"");
    const auto decisions = [&](const std::string& sub) {
        daemon::DaemonOptions o = options(sched::ElasticPolicy::Eps, sub);
        o.elastic.round_s = 2; // virtual seconds: an iteration of 48 samples takes about 0.016 s
        std::vector<std::string> seen;
        JobId job = 0;
        {
            daemon::Daemon d(o);
            job = d.submit(job_json, "test");
            for (int i = 0; i < 3000 && status_of(d, job).state != JobState::Finished; ++i)
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            EXPECT_EQ(status_of(d, job).state, JobState::Finished) << status_of(d, job).message;
        }
        for (const EventRecord& e : recorded(sub, job))
            if (is_scheduler(e) && (e.kind == "add-worker" || e.kind == "remove-worker"))
                seen.push_back(e.kind + " " + std::to_string(*e.worker) + " before " + std::to_string(e.iteration)
                    + " at " + std::to_string(e.time_s));
        return seen;
    };
    const std::vector<std::string> first = decisions("virtual-1");
    const std::vector<std::string> second = decisions("virtual-2");
    ASSERT_GE(first.size(), 2u) << "it grew, and the slow worker's step was rolled back";
    EXPECT_EQ(first, second);
    EXPECT_EQ(first.front().rfind("add-worker 1 before ", 0), 0u) << first.front();
    const double grown_at = std::stod(first.front().substr(first.front().rfind(" at ") + 4));
    // The job's clock runs an iteration (about 0.017 s) ahead of the daemon's: its time 0 is
    // the daemon's time at its first barrier.
    EXPECT_GE(grown_at, 2.0) << "the first round comes a round after the job started";
    EXPECT_LT(grown_at, 2.0 + 0.05) << "at the round's instant, applied at the job's next barrier";
}

namespace {

// Four GPUs: tenant A's quota is 2 and it borrows; tenant B's is 2 and it does not.
sched::TenantQuotas a_borrows_b_owns(sched::RigidBorrowers rigid = sched::RigidBorrowers::Wait)
{
    sched::TenantQuotas q;
    q.named["A"] = { .gpus = 2, .borrow = true, .weight = 1 };
    q.named["B"] = { .gpus = 2, .borrow = false, .weight = 1 };
    q.rigid = rigid;
    return q;
}

// GPUs held by each tenant's jobs, from the cluster's book and the jobs' owners.
std::map<std::string, int> gpus_by_tenant(const daemon::Daemon& d)
{
    std::map<JobId, std::string> owner;
    for (const JobStatus& s : d.jobs())
        owner[s.job] = s.tenant;
    std::map<std::string, int> held;
    for (const GpuUsage& g : d.cluster().gpus)
        for (const JobId job : g.jobs)
            ++held[owner[job]];
    return held;
}

} // namespace

// Issue 47's live reclaim: tenant A's elastic job asks for all four GPUs and gets them while
// B is idle (two of them borrowed beyond A's quota of 2). B's newcomer, within B's quota,
// takes those two back once A's job is past its early feedback: the reclaim's remove-worker
// events name both tenants, and each tenant then holds its quota.
TEST_F(LiveElasticTest, ATenantsNewcomerReclaimsTheGpusAnotherTenantsElasticJobBorrowed)
{
    daemon::DaemonOptions o = options(sched::ElasticPolicy::Eps, "reclaim");
    o.cluster.tenants = a_borrows_b_owns();
    o.elastic.feedback = sched::parse_early_feedback("iterations:30");
    o.elastic.round_s = 3600; // no growth round: this test is about reclaim
    daemon::Daemon d(o);
    auto admin = d.connect(Role::Admin, "admin");
    d.receive(*admin, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    d.receive(*admin, encode(ClientMessage { Subscribe { "s", {}, std::nullopt, {} } }));
    const JobId borrower = d.submit(paced_job("borrower", R"([{"speed": 1000, "count": 4}])", elastic(4, 1, 4)), "test",
        daemon::Daemon::Origin::Client, "A");
    EXPECT_EQ(gpus_held(status_of(d, borrower)), 4) << "A borrows B's idle quota";
    EXPECT_EQ(gpus_by_tenant(d), (std::map<std::string, int> { { "A", 4 } }));
    const JobId owner
        = d.submit(paced_job("owner", R"([{"speed": 3000, "count": 2}])"), "test", daemon::Daemon::Origin::Client, "B");
    EXPECT_EQ(status_of(d, owner).state, JobState::Queued) << "A's job has not given early feedback yet";
    std::vector<ServerMessage> seen;
    ASSERT_TRUE(wait_for(*admin, seen, [&](const ServerMessage& m) {
        const auto* u = std::get_if<JobUpdate>(&m);
        return u && u->status.job == owner && u->status.state == JobState::Running;
    })) << "B's job never started";
    std::vector<EventRecord> reclaimed;
    const auto note = [&](const ServerMessage& m) {
        if (const auto* e = std::get_if<Event>(&m);
            e && e->event.job == borrower && is_scheduler(e->event) && e->event.kind == "remove-worker")
            reclaimed.push_back(e->event);
        return reclaimed.size() == 2;
    };
    for (const ServerMessage& m : seen)
        note(m);
    ASSERT_TRUE(reclaimed.size() == 2 || wait_for(*admin, seen, note)) << reclaimed.size() << " workers reclaimed";
    for (const EventRecord& e : reclaimed) {
        EXPECT_GE(e.iteration, 30) << "reclaimed before its early feedback";
        EXPECT_NE(e.message.find("eps: reclaimed for job " + std::to_string(owner)
                      + " of tenant B (within its quota of 2 GPUs; tenant A holds 4, 2 of them borrowed beyond its "
                        "quota of 2)"),
            std::string::npos)
            << e.message;
    }
    EXPECT_EQ(reclaimed[0].worker, 3);
    EXPECT_EQ(reclaimed[1].worker, 2);
    // Both jobs' members, and both tenants' use: each holds its quota.
    for (int i = 0; i < 3000 && gpus_by_tenant(d) != std::map<std::string, int> { { "A", 2 }, { "B", 2 } }; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(gpus_by_tenant(d), (std::map<std::string, int> { { "A", 2 }, { "B", 2 } }));
    EXPECT_EQ(gpus_held(status_of(d, owner)), 2);
    EXPECT_EQ(gpus_held(status_of(d, borrower)), 2) << "its members: workers 0 and 1";
    EXPECT_EQ(status_of(d, borrower).placement[2], -1);
    EXPECT_EQ(status_of(d, borrower).placement[3], -1);

    d.stop_all();
    const auto events = recorded("reclaim", borrower);
    EXPECT_EQ(std::count_if(events.begin(), events.end(),
                  [](const EventRecord& e) {
                      return e.kind == "remove-worker" && e.message.find("reclaimed for job") != std::string::npos;
                  }),
        2)
        << "both reclaims are in A's run store";
}

// A job of a tenant that does not borrow never holds more than its quota: B's job of three
// workers on a cluster of four is refused at submission, naming the quota; B's job of two
// waits while B's first job holds its quota, though GPUs idle.
TEST_F(LiveElasticTest, ATenantThatDoesNotBorrowStaysWithinItsQuota)
{
    daemon::DaemonOptions o = options(sched::ElasticPolicy::StaticFifo, "quota");
    o.cluster.tenants = a_borrows_b_owns();
    daemon::Daemon d(o);
    try {
        d.submit(paced_job("big", R"([{"speed": 3000, "count": 3}])"), "test", daemon::Daemon::Origin::Client, "B");
        ADD_FAILURE() << "a job beyond B's quota was accepted";
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "workers");
        EXPECT_EQ(e.reason(),
            "needs 3 GPUs to start; tenant B's quota is 2 GPUs and it does not borrow (the cluster file's tenants "
            "section)");
    }
    const JobId first
        = d.submit(paced_job("first", R"([{"speed": 3000, "count": 2}])"), "test", daemon::Daemon::Origin::Client, "B");
    const JobId second = d.submit(
        paced_job("second", R"([{"speed": 3000, "count": 1}])"), "test", daemon::Daemon::Origin::Client, "B");
    EXPECT_EQ(status_of(d, first).state, JobState::Running);
    const JobStatus waiting = status_of(d, second);
    EXPECT_EQ(waiting.state, JobState::Queued);
    EXPECT_EQ(waiting.message,
        "waiting for its tenant's quota: tenant B holds 2 of its 2 GPUs and does not borrow; this job needs 1");
    const JobId borrowed
        = d.submit(paced_job("a", R"([{"speed": 3000, "count": 2}])"), "test", daemon::Daemon::Origin::Client, "A");
    EXPECT_EQ(status_of(d, borrowed).state, JobState::Running) << "A takes the two idle GPUs";
    d.stop_all();
}

// rigid_borrowers requeue: tenant A's non-elastic job borrowed two GPUs; B's newcomer stops it
// at a checkpoint and it goes back to the queue; when B's job ends it is placed again and goes
// on from that checkpoint in the same run.
TEST_F(LiveElasticTest, ARigidBorrowerIsRequeuedFromItsCheckpointAndGoesOnFromIt)
{
    daemon::DaemonOptions o = options(sched::ElasticPolicy::StaticFifo, "requeue");
    o.cluster.tenants = a_borrows_b_owns(sched::RigidBorrowers::Requeue);
    daemon::Daemon d(o);
    auto admin = d.connect(Role::Admin, "admin");
    d.receive(*admin, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    d.receive(*admin, encode(ClientMessage { Subscribe { "s", {}, std::nullopt, {} } }));
    const JobId borrower = d.submit(paced_job("rigid", R"([{"speed": 3000, "count": 4}])",
                                        R"(, "checkpoint": {"every_iterations": 5, "every_seconds": 0})"),
        "test", daemon::Daemon::Origin::Client, "A");
    std::vector<ServerMessage> seen;
    ASSERT_TRUE(wait_for(*admin, seen, [&](const ServerMessage& m) {
        const auto* u = std::get_if<JobUpdate>(&m);
        return u && u->status.job == borrower && u->status.iteration >= 12;
    }));
    const JobId owner
        = d.submit(paced_job("owner", R"([{"speed": 3000, "count": 2}])"), "test", daemon::Daemon::Origin::Client, "B");
    std::optional<EventRecord> requeued;
    ASSERT_TRUE(wait_for(*admin, seen, [&](const ServerMessage& m) {
        if (const auto* e = std::get_if<Event>(&m); e && e->event.job == borrower && e->event.kind == "job-queued"
            && e->event.message.rfind("requeued: ", 0) == 0)
            requeued = e->event;
        const auto* u = std::get_if<JobUpdate>(&m);
        return requeued && u && u->status.job == owner && u->status.state == JobState::Running;
    })) << "B's job never started on A's GPUs";
    EXPECT_NE(requeued->message.find("stopped at its checkpoint at iteration "), std::string::npos)
        << requeued->message;
    EXPECT_NE(requeued->message.find("reclaimed for job " + std::to_string(owner) + " of tenant B"), std::string::npos)
        << requeued->message;
    EXPECT_EQ(gpus_held(status_of(d, borrower)), 0) << "its GPUs went back";
    const std::int64_t stopped_at = status_of(d, borrower).iteration;

    ASSERT_FALSE(
        request_reply(d, *admin, seen, encode(ClientMessage { JobCommand { "c", JobAction::Cancel, owner } })).error);
    ASSERT_TRUE(wait_for(*admin, seen, [&](const ServerMessage& m) {
        const auto* u = std::get_if<JobUpdate>(&m);
        return u && u->status.job == borrower && u->status.state == JobState::Running
            && u->status.iteration > stopped_at + 3;
    })) << "A's job never went on";
    d.stop_all();
    db::RunReader reader(dir / "requeue" / "runs" / ("job-" + std::to_string(borrower) + ".db"));
    const auto runs = reader.runs();
    ASSERT_EQ(runs.size(), 1u) << "it went on in the same run";
    const auto rows = reader.iterations(runs[0].id, borrower, 0, 1 << 30);
    std::vector<std::int64_t> iterations;
    for (const IterationRecord& r : rows)
        if (r.worker == 0)
            iterations.push_back(r.iteration);
    for (std::size_t i = 0; i < iterations.size(); ++i)
        ASSERT_EQ(iterations[i], static_cast<std::int64_t>(i)) << "worker 0's iterations, each once, in order";
}
