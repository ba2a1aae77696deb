#include "common/error.h"
#include "daemon/cluster_book.h"
#include "daemon/daemon.h"
#include "daemon/job_journal.h"
#include "daemon_support.h"
#include "db/run_reader.h"
#include "gpu/cuda_devices.h"
#include "process_support.h"
#include "protocol/token_file.h"
#include "ws_client.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <thread>
#include <unistd.h>

using namespace fulcrum;
using namespace fulcrum::protocol;
using testing_support::drain;
using testing_support::reply_to;
using testing_support::request_reply;
using testing_support::wait_for;

namespace {

sched::ClusterSpec two_servers_of_four()
{
    sched::ClusterSpec c;
    c.servers = 2;
    c.gpus_per_server = 4;
    c.gpu_memory_gb = 16;
    return c;
}

// A paced job of `workers` equal workers that runs until cancelled.
std::string job_of(int workers, const std::string& extra = "")
{
    return R"({"name": "placed-)" + std::to_string(workers) + R"(", "mode": "paced", "pace": 2,
      "data": {"source": "synthetic", "train_size": 600, "test_size": 100, "dim": 8, "classes": 3},
      "model": {"type": "softmax"}, "training": {"total_batch": 48, "iterations": 1000000, "eval_interval": 1000},
      "workers": [{"speed": 3000, "count": )"
        + std::to_string(workers) + "}]" + extra + "}";
}

} // namespace

TEST(ClusterBook, LwfConsolidatesLargeJobsOnTheLeastLoadedServerAndBalancesSmallOnes)
{
    daemon::ClusterBook book(two_servers_of_four(), "lwf-1");
    std::map<JobId, double> left { { 1, 100 }, { 2, 10 } };
    const daemon::RemainingWork remaining = [&](JobId j) { return left.count(j) ? left[j] : 0.0; };
    EXPECT_EQ(book.place(1, { 3, 16 }, remaining), (std::vector<int> { 0, 1, 2 })) << "a 3-GPU job fills one server";
    // Server 0 carries job 1's 3 x 100 s, so the next large job goes to server 1.
    EXPECT_EQ(book.place(2, { 2, 16 }, remaining), (std::vector<int> { 4, 5 }));
    EXPECT_TRUE(book.place(3, { 4, 16 }, remaining).empty()) << "three GPUs are free, the job needs four";
    EXPECT_EQ(book.room_for({ 1, 16 }), 3);
    // A one-GPU job sharing memory goes to the least-loaded GPU that has room (κ = 1).
    EXPECT_EQ(book.place(4, { 1, 4 }, remaining), (std::vector<int> { 3 }));

    const ClusterState state = book.state({ 3 }, remaining);
    EXPECT_EQ(state.placement, "lwf-1");
    ASSERT_EQ(state.gpus.size(), 8u);
    EXPECT_EQ(state.gpus[0].jobs, (std::vector<JobId> { 1 }));
    EXPECT_EQ(state.gpus[0].workload_s, 100);
    EXPECT_EQ(state.gpus[0].free_memory_gb, 0);
    EXPECT_EQ(state.gpus[3].free_memory_gb, 12);
    EXPECT_EQ(state.gpus[4].server, 1);
    EXPECT_EQ(state.queue, (std::vector<JobId> { 3 }));

    book.release(1);
    // Server 0 (no work left on it) first, with the three GPUs that have a whole GPU's
    // memory; then the least-loaded free GPU of server 1.
    EXPECT_EQ(book.place(3, { 4, 16 }, remaining), (std::vector<int> { 0, 1, 2, 6 }));
    EXPECT_EQ(book.state({}, remaining).gpus[0].jobs, (std::vector<JobId> { 3 }));
}

TEST(ClusterBook, FirstFitPacksAndEveryPolicyKeepsGpusDistinctAndWithinMemory)
{
    for (const char* policy : { "ff", "ls", "rand", "lwf-1", "lwf-4" }) {
        daemon::ClusterBook book(two_servers_of_four(), policy);
        std::vector<int> used(8, 0);
        for (JobId job = 1; job <= 6; ++job) {
            const std::vector<int> gpus = book.place(job, { 3, 5 }, [](JobId) { return 1.0; }); // three 5 GB workers
            if (gpus.empty())
                continue;
            EXPECT_EQ(std::set<int>(gpus.begin(), gpus.end()).size(), gpus.size())
                << policy << ": a GPU twice in one job";
            for (int g : gpus)
                ++used[static_cast<std::size_t>(g)];
        }
        for (int g = 0; g < 8; ++g)
            EXPECT_LE(used[static_cast<std::size_t>(g)] * 5, 16) << policy << ": GPU " << g << " over its memory";
    }
    daemon::ClusterBook ff(two_servers_of_four(), "ff");
    EXPECT_EQ(ff.place(1, { 2, 8 }, {}), (std::vector<int> { 0, 1 }));
    EXPECT_EQ(ff.place(2, { 2, 8 }, {}), (std::vector<int> { 0, 1 })) << "first fit packs the first GPUs with room";
    EXPECT_EQ(ff.place(3, { 2, 8 }, {}), (std::vector<int> { 2, 3 }));
}

TEST(ClusterBook, DemandsThatCanNeverFitAreNamedAndPlacementsDescribed)
{
    daemon::ClusterBook book(two_servers_of_four(), "ff");
    EXPECT_NE(book.impossible({ 9, 16 }).find("the cluster has 8"), std::string::npos) << book.impossible({ 9, 16 });
    EXPECT_NE(book.impossible({ 2, 32 }).find("have 16 GB"), std::string::npos) << book.impossible({ 2, 32 });
    EXPECT_EQ(book.impossible({ 8, 16 }), "");
    EXPECT_EQ(book.describe({ 2, 0, 1, 3 }), "GPUs 0-3 (server 0)");
    EXPECT_EQ(book.describe({ 3, 4, 6 }), "GPUs 3-4, 6 (servers 0, 1)");
    EXPECT_EQ(book.describe({ 5 }), "GPU 5 (server 1)");
    EXPECT_THROW(daemon::ClusterBook(two_servers_of_four(), "best"), std::invalid_argument);
}

class PlacementTest : public ::testing::Test {
protected:
    std::filesystem::path dir
        = std::filesystem::temp_directory_path() / ("fulcrum-placement-" + std::to_string(::getpid()));
    void SetUp() override { std::filesystem::create_directories(dir); }
    void TearDown() override { std::filesystem::remove_all(dir); }
    // fulcrumd over a 2 x 4 cluster with its data in `dir`.
    daemon::DaemonOptions options() const
    {
        daemon::DaemonOptions o;
        o.data_dir = dir;
        o.cluster = two_servers_of_four();
        return o;
    }
};

// Live jobs on a 2 x 4 cluster under lwf-1: a job that does not fit waits in the queue
// (its status says why) while a smaller one behind it starts; cancelling frees GPUs and
// the waiting job is placed. The cluster stream and the events follow, and the run store
// records the queue and placement events first.
// --queue fifo: no job starts before an earlier one that waits for GPUs, so the small job
// that backfill would start beside the big one waits behind the wide one. A job's
// placement.server_gpus are GPUs its parameter servers hold besides its workers'.
TEST_F(PlacementTest, UnderAFifoQueueNoJobOvertakesOneThatWaitsAndServersHoldGpus)
{
    daemon::DaemonOptions o = options();
    o.queue = daemon::DaemonOptions::Queue::Fifo;
    daemon::Daemon d(o);
    const auto status = [&](JobId id) {
        for (const JobStatus& s : d.jobs())
            if (s.job == id)
                return s;
        return JobStatus {};
    };
    const JobId big = d.submit(job_of(4, R"(, "placement": {"server_gpus": 2})"), "big");
    EXPECT_EQ(status(big).placement.size(), 4u) << "one GPU per worker in its placement";
    const auto held_by = [&](JobId job) {
        int n = 0;
        for (const GpuUsage& g : d.cluster().gpus)
            n += std::count(g.jobs.begin(), g.jobs.end(), job) > 0 ? 1 : 0;
        return n;
    };
    EXPECT_EQ(held_by(big), 6) << "four workers and two servers";
    const JobId wide = d.submit(job_of(4), "wide"); // 2 GPUs are free: waits
    const JobId small = d.submit(job_of(2), "small"); // would fit, but comes after the wide one
    EXPECT_EQ(status(wide).state, JobState::Queued);
    EXPECT_EQ(status(small).state, JobState::Queued);
    EXPECT_EQ(status(small).message, "waiting behind job " + std::to_string(wide) + " (--queue fifo)");
    EXPECT_THROW(d.submit(job_of(7, R"(, "placement": {"server_gpus": 2})"), "huge"), InputError)
        << "nine GPUs on a cluster of eight";
    d.stop_all();
}

TEST_F(PlacementTest, QueuedJobsArePlacedWhenTheirGpusFreeUpAndSmallerOnesGoAhead)
{
    daemon::Daemon d(options());
    auto viewer = d.connect(Role::Viewer, "viewer");
    d.receive(*viewer, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    d.receive(
        *viewer, encode(ClientMessage { Subscribe { "c", { Stream::Cluster, Stream::Events }, std::nullopt, {} } }));
    std::vector<ServerMessage> seen;
    ASSERT_TRUE(wait_for(*viewer, seen, [](const ServerMessage& m) { return std::holds_alternative<SnapshotEnd>(m); }));
    const auto first_cluster = std::find_if(
        seen.begin(), seen.end(), [](const ServerMessage& m) { return std::holds_alternative<ClusterUpdate>(m); });
    ASSERT_NE(first_cluster, seen.end()) << "a cluster subscription starts with the cluster";
    EXPECT_EQ(std::get<ClusterUpdate>(*first_cluster).cluster.gpus.size(), 8u);

    const JobId big = d.submit(job_of(6), "big");
    const JobId wide = d.submit(job_of(4), "wide"); // 2 GPUs are free: waits
    const JobId small = d.submit(job_of(2), "small"); // fits beside the big one
    const auto status = [&](JobId id) {
        for (const JobStatus& s : d.jobs())
            if (s.job == id)
                return s;
        return JobStatus {};
    };
    EXPECT_EQ(status(big).placement, (std::vector<std::int32_t> { 0, 1, 2, 3, 4, 5 }));
    EXPECT_EQ(status(wide).state, JobState::Queued);
    EXPECT_NE(status(wide).message.find("waiting for 4 GPUs"), std::string::npos) << status(wide).message;
    EXPECT_TRUE(status(wide).placement.empty());
    EXPECT_EQ(status(small).placement, (std::vector<std::int32_t> { 6, 7 }));
    EXPECT_EQ(d.cluster().queue, (std::vector<JobId> { wide }));

    d.receive(*viewer, encode(ClientMessage { JobCommand { "x", JobAction::Cancel, big } }));
    const std::vector<ServerMessage> before_cancel = drain(*viewer);
    seen.insert(seen.end(), before_cancel.begin(), before_cancel.end());
    EXPECT_EQ(reply_to(before_cancel, "x")->error->code, "not-authorized");
    auto op = d.connect(Role::Operator, "op");
    d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    d.receive(*op, encode(ClientMessage { JobCommand { "c", JobAction::Cancel, big } }));
    ASSERT_TRUE(wait_for(*viewer, seen, [&](const ServerMessage& m) {
        const auto* c = std::get_if<ClusterUpdate>(&m);
        return c && c->cluster.queue.empty() && c->cluster.gpus[0].jobs == std::vector<JobId> { wide };
    })) << "the waiting job was never placed on the freed GPUs";
    EXPECT_EQ(status(wide).placement.size(), 4u);
    EXPECT_EQ(status(wide).state, JobState::Running);

    std::map<JobId, std::vector<std::string>> kinds;
    for (const ServerMessage& m : seen)
        if (const auto* e = std::get_if<Event>(&m); e && e->event.actor.rfind("scheduler at ", 0) == 0)
            kinds[e->event.job].push_back(e->event.kind);
    EXPECT_EQ(kinds[big], (std::vector<std::string> { "job-queued", "job-placed", "job-released" }));
    // Released where the cancelled job ended (its status's iteration and run clock), not at
    // iteration 0 and 0 s whatever it had run (issue 44).
    const JobStatus cancelled = status(big);
    for (const ServerMessage& m : seen)
        if (const auto* e = std::get_if<Event>(&m); e && e->event.job == big && e->event.kind == "job-released") {
            EXPECT_EQ(e->event.iteration, std::max<std::int64_t>(0, cancelled.iteration - 1));
            EXPECT_DOUBLE_EQ(e->event.time_s, cancelled.time_s);
        }
    EXPECT_EQ(kinds[wide], (std::vector<std::string> { "job-queued", "job-placed" }));
    EXPECT_EQ(kinds[small], (std::vector<std::string> { "job-queued", "job-placed" }));

    for (JobId id : { wide, small })
        d.receive(*op, encode(ClientMessage { JobCommand { "c" + std::to_string(id), JobAction::Cancel, id } }));
    d.stop_all();
    db::RunReader reader(dir / "runs" / ("job-" + std::to_string(wide) + ".db"));
    const auto events = reader.events(reader.runs().at(0).id);
    ASSERT_GE(events.size(), 3u);
    EXPECT_EQ(events[0].kind, "job-queued");
    EXPECT_EQ(events[1].kind, "job-placed");
    EXPECT_NE(events[1].message.find("lwf-1 placed 4 local workers on GPUs 0-3 (server 0)"), std::string::npos)
        << events[1].message;
    EXPECT_EQ(events[2].kind, "job-started");
}

// A job that waits is streamed in the cluster's queue as soon as it is submitted, and
// cancelling it takes it out of the queue at once, stopped, with a job-cancelled event.
TEST_F(PlacementTest, AQueuedJobIsStreamedInTheQueueAndCancelledAtOnce)
{
    daemon::Daemon d(options());
    auto op = d.connect(Role::Operator, "op");
    d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    d.receive(*op,
        encode(
            ClientMessage { Subscribe { "c", { Stream::Cluster, Stream::Events, Stream::Jobs }, std::nullopt, {} } }));
    std::vector<ServerMessage> seen;
    ASSERT_TRUE(wait_for(*op, seen, [](const ServerMessage& m) { return std::holds_alternative<SnapshotEnd>(m); }));

    const JobId big = d.submit(job_of(6), "big");
    const JobId wide = d.submit(job_of(4), "wide"); // 2 GPUs are free: waits
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        const auto* c = std::get_if<ClusterUpdate>(&m);
        return c && c->cluster.queue == std::vector<JobId> { wide };
    })) << "the queue was not streamed when the job was submitted";

    d.receive(*op, encode(ClientMessage { JobCommand { "cancel", JobAction::Cancel, wide } }));
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        const auto* c = std::get_if<ClusterUpdate>(&m);
        return c && c->cluster.queue.empty();
    })) << "the cancelled job stayed in the queue";
    JobStatus cancelled;
    for (const JobStatus& s : d.jobs())
        if (s.job == wide)
            cancelled = s;
    EXPECT_EQ(cancelled.state, JobState::Stopped);
    EXPECT_EQ(cancelled.message.rfind("cancelled in the queue by operator:op at ", 0), 0u) << cancelled.message;
    EXPECT_TRUE(cancelled.placement.empty());
    bool event = false;
    for (const ServerMessage& m : seen)
        if (const auto* e = std::get_if<Event>(&m); e && e->event.job == wide && e->event.kind == "job-cancelled")
            event = e->event.message.rfind("cancelled in the queue by operator:op at ", 0) == 0;
    EXPECT_TRUE(event);
    for (const JobStatus& s : d.jobs()) {
        if (s.job == big) {
            EXPECT_EQ(s.state, JobState::Running); // the job that holds GPUs is not touched
        }
    }
    d.stop_all();
}

// An operator's commands to a job whose trainer has not started (here: queued) are held
// and applied in order when it starts, so a script may pin right after submitting; a
// worker the job lacks is refused at once, a held command the trainer then refuses is a
// "command-refused" event, and a job that has ended refuses with job-not-running.
TEST_F(PlacementTest, CommandsToAJobThatHasNotStartedAreHeldUntilItsTrainerStarts)
{
    daemon::Daemon d(options());
    auto op = d.connect(Role::Operator, "op");
    d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    const JobId big = d.submit(job_of(6), "big");
    const JobId wide = d.submit(job_of(4), "wide"); // 2 GPUs are free: waits
    d.receive(
        *op, encode(ClientMessage { Subscribe { "s", { Stream::Events, Stream::Workers, Stream::Jobs }, wide, {} } }));
    std::vector<ServerMessage> seen;
    ASSERT_TRUE(wait_for(*op, seen, [](const ServerMessage& m) { return std::holds_alternative<SnapshotEnd>(m); }));

    const auto command = [&](const std::string& id, WorkerAction action, WorkerId worker, std::int32_t batch = 0) {
        WorkerCommand c;
        c.id = id;
        c.action = action;
        c.job = wide;
        c.worker = worker;
        c.batch_size = batch;
        return request_reply(d, *op, seen, encode(ClientMessage { c })); // answered from the core's thread
    };
    EXPECT_FALSE(command("pin", WorkerAction::Pin, 0, 20).error);
    EXPECT_FALSE(command("exclude", WorkerAction::Exclude, 1).error);
    EXPECT_FALSE(command("too-big", WorkerAction::Pin, 2, 1000).error) << "held: only the trainer knows the limits";
    const Reply unknown = command("unknown", WorkerAction::Pin, 9, 10);
    ASSERT_TRUE(unknown.error);
    EXPECT_EQ(unknown.error->code, "unknown-worker");
    EXPECT_NE(unknown.error->message.find("has no worker 9 (it has 4)"), std::string::npos) << unknown.error->message;

    d.receive(*op, encode(ClientMessage { JobCommand { "cancel", JobAction::Cancel, big } }));
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        const auto* w = std::get_if<WorkerUpdate>(&m);
        return w && w->job == wide && w->workers.size() == 4 && w->workers[0].batch_size == 20
            && w->workers[1].batch_size == 0 && w->workers[2].batch_size == 14 && w->workers[3].batch_size == 14;
    })) << "the held pin and exclusion did not reach the job's first barriers";
    const auto refused = std::find_if(seen.begin(), seen.end(), [&](const ServerMessage& m) {
        const auto* e = std::get_if<Event>(&m);
        return e && e->event.job == wide && e->event.kind == "command-refused";
    });
    ASSERT_NE(refused, seen.end()) << "the held pin of 1000 was not reported";
    const std::string& why = std::get<Event>(*refused).event.message;
    EXPECT_EQ(why.rfind("pin-worker 2 by operator:op at ", 0), 0u) << why;
    // X 48, worker 0 pinned at 20, and one sample left for worker 3 and for worker 1, which
    // is excluded and comes back into what the pins leave.
    EXPECT_NE(why.find("held until the job started, was refused: pin of 1000 samples for worker 2 is outside 1 to 26"),
        std::string::npos)
        << why;

    // The cancelled job has ended: it refuses.
    std::optional<Reply> ended;
    for (int tries = 0; tries < 500 && !ended; ++tries) {
        WorkerCommand c;
        c.id = "late" + std::to_string(tries);
        c.job = big;
        c.batch_size = 10;
        if (const Reply r = request_reply(d, *op, seen, encode(ClientMessage { c })); r.error)
            ended = r;
        else
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_TRUE(ended) << "a pin to a cancelled job was never refused";
    EXPECT_EQ(ended->error->code, "job-not-running");
    d.stop_all();
}

TEST_F(PlacementTest, AJobThatCouldNeverFitIsRefusedNamingTheField)
{
    daemon::Daemon d(options());
    try {
        d.submit(job_of(9), "too-many");
        ADD_FAILURE() << "a job of 9 workers was accepted on 8 GPUs";
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "workers");
        EXPECT_NE(std::string(e.what()).find("the cluster has 8"), std::string::npos) << e.what();
    }
    try {
        d.submit(job_of(2, R"(, "placement": {"memory_gb": 40})"), "too-big");
        ADD_FAILURE() << "a job asking 40 GB per worker was accepted on 16 GB GPUs";
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "placement.memory_gb");
    }
    EXPECT_TRUE(d.jobs().empty());
}

// A worker on a CUDA device the machine lacks (every device, on a machine without a GPU)
// is refused at submission with the worker and the field named; nothing is queued.
TEST_F(PlacementTest, AWorkerOnACudaDeviceThisMachineLacksIsRefusedAtSubmission)
{
    daemon::Daemon d(options());
    const std::string absent = "cuda:" + std::to_string(gpu::cuda_devices().count);
    std::string job = job_of(2);
    job.replace(job.find(R"({"speed": 3000)"), 1, R"({"name": "gpu-a", "device": ")" + absent + "\", ");
    try {
        d.submit(job, "on-gpu");
        ADD_FAILURE() << "a job on " << absent << " was accepted";
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "workers[gpu-a-0].device");
        EXPECT_NE(std::string(e.what()).find("is " + absent + ", a CUDA device this machine lacks"), std::string::npos)
            << e.what();
    }
    EXPECT_TRUE(d.jobs().empty());
}

// A journaled job whose worker's GPU this machine no longer has (fulcrumd restarted on
// another host, or a GPU gone) is named and not recovered; fulcrumd serves on.
TEST_F(PlacementTest, AJournaledJobOnAGpuThisMachineLacksIsNotRecoveredAndSaysWhy)
{
    const std::string absent = "cuda:" + std::to_string(gpu::cuda_devices().count);
    std::string job = job_of(1);
    job.replace(job.find(R"({"speed": 3000)"), 1, R"({"name": "gpu-a", "device": ")" + absent + "\", ");
    daemon::JobJournal(dir / "jobs").add(4, daemon::JobJournal::Origin::Client, "default", job);
    daemon::Daemon d(options());
    const auto found = d.recover();
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].job, 4);
    EXPECT_NE(found[0].message.find("workers[gpu-a].device"), std::string::npos) << found[0].message;
    EXPECT_NE(found[0].message.find("not recovered"), std::string::npos) << found[0].message;
    const JobId next = d.submit(job_of(1), "on-cpu");
    EXPECT_GT(next, 4);
    d.stop_all();
}

// Two live jobs whose workers fit one GPU's memory time-share it: from the next barrier on,
// each one's modelled batches take twice as long (a gpu-shared event for the worker, the
// scheduler as actor); when one ends the other has the GPU to itself again (gpu-exclusive)
// and its batches take their own time. A job alone is never told anything.
TEST_F(PlacementTest, JobsTimeSharingAGpuSlowEachOtherByTheirShare)
{
    daemon::DaemonOptions o = options();
    o.cluster.servers = 1;
    o.cluster.gpus_per_server = 1;
    daemon::Daemon d(o);
    auto op = d.connect(Role::Operator, "op");
    d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    const std::string half = R"(, "placement": {"memory_gb": 8})";
    const JobId a = d.submit(job_of(1, half), "a");
    d.receive(*op, encode(ClientMessage { Subscribe { "s", { Stream::Iterations, Stream::Events }, a, {} } }));
    std::vector<ServerMessage> seen;
    std::vector<double> alone, shared, again;
    std::optional<EventRecord> shared_event, exclusive_event;
    const auto collect = [&](std::vector<double>& into, std::size_t count) {
        return wait_for(*op, seen, [&](const ServerMessage& m) {
            if (const auto* e = std::get_if<Event>(&m)) {
                if (e->event.kind == "gpu-shared")
                    shared_event = e->event;
                if (e->event.kind == "gpu-exclusive")
                    exclusive_event = e->event;
            }
            if (const auto* rows = std::get_if<IterationRows>(&m))
                into.push_back(rows->rows.front().compute_s);
            return into.size() >= count;
        });
    };
    ASSERT_TRUE(collect(alone, 10));
    EXPECT_FALSE(shared_event) << "a job alone on its GPU is told nothing";

    const JobId b = d.submit(job_of(1, half), "b");
    ASSERT_TRUE(wait_for(*op, seen,
        [&](const ServerMessage& m) {
            const auto* e = std::get_if<Event>(&m);
            if (e && e->event.kind == "gpu-shared")
                shared_event = e->event;
            return shared_event.has_value();
        }))
        << "job " << a << " was never told it shares its GPU with job " << b;
    EXPECT_EQ(shared_event->worker, 0);
    EXPECT_EQ(shared_event->actor, "scheduler");
    EXPECT_NE(shared_event->message.find("time-shared by 2 live jobs"), std::string::npos) << shared_event->message;
    ASSERT_TRUE(collect(shared, 10));

    d.receive(*op, encode(ClientMessage { JobCommand { "c", JobAction::Cancel, b } }));
    ASSERT_TRUE(wait_for(*op, seen,
        [&](const ServerMessage& m) {
            const auto* e = std::get_if<Event>(&m);
            if (e && e->event.kind == "gpu-exclusive")
                exclusive_event = e->event;
            return exclusive_event.has_value();
        }))
        << "the GPU never went back to job " << a << " alone";
    ASSERT_TRUE(collect(again, 10));

    const auto mean = [](const std::vector<double>& v) {
        double sum = 0;
        for (double x : v)
            sum += x;
        return sum / static_cast<double>(v.size());
    };
    EXPECT_NEAR(mean(shared) / mean(alone), 2.0, 0.2);
    EXPECT_NEAR(mean(again) / mean(alone), 1.0, 0.1);
    d.stop_all();
}

// Two live jobs on one server: every push and pull crosses the server's link, so each job's
// modelled communication stretches by eq. 5's T(2) / T(1) for its own model (a
// link-contended event with the factor); on another server's GPUs a job contends with no
// one. When the neighbour ends, the link is the job's own again (link-free).
TEST_F(PlacementTest, JobsSharingAServersLinkContendByEquationFive)
{
    daemon::DaemonOptions o = options();
    o.placement = "ff";
    daemon::Daemon d(o);
    auto op = d.connect(Role::Operator, "op");
    d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    const JobId a = d.submit(job_of(1), "a"); // GPU 0, server 0
    d.receive(*op, encode(ClientMessage { Subscribe { "s", { Stream::Iterations, Stream::Events }, a, {} } }));
    std::vector<ServerMessage> seen;
    std::optional<EventRecord> contended, freed;
    const auto watch = [&](const ServerMessage& m) {
        if (const auto* e = std::get_if<Event>(&m)) {
            if (e->event.kind == "link-contended")
                contended = e->event;
            if (e->event.kind == "link-free")
                freed = e->event;
        }
    };
    const auto comm_of = [&](std::size_t count) {
        std::vector<double> comm;
        EXPECT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
            watch(m);
            if (const auto* rows = std::get_if<IterationRows>(&m))
                comm.push_back(rows->rows.front().comm_s);
            return comm.size() >= count;
        }));
        return comm;
    };
    const std::vector<double> alone = comm_of(5);
    const JobId b = d.submit(job_of(1), "b"); // GPU 1, server 0 too
    ASSERT_TRUE(wait_for(*op, seen,
        [&](const ServerMessage& m) {
            watch(m);
            return contended.has_value();
        }))
        << "job " << a << " was never told it shares its server's link with job " << b;
    EXPECT_FALSE(std::any_of(seen.begin(), seen.end(), [](const ServerMessage& m) {
        const auto* e = std::get_if<Event>(&m);
        return e && e->event.kind == "gpu-shared";
    })) << "whole-GPU jobs share no GPU";
    EXPECT_NE(contended->message.find("with 1 other live job's (eq. 5)"), std::string::npos) << contended->message;
    const std::vector<double> shared = comm_of(5);
    // The job's model: softmax over 8 inputs and 3 classes, 27 float parameters.
    const sched::ContentionModel link = o.cluster.network;
    const double bytes = 27 * 4.0;
    const double stretch = (link.a + (2 * link.b + link.eta) * bytes) / (link.a + link.b * bytes);
    EXPECT_NEAR(shared.back() / alone.back(), stretch, 1e-9);

    d.receive(*op, encode(ClientMessage { JobCommand { "c", JobAction::Cancel, b } }));
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        watch(m);
        return freed.has_value();
    }));
    const std::vector<double> again = comm_of(5);
    EXPECT_EQ(again.back(), alone.back());
    d.stop_all();
}

// fulcrumd's own default cluster (no --cluster, 64 GPUs): a CPU job's workers run beside the
// GPUs, so a job of 256 of them starts at once and holds none, while a job of GPU workers
// still takes one GPU each (issue 44 item 6). Against the real program, as an operator
// starts it.
TEST(DefaultCluster, A256WorkerCpuJobStartsWithoutAClusterFileAndTakesNoGpu)
{
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("fulcrum-default-cluster-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const pid_t daemon = testing_support::spawn_logged(
        { FULCRUM_DAEMON_BINARY, "--data-dir", (dir / "data").string(), "--listen", "127.0.0.1:0", "--no-demo" },
        dir / "fulcrumd.log");
    testing_support::Reaper reaper(daemon); // a failed assertion leaves no fulcrumd behind
    const unsigned short port = testing_support::announced_port(dir / "fulcrumd.log");
    ASSERT_NE(port, 0);
    const auto token = pick_token(read_token_file(dir / "data" / "tokens"), { Role::Operator });
    ASSERT_TRUE(token);
    testing_support::WsClient op(port, *token);
    op.send(Hello { kProtocolVersion, "placement-test" });
    const std::string wide = R"({"name": "wide-cpu", "mode": "paced", "pace": 0.5,
      "data": {"source": "synthetic", "train_size": 4096, "test_size": 100, "dim": 8, "classes": 3},
      "model": {"type": "softmax"}, "training": {"total_batch": 1024, "iterations": 1000000, "eval_interval": 1000},
      "workers": [{"speed": 3000, "count": 256}]})";
    std::string gpus = job_of(2);
    gpus.replace(gpus.find(R"({"speed": 3000,)"), 15, R"({"gpu": "v100",)");
    const Reply cpu_job = op.request(SubmitJob { "cpu", wide }, "cpu");
    ASSERT_FALSE(cpu_job.error) << cpu_job.error->message;
    const Reply gpu_job = op.request(SubmitJob { "gpu", gpus }, "gpu");
    ASSERT_FALSE(gpu_job.error) << gpu_job.error->message;
    // A virtual job's CPU workers are the scheduling model's: on GPUs, as in fulcrum-sim.
    std::string modelled = job_of(2);
    modelled.replace(modelled.find(R"("mode": "paced", "pace": 2)"), 26, R"("mode": "virtual")");
    const Reply virtual_job = op.request(SubmitJob { "virtual", modelled }, "virtual");
    ASSERT_FALSE(virtual_job.error) << virtual_job.error->message;

    std::vector<JobStatus> jobs;
    for (int i = 0; i < 200; ++i) {
        jobs = op.request(ListJobs { "l" + std::to_string(i) }, "l" + std::to_string(i)).jobs;
        if (jobs.size() == 3
            && std::all_of(jobs.begin(), jobs.end(), [](const JobStatus& j) { return j.state == JobState::Running; }))
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::kill(daemon, SIGTERM);
    ::waitpid(daemon, nullptr, 0);
    reaper.release();
    ASSERT_EQ(jobs.size(), 3u);
    const auto job_of_id = [&](JobId id) {
        return *std::find_if(jobs.begin(), jobs.end(), [id](const JobStatus& j) { return j.job == id; });
    };
    const JobStatus wide_job = job_of_id(*cpu_job.job);
    const JobStatus gpu_workers = job_of_id(*gpu_job.job);
    const JobStatus modelled_job = job_of_id(*virtual_job.job);
    EXPECT_EQ(std::count_if(
                  modelled_job.placement.begin(), modelled_job.placement.end(), [](std::int32_t g) { return g >= 0; }),
        2)
        << "a virtual job's worker takes its GPU";
    EXPECT_EQ(wide_job.state, JobState::Running) << wide_job.message;
    EXPECT_EQ(wide_job.workers, 256);
    EXPECT_TRUE(std::all_of(wide_job.placement.begin(), wide_job.placement.end(), [](std::int32_t g) { return g < 0; }))
        << "a CPU worker holds no GPU";
    db::RunReader store(dir / "data" / "runs" / ("job-" + std::to_string(wide_job.job) + ".db"));
    const auto runs = store.runs();
    ASSERT_FALSE(runs.empty());
    const auto events = store.events(runs[0].id);
    const auto placed
        = std::find_if(events.begin(), events.end(), [](const EventRecord& e) { return e.kind == "job-placed"; });
    ASSERT_NE(placed, events.end());
    EXPECT_NE(placed->message.find("its 256 CPU workers beside the GPUs (they take none)"), std::string::npos)
        << placed->message;
    EXPECT_EQ(gpu_workers.state, JobState::Running) << gpu_workers.message;
    EXPECT_EQ(std::count_if(
                  gpu_workers.placement.begin(), gpu_workers.placement.end(), [](std::int32_t g) { return g >= 0; }),
        2)
        << "a GPU worker takes its GPU";
    fs::remove_all(dir);
}
