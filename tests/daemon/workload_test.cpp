// submit-workload: a trace of virtual-mode jobs arriving on fulcrumd's one virtual clock,
// queued and placed by the live scheduler at their moments, each job's arrival, start and
// end on that clock in its status; and the simulator's parameter-server jobs run so.

#include "daemon/daemon.h"
#include "daemon_support.h"
#include "sched/elastic_simulator.h"
#include "sched/ps_live_export.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace fulcrum;
using namespace fulcrum::protocol;
using testing_support::request_reply;
using testing_support::wait_for;

namespace {

// A virtual-mode job of one worker: `iterations` of 0.1 s of compute (and its pushes and pulls)
// on the run clock.
std::string timed_job(const std::string& name, std::int64_t iterations, const std::string& mode = "virtual")
{
    return R"({"name": ")" + name + R"(", "mode": ")" + mode + R"(", "seed": 2,
      "data": {"source": "synthetic", "train_size": 600, "test_size": 100, "dim": 8, "classes": 3},
      "model": {"type": "softmax"}, "policy": {"type": "uniform"},
      "training": {"total_batch": 48, "iterations": )"
        + std::to_string(iterations) + R"(, "eval_interval": 100000},
      "workers": [{"speed": 480, "noise": {"sigma": 0}}]})";
}

class WorkloadTest : public ::testing::Test {
protected:
    std::filesystem::path dir
        = std::filesystem::temp_directory_path() / ("fulcrum-workload-" + std::to_string(::getpid()));
    void SetUp() override { std::filesystem::create_directories(dir); }
    void TearDown() override { std::filesystem::remove_all(dir); }
    // fulcrumd over a cluster of one GPU: a second job waits for the first.
    daemon::DaemonOptions options() const
    {
        daemon::DaemonOptions o;
        o.data_dir = dir;
        o.cluster.servers = 1;
        o.cluster.gpus_per_server = 1;
        return o;
    }
};

std::optional<JobStatus> status_of(const daemon::Daemon& d, JobId job)
{
    for (const JobStatus& s : d.jobs())
        if (s.job == job)
            return s;
    return std::nullopt;
}

bool ended(JobState state)
{
    return state != JobState::Queued && state != JobState::Running && state != JobState::Paused;
}

} // namespace

// Three jobs on one GPU: A arrives at 0 and runs 3 s; B arrives at 1 s, waits for the GPU
// and starts when A ends; C arrives at 10 s, after the clock was idle, and starts at once.
// The times are the daemon's, so they hold however fast the machine runs the jobs.
TEST_F(WorkloadTest, JobsArriveOnTheDaemonsClockWaitForTheirGpusAndKnowTheirCompletionTimes)
{
    daemon::Daemon d(options());
    auto op = d.connect(Role::Operator, "op");
    std::vector<ServerMessage> seen;
    d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    request_reply(d, *op, seen, encode(ClientMessage { Subscribe { "s", { Stream::Events }, std::nullopt, {} } }));
    SubmitWorkload workload { "w",
        { { timed_job("a", 30), 0 }, { timed_job("b", 20), 1 }, { timed_job("c", 10), 10 } } };
    const Reply reply = request_reply(d, *op, seen, encode(ClientMessage { workload }));
    ASSERT_FALSE(reply.error) << reply.error->message;
    ASSERT_EQ(reply.jobs.size(), 3u);
    const JobId a = reply.jobs[0].job, b = reply.jobs[1].job, c = reply.jobs[2].job;
    ASSERT_TRUE(reply.jobs[1].daemon_clock);
    EXPECT_DOUBLE_EQ(reply.jobs[1].daemon_clock->arrival_s, 1);
    EXPECT_DOUBLE_EQ(reply.jobs[2].daemon_clock->arrival_s, 10);

    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline
        && !std::all_of(reply.jobs.begin(), reply.jobs.end(), [&](const JobStatus& s) {
               const auto now = status_of(d, s.job);
               return now && ended(now->state) && now->daemon_clock && now->daemon_clock->finish_s;
           }))
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const JobStatus sa = *status_of(d, a), sb = *status_of(d, b), sc = *status_of(d, c);
    for (const JobStatus& s : { sa, sb, sc }) {
        ASSERT_EQ(s.state, JobState::Finished) << s.name << ": " << s.message;
        ASSERT_TRUE(s.daemon_clock && s.daemon_clock->start_s && s.daemon_clock->finish_s) << s.name;
        // Started and ended on the daemon's clock as far apart as the job's own run clock ran.
        EXPECT_NEAR(*s.daemon_clock->finish_s - *s.daemon_clock->start_s, s.time_s, 1e-9) << s.name;
    }
    EXPECT_DOUBLE_EQ(sa.daemon_clock->arrival_s, 0);
    EXPECT_DOUBLE_EQ(*sa.daemon_clock->start_s, 0);
    EXPECT_NEAR(*sb.daemon_clock->start_s, *sa.daemon_clock->finish_s, 1e-9) << "B starts when A frees the GPU";
    EXPECT_DOUBLE_EQ(sb.daemon_clock->arrival_s, 1);
    EXPECT_NEAR(*sc.daemon_clock->start_s, 10, 1e-9) << "C starts at its arrival on an idle cluster";
    EXPECT_NEAR(*sc.daemon_clock->finish_s - sc.daemon_clock->arrival_s, sc.time_s, 1e-9) << "C's completion time";

    // The events say when each job was to arrive and when it did.
    std::vector<std::string> b_events;
    for (const ServerMessage& m : testing_support::drain(*op))
        seen.push_back(m);
    for (const ServerMessage& m : seen)
        if (const auto* e = std::get_if<Event>(&m); e && e->event.job == b)
            b_events.push_back(e->event.kind + ": " + e->event.message);
    ASSERT_GE(b_events.size(), 2u);
    EXPECT_EQ(b_events[0].rfind("job-arriving: job 2 of a workload of 3: arrives at t=1 s", 0), 0u) << b_events[0];
    EXPECT_EQ(b_events[1].rfind("job-queued: arrived at t=1 s on fulcrumd's virtual clock", 0), 0u) << b_events[1];
    d.stop_all();
}

// All or none: a workload with one bad job is refused naming the job and its field, and no
// job of it is queued. A job that has not arrived can be cancelled.
TEST_F(WorkloadTest, ABadJobRefusesTheWholeWorkloadByItsFieldAndAnArrivingJobCanBeCancelled)
{
    daemon::Daemon d(options());
    auto op = d.connect(Role::Operator, "op");
    std::vector<ServerMessage> seen;
    d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    Reply r = request_reply(d, *op, seen,
        encode(ClientMessage {
            SubmitWorkload { "paced", { { timed_job("a", 10), 0 }, { timed_job("b", 10, "paced"), 5 } } } }));
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->field, "jobs[1].scenario.mode") << r.error->message;
    EXPECT_NE(r.error->message.find("virtual"), std::string::npos) << r.error->message;
    r = request_reply(
        d, *op, seen, R"({"type": "submit-workload", "id": "neg", "jobs": [{"scenario": {}, "arrival_s": -1}]})");
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->field, "jobs[0].arrival_s") << r.error->message;
    r = request_reply(d, *op, seen,
        encode(ClientMessage {
            SubmitWorkload { "bad", { { R"({"name": "x", "mode": "virtual", "workers": []})", 0 } } } }));
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->field.rfind("jobs[0].scenario.", 0), 0u) << r.error->field;
    EXPECT_TRUE(d.jobs().empty()) << "a refused workload queued a job";

    // A long job holds the clock short of the second job's arrival, which is then cancelled.
    r = request_reply(d, *op, seen,
        encode(ClientMessage {
            SubmitWorkload { "held", { { timed_job("long", 1000000), 0 }, { timed_job("late", 10), 1e6 } } } }));
    ASSERT_FALSE(r.error) << r.error->message;
    const JobId longer = r.jobs[0].job, late = r.jobs[1].job;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(status_of(d, late)->state, JobState::Queued);
    r = request_reply(d, *op, seen, encode(ClientMessage { JobCommand { "c1", JobAction::Cancel, late } }));
    ASSERT_FALSE(r.error) << r.error->message;
    EXPECT_EQ(status_of(d, late)->state, JobState::Stopped);
    EXPECT_NE(status_of(d, late)->message.find("cancelled in the queue"), std::string::npos)
        << status_of(d, late)->message;
    EXPECT_EQ(status_of(d, longer)->state, JobState::Running);
    r = request_reply(d, *op, seen, encode(ClientMessage { JobCommand { "c2", JobAction::Cancel, longer } }));
    ASSERT_FALSE(r.error) << r.error->message;
    d.stop_all();
}

// fulcrum-sim --export-live: the simulator's parameter-server jobs as fulcrumd runs them. On a
// cluster with room for all, under static, each job's completion time on fulcrumd's clock is
// the simulator's (its iteration at its requested size is PsClusterModel's), which checks the
// conversion and the workload's clock together.
TEST_F(WorkloadTest, ExportedParameterServerJobsTakeTheSimulatorsTimesUnderStatic)
{
    const std::vector<sched::PsJobSpec> jobs = sched::generate_ps_workload({ .jobs = 3, .mean_gap_s = 60, .seed = 4 });
    const sched::ClusterSpec cluster;
    const sched::PsClusterModel model = sched::ps_cluster_model(cluster);
    sched::ElasticOptions static_fifo;
    static_fifo.policy = sched::ElasticPolicy::StaticFifo;
    const sched::ElasticResult simulated = sched::simulate_elastic(model, jobs, static_fifo);
    ASSERT_EQ(simulated.jobs.size(), 3u);
    sched::export_live_workload(jobs, cluster, model, dir / "export");
    const sched::ClusterSpec exported = sched::load_cluster((dir / "export" / "cluster.json").string());
    EXPECT_EQ(exported.gpus(), cluster.gpus());

    daemon::DaemonOptions o = options();
    o.cluster = exported;
    daemon::Daemon d(o);
    auto op = d.connect(Role::Operator, "op");
    d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    SubmitWorkload workload { "w", {} };
    for (const sched::PsJobSpec& job : jobs) {
        const sched::LiveJob live = sched::live_job(job, model, cluster.gpus());
        workload.jobs.push_back({ live.scenario_json, live.arrival_s });
    }
    std::vector<ServerMessage> seen;
    const Reply reply = request_reply(d, *op, seen, encode(ClientMessage { workload }));
    ASSERT_FALSE(reply.error) << reply.error->field << ": " << reply.error->message;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    const auto all_ended = [&] {
        return std::all_of(reply.jobs.begin(), reply.jobs.end(), [&](const JobStatus& s) {
            const auto now = status_of(d, s.job);
            return now && ended(now->state) && now->daemon_clock && now->daemon_clock->finish_s;
        });
    };
    while (std::chrono::steady_clock::now() < deadline && !all_ended())
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        const JobStatus s = *status_of(d, reply.jobs[i].job);
        ASSERT_EQ(s.state, JobState::Finished) << s.name << ": " << s.message;
        EXPECT_EQ(s.name, simulated.jobs[i].job.name);
        EXPECT_NEAR(*s.daemon_clock->finish_s - s.daemon_clock->arrival_s, simulated.jobs[i].jct(), 1e-6) << s.name;
    }
    d.stop_all();
}
