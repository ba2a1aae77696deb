// A remote worker's liveness, with real fulcrum-worker processes on loopback: one frozen
// with SIGSTOP is lost once it has been silent for the job's worker timeout, and the job
// moves again without it; one whose batches take longer than the timeout is not lost, since
// its connection's own thread sends a heartbeat every second.

#include "db/run_reader.h"
#include "process_support.h"
#include "served.h"
#include "ws_client.h"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <memory>
#include <sstream>
#include <sys/wait.h>
#include <thread>

using namespace fulcrum;
using namespace fulcrum::protocol;
using testing_support::Served;
using testing_support::WsClient;

namespace {

namespace fs = std::filesystem;

// A real-mode job of one local and two remote workers, its remote workers lost after
// `timeout_s` of silence; `sections` are more of the scenario's sections ("NAME": {...}, ).
std::string remote_job(double timeout_s, const std::string& sections = {})
{
    return R"({"name": "liveness", "seed": 3, "mode": "real", )" + sections + R"("worker_timeout_s": )"
        + std::to_string(timeout_s) + R"(,
      "data": {"source": "synthetic", "train_size": 3000, "test_size": 300, "dim": 40, "classes": 4},
      "model": {"type": "mlp", "hidden": [64]},
      "training": {"total_batch": 300, "learning_rate": 0.1, "iterations": 1000000, "eval_interval": 500000},
      "policy": {"type": "uniform"},
      "workers": [{"name": "local", "speed": 1000}, {"name": "remote", "count": 2, "speed": 1000, "remote": true}]})";
}

std::string read_text(const fs::path& file)
{
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// Waits up to `within` for the process to end; kills it if it does not. True if it ended.
bool ends_within(pid_t pid, std::chrono::seconds within)
{
    const auto deadline = std::chrono::steady_clock::now() + within;
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline) {
        if (::waitpid(pid, &status, WNOHANG) == pid)
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return false;
}

class WorkerLiveness : public ::testing::Test {
protected:
    fs::path dir = fs::temp_directory_path() / ("fulcrum-liveness-" + std::to_string(::getpid()));
    void SetUp() override { fs::create_directories(dir); }
    void TearDown() override
    {
        if (HasFailure() || std::getenv("FULCRUM_KEEP_LOGS"))
            std::cerr << "the workers' logs are kept in " << dir << "\n";
        else
            fs::remove_all(dir);
    }

    daemon::DaemonOptions options()
    {
        daemon::DaemonOptions o;
        o.data_dir = dir;
        o.cluster.servers = 1;
        o.cluster.gpus_per_server = 4;
        // The tests wait for particular rows (a worker's "dropped: excluded"): an asp job
        // streams thousands a second, and on a loaded machine a client queue of fulcrumd's
        // default 1,024 frames can drop the one awaited (a CI run waited out its 300 s,
        // most likely so).
        o.client_queue = 1 << 16;
        return o;
    }

    pid_t worker(
        unsigned short port, JobId of_job, int slot, const std::string& token, std::vector<std::string> extra = {})
    {
        std::vector<std::string> args { FULCRUM_WORKER_BINARY, "--server", "127.0.0.1:" + std::to_string(port), "--job",
            std::to_string(of_job), "--worker", std::to_string(slot), "--token", token, "--name",
            "liveness-" + std::to_string(slot) };
        args.insert(args.end(), extra.begin(), extra.end());
        return testing_support::spawn_logged(args, log(slot));
    }

    fs::path log(int slot) const { return dir / ("worker-" + std::to_string(slot) + ".log"); }

    // fulcrumd serving a job of remote workers lost after `timeout_s`, its two fulcrum-worker
    // processes started (the first with `first_args`), and the operator subscribed to it.
    void start(double timeout_s, std::vector<std::string> first_args = {}, const std::string& sections = {})
    {
        served = std::make_unique<Served>(options(), dir / "tokens");
        op = std::make_unique<WsClient>(served->server.port(), *served->tokens.token_for(Role::Operator));
        op->send(Hello { kProtocolVersion, "operator" });
        op->receive_until<Welcome>();
        const Reply submitted = op->request_keeping(SubmitJob { "s", remote_job(timeout_s, sections) }, "s");
        ASSERT_FALSE(submitted.error) << submitted.error->message;
        job = *submitted.job;
        const std::string token = *served->tokens.token_for(Role::Worker);
        first = worker(served->server.port(), job, 1, token, std::move(first_args));
        second = worker(served->server.port(), job, 2, token);
        ASSERT_FALSE(op->request_keeping(
                           Subscribe { "sub", { Stream::Iterations, Stream::Events, Stream::Jobs }, job, {} }, "sub")
                         .error);
    }

    // Cancels the job; both workers hear its end and exit; fulcrumd stops.
    void finish()
    {
        ASSERT_FALSE(op->request_keeping(JobCommand { "c", JobAction::Cancel, job }, "c").error);
        op->receive_until<JobUpdate>([](const JobUpdate& u) { return u.status.state == JobState::Stopped; });
        for (const pid_t pid : { first, second })
            if (pid != 0) { // 0: ended and reaped already
                EXPECT_TRUE(ends_within(pid, std::chrono::seconds(20)));
            }
        served->server.stop();
        served->server.wait();
        served->daemon.stop_all();
    }

    db::RunReader store() const { return db::RunReader(dir / "runs" / ("job-" + std::to_string(job) + ".db")); }

    std::unique_ptr<Served> served;
    std::unique_ptr<WsClient> op;
    JobId job = 0;
    pid_t first = 0, second = 0;
};

} // namespace

TEST_F(WorkerLiveness, AFrozenWorkerIsLostAfterTheWorkerTimeoutAndTheJobMovesAgainWithoutIt)
{
    start(3);
    op->receive_until<IterationRows>([](const IterationRows& r) { return r.rows.size() == 3 && r.iteration >= 10; });

    ::kill(first, SIGSTOP);
    const auto stopped = std::chrono::steady_clock::now();
    const Event lost = op->receive_until<Event>([](const Event& e) { return e.event.kind == "worker-lost"; });
    const double after_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count();
    EXPECT_EQ(lost.event.worker, 1);
    EXPECT_NE(lost.event.message.find("was silent for 3 s"), std::string::npos) << lost.event.message;
    // Its heartbeat stopped with it: lost at the timeout, not at the WebSocket's 5 minutes.
    EXPECT_GE(after_s, 2.5);
    EXPECT_LT(after_s, 30);
    // The job moves again without it, its share given to the others.
    const IterationRows two = op->receive_until<IterationRows>([](const IterationRows& r) {
        return r.rows.size() == 2
            && std::none_of(r.rows.begin(), r.rows.end(), [](const IterationRecord& x) { return x.worker == 1; });
    });
    EXPECT_GT(two.iteration, lost.event.iteration);

    // Woken, it finds its connection closed and says why.
    ::kill(first, SIGCONT);
    EXPECT_TRUE(ends_within(first, std::chrono::seconds(40))) << "a lost worker ends once it runs again";
    first = 0;
    EXPECT_NE(read_text(log(1)).find("silent for 3 s"), std::string::npos) << read_text(log(1));

    finish();
    db::RunReader reader = store();
    const auto dropped = reader.iterations(reader.runs().at(0).id, job, lost.event.iteration, lost.event.iteration);
    EXPECT_TRUE(std::any_of(dropped.begin(), dropped.end(),
        [](const IterationRecord& r) { return r.worker == 1 && r.decision == "dropped: silent"; }));
}

TEST_F(WorkerLiveness, AWorkerWhoseBatchesOutlastTheTimeoutStaysAMember)
{
    // Each of worker 1's batches is answered 4.5 s late: longer than the 3 s timeout, with
    // the heartbeat going on meanwhile.
    start(3, { "--batch-delay", "4.5" });
    bool lost = false;
    int complete = 0;
    while (complete < 3) {
        const ServerMessage m = op->receive();
        if (const auto* e = std::get_if<Event>(&m); e && e->event.kind == "worker-lost")
            lost = true;
        if (const auto* r = std::get_if<IterationRows>(&m); r && r->rows.size() == 3
            && std::none_of(r->rows.begin(), r->rows.end(),
                [](const IterationRecord& x) { return x.decision.starts_with("dropped"); }))
            ++complete;
    }
    EXPECT_FALSE(lost) << "a worker that computes slowly is a straggler, not a lost worker";
    finish();
}

TEST_F(WorkerLiveness, ExcludingAFrozenWorkerReleasesTheBarrierAtOnceAndWokenItRejoinsWhenIncluded)
{
    start(600); // a timeout far beyond the test: only the exclusion can release the barrier
    op->receive_until<IterationRows>([](const IterationRows& r) { return r.rows.size() == 3 && r.iteration >= 10; });

    ::kill(first, SIGSTOP);
    std::this_thread::sleep_for(std::chrono::milliseconds(500)); // the barrier now waits for it
    WorkerCommand exclude;
    exclude.id = "x";
    exclude.action = WorkerAction::Exclude;
    exclude.job = job;
    exclude.worker = 1;
    const auto asked = std::chrono::steady_clock::now();
    ASSERT_FALSE(op->request_keeping(exclude, "x").error);
    const IterationRows released = op->receive_until<IterationRows>([](const IterationRows& r) {
        return std::any_of(r.rows.begin(), r.rows.end(),
            [](const IterationRecord& x) { return x.worker == 1 && x.decision == "dropped: excluded"; });
    });
    const double after_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
    EXPECT_LT(after_s, 10) << "the barrier the frozen worker held goes on when it is excluded";
    const IterationRows without = op->receive_until<IterationRows>([](const IterationRows& r) {
        return r.rows.size() == 2
            && std::none_of(r.rows.begin(), r.rows.end(), [](const IterationRecord& x) { return x.worker == 1; });
    });
    EXPECT_GT(without.iteration, released.iteration);

    // Woken, it finishes the batch it held (discarded) and, included, trains with the pack.
    ::kill(first, SIGCONT);
    WorkerCommand include = exclude;
    include.id = "i";
    include.action = WorkerAction::Include;
    ASSERT_FALSE(op->request_keeping(include, "i").error);
    const IterationRows back = op->receive_until<IterationRows>([](const IterationRows& r) {
        return r.rows.size() == 3 && std::any_of(r.rows.begin(), r.rows.end(), [](const IterationRecord& x) {
            return x.worker == 1 && !x.decision.starts_with("dropped");
        });
    });
    EXPECT_GT(back.iteration, without.iteration);

    finish();
    EXPECT_EQ(read_text(log(1)).find("unexpected-binary-frame"), std::string::npos)
        << "the late result of the given-up task is dropped quietly: " << read_text(log(1));
    db::RunReader reader = store();
    const auto events = reader.events(reader.runs().at(0).id);
    EXPECT_TRUE(
        std::none_of(events.begin(), events.end(), [](const EventRecord& e) { return e.kind == "worker-lost"; }));
}

// The same under asp, where no barrier closes: the frozen worker's task is given up at its
// exclusion, its late result is discarded when it wakes, and included again it trains on.
// Its tasks are counted by their sending, not their iteration: its clock did not move while
// it sat out, so a task after the one given up may carry the same iteration.
TEST_F(WorkerLiveness, UnderAspAFrozenWorkerExcludedAndIncludedAgainTrainsOn)
{
    start(600, {}, R"("sync": {"type": "asp"}, )");
    const auto of_worker_1 = [](const IterationRows& r, auto&& row_test) {
        return std::any_of(
            r.rows.begin(), r.rows.end(), [&](const IterationRecord& x) { return x.worker == 1 && row_test(x); });
    };
    op->receive_until<IterationRows>([&](const IterationRows& r) {
        return of_worker_1(r, [](const IterationRecord& x) { return x.iteration >= 10; });
    });

    ::kill(first, SIGSTOP);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    WorkerCommand exclude;
    exclude.id = "x";
    exclude.action = WorkerAction::Exclude;
    exclude.job = job;
    exclude.worker = 1;
    ASSERT_FALSE(op->request_keeping(exclude, "x").error);
    op->receive_until<IterationRows>([&](const IterationRows& r) {
        return of_worker_1(r, [](const IterationRecord& x) { return x.decision == "dropped: excluded"; });
    });

    ::kill(first, SIGCONT);
    WorkerCommand include = exclude;
    include.id = "i";
    include.action = WorkerAction::Include;
    ASSERT_FALSE(op->request_keeping(include, "i").error);
    int trained = 0;
    op->receive_until<IterationRows>([&](const IterationRows& r) {
        trained += of_worker_1(r, [](const IterationRecord& x) { return !x.decision.starts_with("dropped"); }) ? 1 : 0;
        return trained == 5;
    });

    finish();
    EXPECT_EQ(read_text(log(1)).find("unexpected-binary-frame"), std::string::npos)
        << "the late result of the given-up task is dropped quietly: " << read_text(log(1));
}

// Issue 42's stall detection with a real frozen worker: its batch runs past the 2 s floor
// (far past 5 x its measured time), so it is reported stalled in seconds, long before the
// 600 s worker timeout; the job's on_stall policy excludes it, which releases the barrier it
// holds, and when the exclusion's 3 s are over the woken worker trains with the pack again.
TEST_F(WorkerLiveness, AStalledWorkerIsReportedAndTheJobsOnStallPolicyExcludesItUntilItIsMeasuredAgain)
{
    start(600, {}, R"("on_stall": {"action": "exclude", "for_s": 3}, )");
    op->receive_until<IterationRows>([](const IterationRows& r) { return r.rows.size() == 3 && r.iteration >= 10; });

    ::kill(first, SIGSTOP);
    const auto stopped = std::chrono::steady_clock::now();
    const Event stalled = op->receive_until<Event>([](const Event& e) { return e.event.kind == "worker-stalled"; });
    const double after_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count();
    EXPECT_EQ(stalled.event.worker, 1);
    EXPECT_EQ(stalled.event.actor, "system");
    EXPECT_NE(stalled.event.message.find("predicted"), std::string::npos) << stalled.event.message;
    EXPECT_LT(after_s, 2 + 5) << "reported within k x the prediction (under the 2 s floor) and a few seconds";
    const IterationRows released = op->receive_until<IterationRows>([](const IterationRows& r) {
        return std::any_of(r.rows.begin(), r.rows.end(),
            [](const IterationRecord& x) { return x.worker == 1 && x.decision == "dropped: excluded"; });
    });
    EXPECT_EQ(released.iteration, stalled.event.iteration) << "the stalled barrier went on without it";
    for (const IterationRecord& r : released.rows)
        if (r.worker == 1) { // the barrier closed when it was given up, after the stall
            EXPECT_GE(r.end_s, stalled.event.time_s);
        }
    const Event excluded = op->receive_until<Event>([](const Event& e) { return e.event.kind == "exclude"; });
    EXPECT_EQ(excluded.event.worker, 1);
    EXPECT_EQ(excluded.event.actor, "policy: on_stall");
    EXPECT_GE(excluded.event.time_s, stalled.event.time_s);

    ::kill(first, SIGCONT);
    const Event readmitted = op->receive_until<Event>([](const Event& e) { return e.event.kind == "readmit"; });
    EXPECT_EQ(readmitted.event.worker, 1);
    EXPECT_GE(readmitted.event.time_s, excluded.event.time_s + 3);
    const IterationRows back = op->receive_until<IterationRows>([](const IterationRows& r) {
        return r.rows.size() == 3 && std::any_of(r.rows.begin(), r.rows.end(), [](const IterationRecord& x) {
            return x.worker == 1 && !x.decision.starts_with("dropped");
        });
    });
    EXPECT_GE(back.iteration, readmitted.event.iteration);

    finish();
    db::RunReader reader = store();
    const auto events = reader.events(reader.runs().at(0).id);
    EXPECT_TRUE(
        std::none_of(events.begin(), events.end(), [](const EventRecord& e) { return e.kind == "worker-lost"; }));
}

// An operator's remove-worker of a frozen remote worker of an elastic job releases the barrier
// it holds at once, as its exclusion does: the task under way is given up, and the job goes
// on with the two workers left. (The job's remote workers are started by hand, not taken
// from the pool: their joins start it.)
TEST_F(WorkerLiveness, RemovingAFrozenWorkerReleasesTheBarrierAtOnce)
{
    start(600, {}, R"("elastic": {"min_workers": 1, "max_workers": 3}, )");
    op->receive_until<IterationRows>([](const IterationRows& r) { return r.rows.size() == 3 && r.iteration >= 10; });

    ::kill(first, SIGSTOP);
    std::this_thread::sleep_for(std::chrono::milliseconds(500)); // the barrier now waits for it
    const auto asked = std::chrono::steady_clock::now();
    const Reply removed = op->request_keeping(ResizeJob { "r", job, ResizeAction::RemoveWorker, 1 }, "r");
    ASSERT_FALSE(removed.error) << removed.error->message;
    const IterationRows released = op->receive_until<IterationRows>([](const IterationRows& r) {
        return std::any_of(r.rows.begin(), r.rows.end(),
            [](const IterationRecord& x) { return x.worker == 1 && x.decision == "dropped: excluded"; });
    });
    const double after_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
    EXPECT_LT(after_s, 10) << "the barrier the frozen worker held goes on when it is removed";
    const IterationRows without = op->receive_until<IterationRows>([](const IterationRows& r) {
        return r.rows.size() == 2
            && std::none_of(r.rows.begin(), r.rows.end(), [](const IterationRecord& x) { return x.worker == 1; });
    });
    EXPECT_GT(without.iteration, released.iteration);

    ::kill(first, SIGCONT); // it stays connected, with no slot to compute for
    finish();
    db::RunReader reader = store();
    const auto events = reader.events(reader.runs().at(0).id);
    EXPECT_TRUE(std::any_of(events.begin(), events.end(), [](const EventRecord& e) {
        return e.kind == "remove-worker" && e.worker == 1 && e.actor.starts_with("operator:");
    }));
    EXPECT_TRUE(
        std::none_of(events.begin(), events.end(), [](const EventRecord& e) { return e.kind == "worker-lost"; }));
}
