// fulcrumd after a crash or a restart: a real fulcrumd killed with SIGKILL mid-job resumes
// the job from its checkpoint when it starts again, in the same run store, under the same
// id, and every committed row is kept; a stopped daemon's jobs are interrupted and go on
// automatically or on an operator's resume-job.

#include "access/auth.h"
#include "archive/job_files.h"
#include "daemon/daemon.h"
#include "daemon/job_journal.h"
#include "daemon_support.h"
#include "db/run_reader.h"
#include "db/run_recorder.h"
#include "predict/narx_network.h"
#include "process_support.h"
#include "ws_client.h"

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <random>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace fulcrum;
using namespace fulcrum::protocol;
using testing_support::request_reply;

namespace {

namespace fs = std::filesystem;

std::string paced_job(int iterations, const std::string& sync = "bsp")
{
    return R"({"name": "recovered", "seed": 8, "mode": "paced", "pace": 6,
      "data": {"source": "synthetic", "train_size": 1200, "test_size": 200, "dim": 12, "classes": 3},
      "model": {"type": "mlp", "hidden": [16]},
      "training": {"total_batch": 64, "learning_rate": 0.1, "momentum": 0.9, "iterations": )"
        + std::to_string(iterations) + R"(, "eval_interval": 25},
      "sync": ")"
        + sync + R"(",
      "policy": {"type": )"
        + (sync == "bsp" ? std::string(R"("lbbsp-cpu", "predictor": {"type": "ema"})") : std::string(R"("uniform")"))
        + R"(},
      "checkpoint": {"every_iterations": 10, "every_seconds": 0},
      "workers": [{"speed": 3000, "count": 3, "noise": {"sigma": 0.05}}, {"speed": 1000, "noise": {"sigma": 0.05}}]})";
}

// A real-mode job whose remote worker never comes: it holds its local worker's GPU and
// waits, with no run store yet.
std::string waiting_for_remote_worker()
{
    return R"({"name": "waits", "mode": "real",
      "data": {"source": "synthetic", "train_size": 200, "test_size": 50, "dim": 8, "classes": 3},
      "model": {"type": "softmax"}, "training": {"total_batch": 16, "iterations": 5},
      "workers": [{"speed": 1000}, {"speed": 1000, "remote": true}]})";
}

using Rows = std::map<std::pair<std::int64_t, WorkerId>, IterationRecord>;

// Run 1's rows of `job`: fulcrumd's id, which its store's rows carry.
Rows rows_of(const fs::path& store, JobId job = 1)
{
    Rows rows;
    db::RunReader reader(store);
    for (const IterationRecord& r : reader.iterations(1, job))
        rows[{ r.iteration, r.worker }] = r;
    return rows;
}

class Recovery : public ::testing::Test {
protected:
    fs::path dir = fs::temp_directory_path() / ("fulcrum-recovery-" + std::to_string(::getpid()));
    void SetUp() override { fs::create_directories(dir); }
    void TearDown() override { fs::remove_all(dir); }

    pid_t start_fulcrumd(const std::vector<std::string>& extra)
    {
        std::vector<std::string> args { FULCRUM_DAEMON_BINARY, "--data-dir", (dir / "data").string(), "--listen",
            "127.0.0.1:0", "--no-demo" };
        args.insert(args.end(), extra.begin(), extra.end());
        return testing_support::spawn_logged(std::move(args), dir / "fulcrumd.log");
    }

    // Polls the job's store until `done` holds (or 120 s pass).
    template <class Done> bool wait_for_store(const fs::path& store, Done done)
    {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
        while (std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            if (!fs::exists(store))
                continue;
            try {
                db::RunReader reader(store);
                if (done(reader))
                    return true;
            } catch (const InputError&) {
                // being created
            }
        }
        return false;
    }
};

} // namespace

// fulcrumd stops on SIGTERM through its signal_set: it exits 0, the running job stops at
// its next safe point leaving a checkpoint, and the next fulcrumd resumes it.
TEST_F(Recovery, SigtermStopsFulcrumdCleanlyAndTheNextOneResumesItsJob)
{
    std::ofstream(dir / "job.json") << paced_job(240);
    const fs::path store = dir / "data" / "runs" / "job-1.db";
    pid_t daemon = start_fulcrumd({ "--scenario", (dir / "job.json").string() });
    ASSERT_TRUE(wait_for_store(store, [](db::RunReader& r) { return r.iteration_row_count(1) > 40; }));
    ::kill(daemon, SIGTERM);
    int status = 0;
    ::waitpid(daemon, &status, 0);
    ASSERT_TRUE(WIFEXITED(status)) << "fulcrumd did not exit on SIGTERM";
    EXPECT_EQ(WEXITSTATUS(status), 0);
    db::RunReader stopped(store);
    EXPECT_EQ(stopped.run(1).status, "interrupted");
    ASSERT_TRUE(stopped.checkpoint(1, 1)) << "a clean stop leaves a checkpoint";

    daemon = start_fulcrumd({});
    const bool finished = wait_for_store(store, [](db::RunReader& r) { return r.run(1).status == "finished"; });
    ::kill(daemon, SIGTERM);
    ::waitpid(daemon, nullptr, 0);
    EXPECT_TRUE(finished) << "the job stopped by SIGTERM did not resume and finish";
}

// A job's rows carry fulcrumd's id for it (issue 43 item 6: they were job 0). A store the
// last release wrote, interrupted there, numbers its job 0: the next fulcrumd resumes it
// from that checkpoint, and the rows it adds are job 0's too, so the store stays one job.
TEST_F(Recovery, AnInterruptedStoreOfTheLastReleaseNumberingItsJob0ResumesAsJob0)
{
    std::ofstream(dir / "job.json") << paced_job(240);
    const fs::path store = dir / "data" / "runs" / "job-1.db";
    pid_t daemon = start_fulcrumd({ "--scenario", (dir / "job.json").string() });
    ASSERT_TRUE(wait_for_store(store, [](db::RunReader& r) { return r.iteration_row_count(1) > 40; }));
    ::kill(daemon, SIGTERM);
    ::waitpid(daemon, nullptr, 0);
    ASSERT_TRUE(db::RunReader(store).checkpoint(1, 1)) << "this release's rows and checkpoint are job 1's";
    EXPECT_TRUE(rows_of(store, 0).empty());
    const std::size_t before = rows_of(store).size();
    {
        sqlite3* handle = nullptr;
        ASSERT_EQ(sqlite3_open(store.c_str(), &handle), SQLITE_OK);
        for (const char* table : { "jobs", "workers", "iterations", "events", "evaluations", "checkpoints",
                 "cluster_states", "superseded_iterations", "superseded_evaluations" }) {
            const std::string sql = std::string("UPDATE ") + table + " SET job_id = 0";
            EXPECT_EQ(sqlite3_exec(handle, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
                << sqlite3_errmsg(handle);
        }
        sqlite3_close(handle);
    }
    daemon = start_fulcrumd({});
    const bool finished = wait_for_store(store, [](db::RunReader& r) { return r.run(1).status == "finished"; });
    ::kill(daemon, SIGTERM);
    ::waitpid(daemon, nullptr, 0);
    ASSERT_TRUE(finished) << "the last release's interrupted job did not resume and finish";
    EXPECT_TRUE(rows_of(store, 1).empty()) << "no row of another number in its store";
    EXPECT_GT(rows_of(store, 0).size(), before) << "it went on as job 0";
}

TEST_F(Recovery, AFulcrumdKilledMidJobResumesItFromItsCheckpointAndKeepsEveryCommittedRow)
{
    std::ofstream(dir / "job.json") << paced_job(240);
    const fs::path store = dir / "data" / "runs" / "job-1.db";
    pid_t daemon = start_fulcrumd({ "--scenario", (dir / "job.json").string() });
    std::mt19937 draw(std::random_device {}());
    const std::int64_t kill_after = std::uniform_int_distribution<std::int64_t>(20, 180)(draw);
    ASSERT_TRUE(wait_for_store(store,
        [&](db::RunReader& r) {
            const auto c = r.checkpoint(1, 1);
            return c && c->iteration >= kill_after;
        }))
        << "no checkpoint past iteration " << kill_after;
    ::kill(daemon, SIGKILL);
    ::waitpid(daemon, nullptr, 0);
    const Rows committed = rows_of(store);
    const auto checkpoint = *db::RunReader(store).checkpoint(1, 1);
    EXPECT_EQ(db::RunReader(store).run(1).status, "running");

    daemon = start_fulcrumd({}); // no scenario: it finds the interrupted job itself
    const bool finished = wait_for_store(store, [](db::RunReader& r) { return r.run(1).status == "finished"; });
    ::kill(daemon, SIGTERM);
    ::waitpid(daemon, nullptr, 0);
    ASSERT_TRUE(finished) << "the resumed job did not finish";

    db::RunReader reader(store);
    EXPECT_EQ(reader.integrity_check(), "ok");
    EXPECT_EQ(reader.runs().size(), 1u); // the same run, not a new one
    const Rows final_rows = rows_of(store);
    ASSERT_EQ(final_rows.size(), 240u * 4);
    for (const auto& [key, row] : committed) {
        const auto it = final_rows.find(key);
        ASSERT_NE(it, final_rows.end()) << "iteration " << key.first << " worker " << key.second << " was lost";
        // Paced runs are deterministic: rows past the checkpoint were recorded again identically.
        EXPECT_EQ(it->second, row) << "iteration " << key.first << " worker " << key.second;
    }
    const auto events = reader.events(1);
    const auto resumed = std::find_if(
        events.begin(), events.end(), [](const EventRecord& e) { return e.kind == "checkpoint-resumed"; });
    ASSERT_NE(resumed, events.end());
    EXPECT_NE(resumed->message.find("at iteration " + std::to_string(checkpoint.iteration)), std::string::npos);
    // Job ids go on: a job submitted now is job 2.
    EXPECT_FALSE(fs::exists(dir / "data" / "runs" / "job-2.db"));
}

TEST_F(Recovery, AStoppedDaemonsJobsAreInterruptedAndGoOnOnAnOperatorsResume)
{
    daemon::DaemonOptions options;
    options.data_dir = dir / "data";
    {
        daemon::Daemon first(options);
        EXPECT_EQ(first.submit(paced_job(400), "test"), 1);
        EXPECT_EQ(first.submit(paced_job(1600, "asp"), "test"), 2); // checkpointed between two updates
        std::string unchecked = paced_job(400);
        unchecked.replace(unchecked.find(R"("every_iterations": 10)"), 22, R"("every_iterations": 0)");
        EXPECT_EQ(first.submit(unchecked, "test"), 3); // keeps no checkpoint
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (first.jobs().at(0).iteration < 25 && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        // The destructor stops every job at its next barrier, as SIGTERM does.
    }
    EXPECT_EQ(db::RunReader(dir / "data" / "runs" / "job-1.db").run(1).status, "interrupted");

    options.resume = daemon::DaemonOptions::Resume::Manual;
    daemon::Daemon second(options);
    const auto found = second.recover();
    ASSERT_EQ(found.size(), 3u);
    EXPECT_EQ(found[0].job, 1);
    EXPECT_EQ(found[1].job, 2);
    const auto status = [&](JobId id) {
        for (const JobStatus& s : second.jobs())
            if (s.job == id)
                return s;
        return JobStatus {};
    };
    for (const JobId id : { 1, 2 }) { // bsp and asp alike wait with their checkpoints
        EXPECT_EQ(status(id).state, JobState::Interrupted) << id;
        EXPECT_NE(status(id).message.find("resume-job goes on from it"), std::string::npos) << status(id).message;
    }
    // Without a checkpoint it waits too (resume_jobs: manual), to start again from the
    // beginning on resume-job, its earlier rows kept.
    EXPECT_NE(found[2].message.find("resume-job starts it again from the beginning"), std::string::npos)
        << found[2].message;
    EXPECT_EQ(status(3).state, JobState::Interrupted);

    auto op = second.connect(Role::Operator, "op");
    second.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    std::vector<ServerMessage> seen;
    for (const char* job : { "1", "2", "3" }) { // each answered from the core's thread
        const Reply reply = request_reply(
            second, *op, seen, std::string(R"({"type": "resume-job", "id": "r)") + job + R"(", "job": )" + job + "}");
        EXPECT_EQ(reply.id, std::string("r") + job);
        EXPECT_FALSE(reply.error) << reply.error->message;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while ((status(1).state != JobState::Finished || status(2).state != JobState::Finished)
        && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_EQ(status(1).state, JobState::Finished) << status(1).message;
    ASSERT_EQ(status(2).state, JobState::Finished) << status(2).message;
    EXPECT_EQ(rows_of(dir / "data" / "runs" / "job-1.db").size(), 400u * 4);
    // One row per push, each (iteration, worker) once, in the run the job began.
    EXPECT_EQ(rows_of(dir / "data" / "runs" / "job-2.db", 2).size(), 1600u);
    EXPECT_EQ(db::RunReader(dir / "data" / "runs" / "job-2.db").runs().size(), 1u);
    while (status(3).state != JobState::Finished && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(status(3).state, JobState::Finished);
    EXPECT_EQ(
        db::RunReader(dir / "data" / "runs" / "job-3.db").runs().size(), 2u); // the interrupted run and the new one
    EXPECT_EQ(second.submit(paced_job(10), "after the restart"), 4);
}

TEST_F(Recovery, AJobKilledWhileQueuedOrWaitingIsNotLost)
{
    // Job 1 waits for a remote worker that never comes, so no run store exists yet when the
    // daemon dies; the journal still has it.
    daemon::DaemonOptions options;
    options.data_dir = dir / "data";
    const std::string waiting = waiting_for_remote_worker();
    {
        daemon::Daemon first(options);
        EXPECT_EQ(first.submit(waiting, "test"), 1);
    }
    daemon::Daemon second(options);
    const auto found = second.recover();
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].job, 1);
    EXPECT_EQ(second.jobs().at(0).name, "waits");
    EXPECT_EQ(second.submit(waiting, "next"), 2);
}

TEST_F(Recovery, AnOperatorsPolicyWithAWarmStartFileResumesWithTheFileFoundInTheModelsFolder)
{
    daemon::DaemonOptions options;
    options.data_dir = dir / "data";
    const std::string narx
        = R"({"type": "lbbsp-cpu", "predictor": {"type": "narx", "min_samples": 20, "warm_start": "file",
        "warm_start_file": "start.narx"}})";
    {
        daemon::Daemon first(options);
        std::ofstream(dir / "data" / "models" / "start.narx")
            << predict::NarxNetwork(predict::NarxShape {}, 5).serialize();
        EXPECT_EQ(first.submit(paced_job(400), "test"), 1);
        auto op = first.connect(Role::Operator, "op");
        first.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (first.jobs().at(0).iteration < 5 && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        std::vector<ServerMessage> seen;
        const Reply reply
            = request_reply(first, *op, seen, R"({"type": "set-policy", "id": "p", "job": 1, "policy": )" + narx + "}");
        ASSERT_EQ(reply.id, "p");
        ASSERT_FALSE(reply.error) << reply.error->message;
        // A checkpoint after the change took effect (every 10 iterations).
        while (std::chrono::steady_clock::now() < deadline) {
            const auto c = db::RunReader(dir / "data" / "runs" / "job-1.db").checkpoint(1, 1);
            if (c && c->policy_json.find("start.narx") != std::string::npos)
                break;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    }
    daemon::Daemon second(options); // fulcrumd's working folder is not DATA_DIR/models
    second.recover();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (second.jobs().at(0).state != JobState::Finished && second.jobs().at(0).state != JobState::Failed
        && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(second.jobs().at(0).state, JobState::Finished) << second.jobs().at(0).message;
    EXPECT_EQ(second.jobs().at(0).policy, "lbbsp-cpu");
}

// Under --elastic eps a job grown on idle GPUs and killed with SIGKILL goes on from its
// checkpoint with the members it had there, each on a GPU of the cluster book again (the
// book follows the restored members), and the scheduler's events stay in its run store.
TEST_F(Recovery, AGrownElasticJobResumesWithItsMembersOnGpusUnderEps)
{
    std::string job = paced_job(100000);
    job.replace(job.rfind('}'), 1, R"(, "elastic": {"initial_workers": 1, "min_workers": 1, "max_workers": 3}})");
    std::ofstream(dir / "job.json") << job;
    std::ofstream(dir / "cluster.json") << R"({"servers": 1, "gpus_per_server": 4, "gpu_memory_gb": 16})";
    const std::vector<std::string> eps { "--elastic", "eps", "--elastic-round-s", "0.2", "--cluster",
        (dir / "cluster.json").string() };
    std::vector<std::string> first = eps;
    first.insert(first.end(), { "--scenario", (dir / "job.json").string() });
    const fs::path store = dir / "data" / "runs" / "job-1.db";
    pid_t daemon = start_fulcrumd(first);
    std::int64_t grown_at = -1;
    ASSERT_TRUE(wait_for_store(store, [&](db::RunReader& r) {
        for (const EventRecord& e : r.events(1))
            if (e.kind == "add-worker" && e.worker == 2)
                grown_at = e.iteration;
        const auto c = r.checkpoint(1, 1);
        return grown_at >= 0 && c && c->iteration > grown_at;
    })) << "the job never grew to three workers with a checkpoint after it";
    ::kill(daemon, SIGKILL);
    ::waitpid(daemon, nullptr, 0);

    std::vector<std::string> args { FULCRUM_DAEMON_BINARY, "--data-dir", (dir / "data").string(), "--listen",
        "127.0.0.1:0", "--no-demo" };
    args.insert(args.end(), eps.begin(), eps.end());
    daemon = testing_support::spawn_logged(std::move(args), dir / "fulcrumd-again.log");
    const unsigned short port = testing_support::announced_port(dir / "fulcrumd-again.log");
    ASSERT_NE(port, 0);
    testing_support::WsClient client(
        port, access::TokenStore::load_or_create(dir / "data" / "tokens").token_for(Role::Operator).value_or(""));
    client.send(ClientMessage { Hello { kProtocolVersion, "recovery" } });
    std::vector<std::int32_t> placement;
    for (int i = 0; i < 500; ++i) {
        const Reply r = client.request(ListJobs { "l" + std::to_string(i) }, "l" + std::to_string(i));
        if (!r.jobs.empty() && r.jobs.front().state == JobState::Running)
            placement = r.jobs.front().placement;
        if (std::count_if(placement.begin(), placement.end(), [](std::int32_t g) { return g >= 0; }) == 3)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(daemon, SIGTERM);
    ::waitpid(daemon, nullptr, 0);
    ASSERT_EQ(placement.size(), 4u);
    EXPECT_EQ(std::count_if(placement.begin(), placement.end(), [](std::int32_t g) { return g >= 0; }), 3)
        << "the three members the checkpoint holds, each on a GPU";
    EXPECT_EQ(placement[3], -1) << "the slot that never joined holds no GPU";
    std::vector<std::int32_t> gpus(placement.begin(), placement.begin() + 3);
    std::sort(gpus.begin(), gpus.end());
    EXPECT_EQ(std::unique(gpus.begin(), gpus.end()), gpus.end()) << "one GPU each";
}

// What recovery makes of each journaled job, decided in process with nothing run (the core's
// recovery cases, deterministic): a job whose run ended drops its journal entry silently (only
// the journal did not know); an external job is recorded lost (its ranks went with the
// fulcrumd they reported to); a store that cannot be read and a scenario that no longer loads
// are named and not recovered, each message saying why.
TEST_F(Recovery, AJournaledJobIsDroppedLostOrNotRecoveredAsItsStoreAndScenarioSay)
{
    const fs::path data = dir / "data";
    daemon::JobJournal journal(data / "jobs");
    fs::create_directories(data / "runs");
    const auto store = [&](JobId id) { return data / "runs" / ("job-" + std::to_string(id) + ".db"); };
    journal.add(1, daemon::JobJournal::Origin::Client, "default", paced_job(100)); // its run finished
    {
        db::RunRecorder recorder(store(1));
        db::RunInfo run;
        run.name = "recovered";
        run.mode = "paced";
        recorder.end_run(recorder.begin_run(run), "finished");
    }
    journal.add(2, daemon::JobJournal::Origin::Client, "default",
        R"({"name": "torch-job", "external": {"framework": "pytorch"}, "training": {"total_batch": 64, "iterations": 10},
            "policy": {"type": "uniform"}, "workers": [{"name": "rank", "count": 2}]})");
    journal.add(3, daemon::JobJournal::Origin::Client, "default", paced_job(100));
    std::ofstream(store(3)) << "not a run store";
    std::string unknown_model = paced_job(100);
    unknown_model.replace(unknown_model.find(R"("type": "mlp")"), 13, R"("type": "transformer-xl")");
    journal.add(4, daemon::JobJournal::Origin::Client, "default", unknown_model);

    daemon::DaemonOptions options;
    options.data_dir = data;
    options.resume = daemon::DaemonOptions::Resume::Manual;
    daemon::Daemon d(options);
    const auto found = d.recover();
    std::map<JobId, std::string> said;
    for (const auto& f : found)
        said[f.job] = f.message;
    EXPECT_EQ(said.count(1), 0u) << "an ended job is not listed: " << said[1];
    EXPECT_EQ(said[2], "an external job: recorded as lost (its ranks went with fulcrumd's restart)");
    EXPECT_EQ(said[3].rfind("its run store cannot be read (", 0), 0u) << said[3];
    EXPECT_NE(said[3].find("); not recovered"), std::string::npos) << said[3];
    EXPECT_EQ(said[4].rfind("its scenario no longer loads (", 0), 0u) << said[4];
    EXPECT_NE(said[4].find("model.type"), std::string::npos) << "names the field: " << said[4];
    EXPECT_EQ(found.size(), 3u);

    const auto jobs = d.jobs();
    ASSERT_EQ(jobs.size(), 1u) << "only the external job is in the table";
    EXPECT_EQ(jobs[0].job, 2);
    EXPECT_EQ(jobs[0].state, JobState::Lost);
    std::vector<JobId> journaled;
    for (const auto& e : journal.entries())
        journaled.push_back(e.job);
    EXPECT_EQ(journaled, (std::vector<JobId> { 3, 4 })) << "the ended and the lost jobs leave the journal; the "
                                                           "others stay for an operator to mend";
    d.stop_all();
}

// A job id is never given twice, across restarts too: a job that ended without a run store
// (cancelled while queued) leaves no entry and no store, yet the next fulcrumd gives the next
// id, not its own again (the journal's last-job). A damaged marker, or one out of range, is no
// worse than none.
TEST_F(Recovery, AJobsIdIsNotGivenAgainAfterARestartThoughItLeftNoRunStore)
{
    daemon::DaemonOptions options;
    options.data_dir = dir / "data";
    options.cluster.servers = 1;
    options.cluster.gpus_per_server = 1;
    // It waits for a remote worker that never comes, holding the one GPU: no run store yet.
    const std::string waiting = waiting_for_remote_worker();
    {
        daemon::Daemon first(options);
        EXPECT_EQ(first.submit(waiting, "test"), 1);
        EXPECT_EQ(first.submit(waiting, "test"), 2); // queued behind it
        auto op = first.connect(Role::Operator, "op");
        first.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
        std::vector<ServerMessage> seen;
        const Reply reply
            = request_reply(first, *op, seen, encode(ClientMessage { JobCommand { "c", JobAction::Cancel, 2 } }));
        EXPECT_FALSE(reply.error) << reply.error->message;
    }
    EXPECT_FALSE(fs::exists(dir / "data" / "runs" / "job-2.db")) << "it never ran";
    std::vector<JobId> journaled;
    for (const auto& e : daemon::JobJournal(dir / "data" / "jobs").entries())
        journaled.push_back(e.job);
    EXPECT_EQ(journaled, std::vector<JobId> { 1 }) << "the cancelled job left the journal";
    {
        daemon::Daemon second(options);
        EXPECT_EQ(second.recover().size(), 1u);
        EXPECT_EQ(second.submit(waiting, "after the restart"), 3) << "not job 2 again";
    }
    std::ofstream(dir / "data" / "jobs" / "last-job", std::ios::trunc) << "not a number";
    {
        daemon::Daemon third(options);
        third.recover();
        EXPECT_EQ(third.submit(waiting, "after a damaged marker"), 4) << "job 3 is still in the journal";
    }
    // An id past what a job's files can be named by (9 digits) is a damaged marker too.
    std::ofstream(dir / "data" / "jobs" / "last-job", std::ios::trunc) << archive::kMaxJobId;
    daemon::Daemon fourth(options);
    fourth.recover();
    EXPECT_EQ(fourth.submit(waiting, "after a marker out of range"), 5);
    fourth.stop_all();
}

// What someone leaves in DATA_DIR hangs nothing: a FIFO (whose open waits for a writer
// forever) at the job id marker, as a journal entry, as a journaled job's run store or its
// SQLite journal, as a job's start marker and as the partial file of the next entry, and a
// folder named as an entry. Each is named, or read as none, or replaced (fulcrumd's own
// partial file and start marker, a link there too: its target is left alone), and fulcrumd
// starts, recovers the jobs beside them and takes the next.
TEST_F(Recovery, FifosAndFoldersInTheDataFolderAreNamedAndHangNothing)
{
    const fs::path data = dir / "data";
    const fs::path jobs = data / "jobs";
    fs::create_directories(data / "runs");
    {
        daemon::JobJournal journal(jobs);
        journal.add(7, daemon::JobJournal::Origin::Client, "default", paced_job(100));
        journal.add(8, daemon::JobJournal::Origin::Client, "default", paced_job(100));
        journal.add(10, daemon::JobJournal::Origin::Client, "default", paced_job(100));
        db::RunRecorder recorder(data / "runs" / "job-10.db");
        db::RunInfo run;
        run.name = "recovered";
        run.mode = "paced";
        recorder.begin_run(run);
    }
    const auto fifo = [](const fs::path& path) {
        fs::remove(path);
        ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
    };
    fifo(jobs / "last-job");
    fifo(jobs / "job-5.json");
    fs::create_directories(jobs / "job-6.json");
    fifo(data / "runs" / "job-7.db");
    fifo(jobs / "job-8.starting");
    fifo(data / "runs" / "job-10.db-journal");
    fifo(jobs / "job-11.json.partial");
    std::ofstream(dir / "victim") << "left alone";
    fs::create_symlink(dir / "victim", jobs / "job-11.starting");

    daemon::DaemonOptions options;
    options.data_dir = data;
    options.resume = daemon::DaemonOptions::Resume::Manual;
    daemon::Daemon d(options);
    std::vector<std::string> said;
    for (const auto& f : d.recover())
        said.push_back(std::to_string(f.job) + ": " + f.message);
    std::sort(said.begin(), said.end());
    ASSERT_EQ(said.size(), 5u) << ::testing::PrintToString(said);
    EXPECT_EQ(said[0], "0: job-5.json: cannot be read: it is a FIFO, not a regular file");
    EXPECT_EQ(said[1], "0: job-6.json: cannot be read: it is a folder, not a regular file");
    // Sorted as text: "10" before "7".
    EXPECT_EQ(said[2],
        "10: its run store cannot be read (runs/job-10.db: cannot open run database: its journal file is a FIFO, not "
        "a regular file); not recovered");
    EXPECT_EQ(said[3],
        "7: its run store cannot be read (runs/job-7.db: cannot open run database: it is a FIFO, not a regular "
        "file); not recovered");
    EXPECT_EQ(said[4], "8: queued again from the beginning (no checkpoint)") << "its start marker read as none";
    EXPECT_EQ(d.submit(paced_job(100), "after them"), 11) << "the damaged marker is ignored; the entries keep ids";
    d.stop_all();
    std::ifstream victim(dir / "victim");
    EXPECT_EQ(std::string((std::istreambuf_iterator<char>(victim)), std::istreambuf_iterator<char>()), "left alone");
    EXPECT_TRUE(fs::is_regular_file(jobs / "job-11.json") || !fs::exists(jobs / "job-11.json"))
        << "its entry was written in place of the FIFO (and removed when it ended)";
}
