// fulcrumctl against a real fulcrumd on loopback: the programs as an operator runs them.

#include "../daemon/process_support.h"
#include "ctl/redraw_pacer.h"
#include "ctl/run_export.h"
#include "ctl/worker_table.h"
#include "db/run_reader.h"
#include "protocol/codec.h"
#include "protocol/token_file.h"

#include <algorithm>
#include <array>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>

using namespace fulcrum;
namespace fs = std::filesystem;

namespace {

// A job that runs for a while in paced mode, so there is time to steer it.
constexpr const char* kPacedJob = R"({"name": "steered", "seed": 3, "mode": "paced", "pace": 4,
  "data": {"source": "synthetic", "train_size": 1200, "test_size": 200, "dim": 12, "classes": 3},
  "model": {"type": "mlp", "hidden": [16]},
  "training": {"total_batch": 64, "learning_rate": 0.1, "iterations": 4000, "eval_interval": 50},
  "policy": {"type": "lbbsp-cpu", "predictor": {"type": "ema"}},
  "workers": [{"speed": 3000, "count": 3}, {"speed": 1000}]})";

// A short one that finishes at once in virtual mode.
constexpr const char* kQuickJob = R"({"name": "quick", "seed": 5, "mode": "virtual",
  "data": {"source": "synthetic", "train_size": 600, "test_size": 100, "dim": 8, "classes": 2},
  "model": {"type": "softmax"},
  "training": {"total_batch": 32, "learning_rate": 0.1, "iterations": 60, "eval_interval": 20},
  "workers": [{"speed": 2000, "count": 2}, {"speed": 500}]})";

struct Result {
    int status = -1;
    std::string out;
};

class Fulcrumctl : public ::testing::Test {
protected:
    fs::path dir = fs::temp_directory_path() / ("fulcrum-ctl-" + std::to_string(::getpid()));
    pid_t daemon = 0;
    unsigned short port = 0;

    void SetUp() override
    {
        fs::create_directories(dir);
        daemon = testing_support::spawn_logged(
            { FULCRUM_DAEMON_BINARY, "--data-dir", (dir / "data").string(), "--listen", "127.0.0.1:0", "--no-demo" },
            dir / "fulcrumd.log");
        port = testing_support::announced_port(dir / "fulcrumd.log");
    }
    void TearDown() override
    {
        ::kill(daemon, SIGTERM);
        ::waitpid(daemon, nullptr, 0);
        fs::remove_all(dir);
    }

    std::string server() const { return "ws://127.0.0.1:" + std::to_string(port); }

    // Runs fulcrumctl with these arguments against this test's fulcrumd (or `url`), with the
    // daemon's token file unless `token_file` is false and `env` before the command; returns
    // its exit status and standard output.
    Result ctl(
        const std::string& args, bool token_file = true, const std::string& env = "", const std::string& url = "") const
    {
        const std::string command = env + " " + FULCRUMCTL_BINARY + " --server " + (url.empty() ? server() : url)
            + (token_file ? " --token-file " + (dir / "data" / "tokens").string() : "") + " " + args + " 2>>"
            + (dir / "ctl.err").string();
        Result r;
        FILE* pipe = ::popen(command.c_str(), "r");
        std::array<char, 4096> buffer {};
        for (std::size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;)
            r.out.append(buffer.data(), n);
        const int raw = ::pclose(pipe);
        r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
        return r;
    }

    std::string last_error() const
    {
        std::ifstream in(dir / "ctl.err");
        std::string line, last;
        while (std::getline(in, line))
            last = line;
        return last;
    }

    fs::path write(const std::string& name, const std::string& text) const
    {
        std::ofstream(dir / name) << text;
        return dir / name;
    }
};

} // namespace

TEST_F(Fulcrumctl, SubmitsSteersAndWatchesAJobAndEveryCommandSaysJson)
{
    ASSERT_NE(port, 0);
    const Result submitted = ctl("submit " + write("paced.json", kPacedJob).string());
    ASSERT_EQ(submitted.status, 0) << last_error();
    EXPECT_EQ(submitted.out, "submitted as job 1\n");

    const Result pinned = ctl("pin 1 3 40");
    EXPECT_EQ(pinned.status, 0) << last_error();
    EXPECT_EQ(ctl("exclude 1 1 --for 30").status, 0) << last_error();

    // The watch table shows what the operator did once the job's next barrier applied it.
    const Result watched = ctl("watch 1 --count 10");
    ASSERT_EQ(watched.status, 0) << last_error();
    EXPECT_NE(watched.out.find("job 1 (steered) running"), std::string::npos) << watched.out;
    EXPECT_NE(watched.out.find("pinned 40"), std::string::npos) << watched.out;
    EXPECT_NE(watched.out.find("excluded until"), std::string::npos) << watched.out;

    // --json: the server's reply as the protocol has it.
    const Result listed = ctl("jobs --json");
    ASSERT_EQ(listed.status, 0) << last_error();
    const auto decoded = protocol::decode_server(listed.out.substr(0, listed.out.find('\n')));
    ASSERT_TRUE(decoded) << listed.out;
    const auto* reply = std::get_if<protocol::Reply>(&*decoded.message);
    ASSERT_NE(reply, nullptr);
    ASSERT_EQ(reply->jobs.size(), 1u);
    EXPECT_EQ(reply->jobs[0].name, "steered");

    const Result watched_json = ctl("watch 1 --count 2 --json");
    ASSERT_EQ(watched_json.status, 0) << last_error();
    EXPECT_NE(watched_json.out.find(R"("type":"iterations")"), std::string::npos) << watched_json.out;

    EXPECT_EQ(ctl("pause 1").status, 0) << last_error();
    EXPECT_EQ(ctl("resume 1").status, 0) << last_error();
    EXPECT_EQ(ctl("set-policy 1 uniform").status, 0) << last_error();
    EXPECT_EQ(ctl(R"(set-policy 1 '{"type": "fixed", "batch_sizes": [16, 16, 16, 16]}')").status, 0) << last_error();
    // Job 1 has no elastic section: fulcrumd refuses the resize and names why.
    EXPECT_EQ(ctl("resize 1 add-worker").status, 3);
    EXPECT_NE(last_error().find("not-elastic"), std::string::npos) << last_error();
    EXPECT_EQ(ctl("freeze 1").status, 3) << "nothing resizes a job without an elastic section";
    EXPECT_NE(last_error().find("not-elastic"), std::string::npos) << last_error();
    EXPECT_EQ(ctl("set-comm srsf-1").status, 0) << last_error();
    EXPECT_EQ(ctl("set-comm srsf-0").status, 3) << "fulcrumd has no srsf-0";
    EXPECT_NE(last_error().find("comm"), std::string::npos) << last_error();
    EXPECT_NE(last_error().find("srsf-N with N >= 1"), std::string::npos) << last_error();
    EXPECT_EQ(ctl("set-comm").status, 2) << "which policy";
    EXPECT_EQ(ctl("cancel 1").status, 0) << last_error();
}

// A workload of two quick virtual jobs, the second arriving 50 s later on fulcrumd's virtual
// clock; `jobs` shows their completion times there. A bad workload file names its line and field.
TEST_F(Fulcrumctl, SubmitsAWorkloadAndListsItsJobsCompletionTimes)
{
    ASSERT_NE(port, 0);
    write("quick.json", kQuickJob);
    const fs::path workload = write("workload.csv", "scenario,arrival_s\nquick.json,0\nquick.json,50\n");
    const Result submitted = ctl("submit-workload " + workload.string());
    ASSERT_EQ(submitted.status, 0) << last_error();
    EXPECT_EQ(submitted.out, "submitted 2 jobs arriving on fulcrumd's virtual clock: 1 (t=0 s) 2 (t=50 s)\n");
    Result listed;
    for (int i = 0; i < 600; ++i) {
        listed = ctl("jobs");
        if (std::count(listed.out.begin(), listed.out.end(), '\n') == 3
            && listed.out.find("running") == std::string::npos && listed.out.find("queued") == std::string::npos)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_NE(listed.out.find("jct (s)"), std::string::npos) << listed.out;
    EXPECT_EQ(std::count(listed.out.begin(), listed.out.end(), '\n'), 3) << listed.out;
    EXPECT_EQ(listed.out.find("finished", listed.out.find("finished") + 1) != std::string::npos, true) << listed.out;
    // Both jobs alone on the cluster: the same completion time, not 50 s apart.
    std::istringstream lines(listed.out);
    std::string header, first, second;
    std::getline(lines, header);
    std::getline(lines, first);
    std::getline(lines, second);
    const auto jct = [&](const std::string& line) { return line.substr(header.find("jct (s)"), 9); };
    EXPECT_EQ(jct(first), jct(second)) << listed.out;
    EXPECT_NE(jct(first).find('.'), std::string::npos) << listed.out;

    EXPECT_EQ(ctl("submit-workload " + write("bad.csv", "scenario,arrival_s\nquick.json,-3\n").string()).status, 2);
    EXPECT_NE(last_error().find("bad.csv:2: arrival_s"), std::string::npos) << last_error();
    EXPECT_EQ(ctl("submit-workload " + write("none.csv", "scenario,arrival_s\nmissing.json,0\n").string()).status, 2);
    EXPECT_NE(last_error().find("none.csv:2: scenario"), std::string::npos) << last_error();
    EXPECT_EQ(ctl("submit-workload " + write("head.csv", "job,when\n").string()).status, 2);
    EXPECT_NE(last_error().find("scenario,arrival_s"), std::string::npos) << last_error();
    // fulcrumd refuses a job that is not virtual, naming it.
    write("paced.json", kPacedJob);
    EXPECT_EQ(ctl("submit-workload " + write("paced.csv", "scenario,arrival_s\nquick.json,0\npaced.json,1\n").string())
                  .status,
        3);
    EXPECT_NE(last_error().find("jobs[1].scenario.mode"), std::string::npos) << last_error();
}

TEST_F(Fulcrumctl, ExitStatusesSayWhatWentWrong)
{
    ASSERT_NE(port, 0);
    // 2: bad input, refused before anything is sent.
    EXPECT_EQ(ctl("frobnicate").status, 2);
    EXPECT_NE(last_error().find("unknown command 'frobnicate'"), std::string::npos) << last_error();
    EXPECT_EQ(ctl("pin 1 x 40").status, 2);
    EXPECT_NE(last_error().find("WORKER: expected a number, got 'x'"), std::string::npos) << last_error();
    EXPECT_EQ(ctl("resize 1 grow").status, 2);
    EXPECT_NE(last_error().find("ACTION is 'grow', expected add-worker"), std::string::npos) << last_error();
    EXPECT_EQ(ctl("submit /nonexistent/job.json").status, 2);
    EXPECT_EQ(ctl("jobs", false).status, 2) << "no token anywhere";
    EXPECT_NE(last_error().find("FULCRUM_TOKEN"), std::string::npos) << last_error();

    // 3: the server refused, and says why (the request's field included).
    EXPECT_EQ(ctl("jobs", false, "FULCRUM_TOKEN=not-a-token-of-this-server").status, 3);
    EXPECT_NE(last_error().find("HTTP 401"), std::string::npos) << last_error();
    EXPECT_EQ(ctl("pause 42").status, 3);
    EXPECT_NE(last_error().find("42"), std::string::npos) << last_error();
    const auto viewer
        = protocol::pick_token(protocol::read_token_file(dir / "data" / "tokens"), { protocol::Role::Viewer });
    ASSERT_TRUE(viewer);
    EXPECT_EQ(ctl("submit " + write("q.json", kQuickJob).string(), false, "FULCRUM_TOKEN=" + *viewer).status, 3)
        << "a viewer may not submit";
    EXPECT_EQ(ctl("jobs", false, "FULCRUM_TOKEN=" + *viewer).status, 0) << "but may list: " << last_error();

    // 4: nothing listening.
    const Result unreachable = ctl("jobs", true, "", "ws://127.0.0.1:1");
    EXPECT_EQ(unreachable.status, 4);
    EXPECT_NE(last_error().find("cannot connect to 127.0.0.1:1"), std::string::npos) << last_error();
}

// Issue 45 item 3: --server and FULCRUM_SERVER take every form every Fulcrum program takes
// (ws://HOST:PORT, HOST:PORT, a trailing "/"), and a bad one is refused (2) with the forms.
TEST_F(Fulcrumctl, TakesEveryFormOfTheServerAndRefusesABadOneWithTheForms)
{
    ASSERT_NE(port, 0);
    const std::string at = "127.0.0.1:" + std::to_string(port);
    for (const std::string& form : { "ws://" + at, at, "ws://" + at + "/" })
        EXPECT_EQ(ctl("jobs", true, "", form).status, 0) << form << ": " << last_error();
    const std::string tokens = (dir / "data" / "tokens").string();
    const auto from_env = [&](const std::string& value) {
        const std::string command = "FULCRUM_SERVER=" + value + " " + FULCRUMCTL_BINARY + " --token-file " + tokens
            + " jobs >/dev/null 2>>" + (dir / "ctl.err").string();
        const int raw = std::system(command.c_str());
        return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    };
    EXPECT_EQ(from_env(at), 0) << "FULCRUM_SERVER as HOST:PORT: " << last_error();
    EXPECT_EQ(from_env("http://" + at), 2);
    EXPECT_NE(last_error().find("FULCRUM_SERVER: a scheme fulcrumd does not speak"), std::string::npos) << last_error();
    EXPECT_EQ(ctl("jobs", true, "", "127.0.0.1:0").status, 2);
    EXPECT_NE(last_error().find("--server: a port that is not from 1 to 65535 in '127.0.0.1:0'; expected "
                                "ws://HOST:PORT, wss://HOST:PORT (TLS) or HOST:PORT"),
        std::string::npos)
        << last_error();
}

// fulcrumd with a cluster file naming tenants (4 GPUs, each worker on one): the default
// tenant's job of four workers borrows the research tenant's idle quota, and `tenants` says so.
TEST_F(Fulcrumctl, TenantsListsEachTenantsQuotaUseBorrowedGpusAndJobs)
{
    EXPECT_NE(ctl("tenants").out.find("no tenants' quotas"), std::string::npos) << "the default cluster names none";
    ::kill(daemon, SIGTERM);
    ::waitpid(daemon, nullptr, 0);
    const fs::path cluster
        = write("cluster.json", R"({"servers": 1, "gpus_per_server": 4, "cpu_workers_take_gpus": true,
        "tenants": {"default": {"gpus": 2, "borrow": true, "weight": 2}, "research": {"gpus": 2}}})");
    daemon = testing_support::spawn_logged({ FULCRUM_DAEMON_BINARY, "--data-dir", (dir / "data").string(), "--listen",
                                               "127.0.0.1:0", "--no-demo", "--cluster", cluster.string() },
        dir / "fulcrumd-tenants.log");
    port = testing_support::announced_port(dir / "fulcrumd-tenants.log");
    ASSERT_EQ(ctl("submit " + write("paced.json", kPacedJob).string()).status, 0) << last_error();
    const Result r = ctl("tenants");
    ASSERT_EQ(r.status, 0) << last_error();
    EXPECT_EQ(r.out,
        "tenant            quota borrows         held  borrowed  running   queued\n"
        "default               2 weight 2           4         2        1        0\n"
        "research              2 no                 0         0        0        0\n"
        "GPUs; rigid borrowers wait when an owner needs their GPUs back\n");
    const Result json = ctl("--json tenants");
    ASSERT_EQ(json.status, 0);
    EXPECT_NE(
        json.out.find(
            R"("tenant":"default","quota_gpus":2,"borrow":true,"weight":2E0,"named":true,"held_gpus":4,"borrowed_gpus":2)"),
        std::string::npos)
        << json.out;
}

TEST_F(Fulcrumctl, ExportsAFinishedRunAsCsvWithEveryRecordedRow)
{
    ASSERT_NE(port, 0);
    ASSERT_EQ(ctl("submit " + write("quick.json", kQuickJob).string()).status, 0) << last_error();
    const fs::path store = dir / "data" / "runs" / "job-1.db";
    bool finished = false;
    for (int i = 0; i < 600 && !finished; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        finished = ctl("jobs").out.find("finished") != std::string::npos;
    }
    ASSERT_TRUE(finished) << ctl("jobs").out;
    const Result runs = ctl("runs");
    EXPECT_NE(runs.out.find("job-1.db"), std::string::npos) << runs.out;

    const Result exported = ctl("export " + store.string() + " --csv " + (dir / "csv").string());
    ASSERT_EQ(exported.status, 0) << last_error();
    db::RunReader reader(store);
    const auto count_lines = [](const fs::path& path) {
        std::ifstream in(path);
        std::string line;
        std::int64_t n = 0;
        while (std::getline(in, line))
            ++n;
        return n;
    };
    EXPECT_EQ(count_lines(dir / "csv" / "run-1-iterations.csv") - 1, reader.iteration_row_count(1));
    EXPECT_EQ(count_lines(dir / "csv" / "run-1-events.csv") - 1, static_cast<std::int64_t>(reader.events(1).size()));
    std::ifstream header(dir / "csv" / "run-1-iterations.csv");
    std::string first;
    std::getline(header, first);
    EXPECT_EQ(first.rfind("job,worker,iteration,start_s,end_s,batch_size,compute_s", 0), 0u) << first;

    // The same run fetched from fulcrumd by replay gives the same records.
    const Result served = ctl("export job-1.db:1 --csv " + (dir / "served").string());
    ASSERT_EQ(served.status, 0) << last_error();
    const auto sorted_lines = [](const fs::path& path) {
        std::ifstream in(path);
        std::vector<std::string> lines;
        for (std::string line; std::getline(in, line);)
            lines.push_back(line);
        std::sort(lines.begin(), lines.end());
        return lines;
    };
    for (const char* file : { "run-1-iterations.csv", "run-1-evaluations.csv", "run-1-events.csv" })
        EXPECT_EQ(sorted_lines(dir / "served" / file), sorted_lines(dir / "csv" / file)) << file;
    EXPECT_EQ(ctl("export job-1.db:9 --csv " + (dir / "served9").string()).status, 3) << "no run 9 on the server";

    EXPECT_EQ(ctl("export " + store.string() + " --csv " + (dir / "csv2").string() + " --run 7").status, 2);
    EXPECT_NE(last_error().find("has no run 7 (its runs: 1)"), std::string::npos) << last_error();
    EXPECT_EQ(ctl("export /nonexistent.db --csv " + (dir / "csv3").string()).status, 2);
}

// wss:// with the console's --ca-file: trusted, it connects; untrusted, it is unreachable (4)
// and says how to trust the certificate.
TEST(FulcrumctlTls, ConnectsOverTlsWithTheCaFileAndRefusesAnUntrustedCertificate)
{
    const fs::path dir = fs::temp_directory_path() / ("fulcrum-ctl-tls-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path tls = fs::path(FULCRUM_SOURCE_DIR) / "tests" / "daemon" / "tls";
    const pid_t daemon = testing_support::spawn_logged(
        { FULCRUM_DAEMON_BINARY, "--data-dir", (dir / "data").string(), "--listen", "127.0.0.1:0", "--no-demo",
            "--tls-cert", (tls / "server.crt").string(), "--tls-key", (tls / "server.key").string() },
        dir / "fulcrumd.log");
    const unsigned short port = testing_support::announced_port(dir / "fulcrumd.log");
    const auto run = [&](const std::string& extra) {
        const std::string command = std::string(FULCRUMCTL_BINARY) + " --server wss://localhost:" + std::to_string(port)
            + " --token-file " + (dir / "data" / "tokens").string() + " " + extra + " jobs >/dev/null 2>>"
            + (dir / "err").string();
        const int raw = std::system(command.c_str());
        return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    };
    EXPECT_EQ(run("--ca-file " + (tls / "server.crt").string()), 0);
    EXPECT_EQ(run(""), 4) << "a self-signed certificate the system does not trust";
    std::ifstream err(dir / "err");
    std::stringstream text;
    text << err.rdbuf();
    EXPECT_NE(text.str().find("--ca-file"), std::string::npos) << text.str();
    ::kill(daemon, SIGTERM);
    ::waitpid(daemon, nullptr, 0);
    fs::remove_all(dir);
}

TEST(RunExport, CsvCellsAreQuotedOnlyWhenTheyMustBe)
{
    EXPECT_EQ(ctl::csv_cell("pin"), "pin");
    EXPECT_EQ(ctl::csv_cell("pinned 3, by alice"), "\"pinned 3, by alice\"");
    EXPECT_EQ(ctl::csv_cell("say \"hi\""), "\"say \"\"hi\"\"\"");
    EXPECT_EQ(ctl::csv_cell("two\nlines"), "\"two\nlines\"");
}

// fulcrumctl watch shows a stalled worker's state as the console does: since when its batch
// runs on the job's run clock, and the time it was predicted to take.
TEST(WatchTable, AStalledWorkerShowsSinceWhenAndItsPrediction)
{
    ctl::WatchTable table(4);
    protocol::WorkerState w;
    w.worker = 2;
    w.name = "slow";
    w.stalled_since = 12.34;
    w.predicted_s = 0.0412;
    EXPECT_TRUE(table.apply(protocol::WorkerUpdate { 4, { w } }));
    EXPECT_NE(table.render().find("stalled since 12.3 s, predicted 0.0412 s"), std::string::npos) << table.render();
    w.stalled_since.reset();
    table.apply(protocol::WorkerUpdate { 4, { w } });
    EXPECT_EQ(table.render().find("stalled"), std::string::npos) << table.render();
}

// `fulcrumctl watch` redraws at most twice a second and only when its table changed (issue
// 44 item 7: it redrew 1,036 times in 40 s); a change the rate holds back is drawn when its
// turn comes, and the job's end at once. The test's clock is its own.
TEST(RedrawPacer, DrawsAChangeAtMostEveryIntervalAndOnlyWhenTheTextChanged)
{
    using namespace std::chrono_literals;
    ctl::RedrawPacer pacer(500ms);
    const ctl::RedrawPacer::Clock::time_point t0 {};
    EXPECT_TRUE(pacer.offer(t0, "iteration 1"));
    EXPECT_FALSE(pacer.next_due());
    EXPECT_FALSE(pacer.offer(t0 + 100ms, "iteration 1")) << "unchanged";
    EXPECT_FALSE(pacer.offer(t0 + 200ms, "iteration 2")) << "changed within the interval: held back";
    ASSERT_TRUE(pacer.next_due());
    EXPECT_EQ(*pacer.next_due(), t0 + 500ms);
    EXPECT_FALSE(pacer.offer(t0 + 300ms, "iteration 3"));
    EXPECT_TRUE(pacer.offer(t0 + 500ms, "iteration 3")) << "its turn: the newest text";
    EXPECT_FALSE(pacer.next_due());
    EXPECT_FALSE(pacer.offer(t0 + 600ms, "iteration 4"));
    EXPECT_FALSE(pacer.offer(t0 + 700ms, "iteration 3")) << "changed back to what is on the screen";
    EXPECT_FALSE(pacer.next_due());
    EXPECT_TRUE(pacer.offer(t0 + 800ms, "finished", true)) << "the job's end is drawn at once";

    int drawn = 0; // 10 changes a second for 40 s: 2 a second are drawn
    ctl::RedrawPacer busy(500ms);
    for (int i = 0; i < 400; ++i)
        drawn += busy.offer(t0 + i * 100ms, "iteration " + std::to_string(i)) ? 1 : 0;
    EXPECT_EQ(drawn, 80);
}
