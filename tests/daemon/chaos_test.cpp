// Chaos: a real fulcrumd with three jobs (paced CPU under NARX, paced GPU under Algorithm 2,
// real mode with two remote fulcrum-worker processes) and viewer clients is killed with
// SIGKILL and started again several times, and remote workers are killed, at random
// moments. Afterwards every job has finished, every store passes PRAGMA integrity_check, no
// iteration is missing, and every row committed before a kill is still there, unchanged:
// in the run (a paced job records the same rows again after its checkpoint) or, for a
// real-mode job's rows past its checkpoint, among the run's superseded rows. Bounded: FULCRUM_CHAOS_ROUNDS (default 3)
// kills, each after at most 1.5 s, and 180 s for the jobs to finish.

#include "access/auth.h"
#include "db/run_reader.h"
#include "process_support.h"
#include "ws_client.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iostream>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <tuple>
#include <unistd.h>

using namespace fulcrum;
using namespace fulcrum::protocol;

namespace {

namespace fs = std::filesystem;

std::string job(const std::string& name, const std::string& mode_and_model, int iterations, const std::string& policy,
    const std::string& workers, int every)
{
    return R"({"name": ")" + name + R"(", "seed": 3, )" + mode_and_model + R"(,
      "data": {"source": "synthetic", "train_size": 1500, "test_size": 200, "dim": 16, "classes": 4},
      "training": {"total_batch": 64, "learning_rate": 0.05, "momentum": 0.9, "iterations": )"
        + std::to_string(iterations) + R"(, "eval_interval": 40},
      "policy": )"
        + policy + R"(, "checkpoint": {"every_iterations": )" + std::to_string(every) + R"(, "every_seconds": 0},
      "workers": )"
        + workers + "}";
}

struct Store {
    fs::path path;
    JobId job = 0; // fulcrumd's id, which its store's rows carry
    bool deterministic = true; // paced: a row recorded again is the same row
};

using Key = std::tuple<RunId, std::int64_t, WorkerId>; // a job started again from the beginning records a new run

class Chaos : public ::testing::Test {
protected:
    fs::path dir = fs::temp_directory_path() / ("fulcrum-chaos-" + std::to_string(::getpid()));
    fs::path data = dir / "data";
    std::mt19937 draw { std::random_device {}() };
    std::vector<pid_t> workers;
    int started = 0;

    void SetUp() override { fs::create_directories(dir); }
    void TearDown() override
    {
        for (pid_t w : workers)
            ::kill(w, SIGKILL);
        for (pid_t w : workers)
            ::waitpid(w, nullptr, 0);
        if (HasFailure())
            std::cerr << "chaos: the daemons' and workers' logs and the stores are kept in " << dir << "\n";
        else
            fs::remove_all(dir);
    }

    pid_t spawn(std::vector<std::string> args, const fs::path& log)
    {
        return testing_support::spawn_logged(std::move(args), log);
    }

    // fulcrumd on a free port; returns its pid and the port it announced.
    std::pair<pid_t, unsigned short> start_daemon(const std::vector<std::string>& scenarios)
    {
        const fs::path log = dir / ("fulcrumd-" + std::to_string(++started) + ".log");
        // Servers of three GPUs. Jobs that share a server's link or a GPU stretch each other's
        // modelled times from the moment they meet (docs/protocol.md), and which jobs run
        // beside which around a crash depends on when each one ended: a recovered job follows
        // the sharing its store recorded until it has recorded its rows again.
        std::ofstream(dir / "cluster.json") << R"({"servers": 8, "gpus_per_server": 3, "gpu_memory_gb": 16})";
        std::vector<std::string> args { FULCRUM_DAEMON_BINARY, "--data-dir", data.string(), "--listen", "127.0.0.1:0",
            "--no-demo", "--cluster", (dir / "cluster.json").string() };
        for (const auto& s : scenarios)
            args.insert(args.end(), { "--scenario", s });
        const pid_t pid = spawn(args, log);
        return { pid, testing_support::announced_port(log) };
    }

    std::string token(Role role)
    {
        return access::TokenStore::load_or_create(data / "tokens").token_for(role).value_or("");
    }

    void start_workers(unsigned short port)
    {
        for (int slot : { 2, 3 })
            workers.push_back(spawn(
                { FULCRUM_WORKER_BINARY, "--server", "127.0.0.1:" + std::to_string(port), "--job", "3", "--worker",
                    std::to_string(slot), "--token", token(Role::Worker), "--name", "chaos-" + std::to_string(slot) },
                dir / "workers.log"));
    }

    void reap_workers()
    {
        for (pid_t w : workers) {
            ::kill(w, SIGKILL);
            ::waitpid(w, nullptr, 0);
        }
        workers.clear();
    }

    // Viewers that follow every stream until the daemon goes away.
    std::vector<std::thread> start_clients(unsigned short port)
    {
        std::vector<std::thread> clients;
        for (int c = 0; c < 2; ++c)
            clients.emplace_back([port, t = token(Role::Viewer)] {
                try {
                    testing_support::WsClient client(port, t);
                    client.send(ClientMessage { Hello { kProtocolVersion, "chaos viewer" } });
                    client.send_text(R"({"type": "subscribe", "id": "all"})");
                    for (;;)
                        client.receive();
                } catch (const std::exception&) {
                    // the daemon was killed: this viewer's session ends, as a console's would
                }
            });
        return clients;
    }

    // What a kill must not take away: every committed row up to the job's checkpoint (all
    // committed rows of a deterministic job).
    void remember(const Store& store, std::map<Key, IterationRecord>& kept)
    {
        if (!fs::exists(store.path))
            return;
        db::RunReader reader(store.path);
        for (const db::RunInfo& run : reader.runs())
            for (const IterationRecord& r : reader.iterations(run.id, store.job))
                kept[{ run.id, r.iteration, r.worker }] = r;
    }

    // The job's newest run: the one that goes on to the end.
    static RunId last_run(db::RunReader& reader)
    {
        const auto runs = reader.runs();
        return runs.empty() ? 0 : runs.back().id;
    }
};

} // namespace

TEST_F(Chaos, KilledAndRestartedFulcrumdAndKilledWorkersLoseNoCommittedIterationAndEveryJobFinishes)
{
    const char* rounds_text = std::getenv("FULCRUM_CHAOS_ROUNDS");
    const int rounds = rounds_text ? std::max(1, std::atoi(rounds_text)) : 3;
    std::ofstream(dir / "cpu.json") << job("chaos-cpu",
        R"("mode": "paced", "pace": 0.5, "model": {"type": "mlp", "hidden": [24]})", 300,
        R"({"type": "lbbsp-cpu", "predictor": {"type": "narx", "min_samples": 30, "retrain_every": 40, "max_epochs": 30, "hidden": 6}})",
        R"([{"speed": 3000, "count": 2, "noise": {"sigma": 0.05}}, {"speed": 1000, "noise": {"sigma": 0.05}}])", 5);
    std::ofstream(dir / "gpu.json") << job("chaos-gpu", R"("mode": "paced", "pace": 4, "model": {"type": "softmax"})",
        300, R"({"type": "lbbsp-gpu"})", R"([{"gpu": "v100"}, {"gpu": "k80"}, {"gpu": "k520"}])", 5);
    std::ofstream(dir / "real.json") << job("chaos-real",
        R"("mode": "real", "model": {"type": "mlp", "hidden": [64, 64]})", 400,
        R"({"type": "lbbsp-cpu", "predictor": {"type": "ema"}})",
        R"([{"name": "local", "count": 2, "speed": 1000}, {"name": "remote", "count": 2, "speed": 1000, "remote": true}])",
        10);
    // ssp: checkpoints between two updates, with the batches under way.
    std::ofstream(dir / "ssp.json") << job("chaos-ssp",
        R"("mode": "paced", "pace": 0.5, "sync": {"type": "ssp", "staleness": 3}, "model": {"type": "mlp", "hidden": [24]})",
        1200, R"({"type": "uniform"})",
        R"([{"speed": 3000, "count": 2, "noise": {"sigma": 0.05}}, {"speed": 1000, "noise": {"sigma": 0.05}}])", 20);
    const std::vector<Store> stores { { data / "runs" / "job-1.db", 1, true }, { data / "runs" / "job-2.db", 2, true },
        { data / "runs" / "job-3.db", 3, false }, { data / "runs" / "job-4.db", 4, true } };
    std::vector<std::map<Key, IterationRecord>> kept(stores.size());

    for (int round = 0; round <= rounds; ++round) {
        auto [daemon, port]
            = start_daemon(round == 0 ? std::vector<std::string> { (dir / "cpu.json").string(),
                               (dir / "gpu.json").string(), (dir / "real.json").string(), (dir / "ssp.json").string() }
                                      : std::vector<std::string> {});
        ASSERT_NE(port, 0);
        start_workers(port);
        std::vector<std::thread> clients = start_clients(port);
        if (round < rounds) {
            std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(400, 1500)(draw)));
            if (std::uniform_int_distribution<int>(0, 1)(draw) == 1) { // a remote worker dies too
                ::kill(workers[static_cast<std::size_t>(std::uniform_int_distribution<int>(0, 1)(draw))], SIGKILL);
                std::this_thread::sleep_for(
                    std::chrono::milliseconds(std::uniform_int_distribution<int>(50, 400)(draw)));
            }
            ::kill(daemon, SIGKILL);
            ::waitpid(daemon, nullptr, 0);
            for (std::size_t s = 0; s < stores.size(); ++s)
                remember(stores[s], kept[s]);
        } else {
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(180);
            const auto all_finished = [&] {
                for (const Store& s : stores) {
                    try {
                        db::RunReader reader(s.path);
                        if (reader.run(last_run(reader)).status != "finished")
                            return false;
                    } catch (const std::exception&) {
                        return false;
                    }
                }
                return true;
            };
            while (!all_finished() && std::chrono::steady_clock::now() < deadline)
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            ::kill(daemon, SIGTERM);
            ::waitpid(daemon, nullptr, 0);
            EXPECT_TRUE(all_finished()) << "not every job finished within 180 s of the last restart";
        }
        reap_workers();
        for (auto& c : clients)
            c.join();
    }

    // ssp's 1200 updates over 3 workers held within 3 iterations of each other: every
    // iteration to about 400 has its rows.
    const std::vector<std::int64_t> planned { 300, 300, 400, 380 };
    for (std::size_t s = 0; s < stores.size(); ++s) {
        SCOPED_TRACE(stores[s].path.filename().string());
        db::RunReader reader(stores[s].path);
        EXPECT_EQ(reader.integrity_check(), "ok");
        const RunId last = last_run(reader);
        for (const db::RunInfo& run : reader.runs()) // earlier attempts were started again from the beginning
            EXPECT_EQ(run.status, run.id == last ? "finished" : "interrupted") << "run " << run.id;
        std::map<Key, IterationRecord> rows;
        std::vector<bool> seen(static_cast<std::size_t>(planned[s]), false);
        for (const db::RunInfo& run : reader.runs())
            for (const IterationRecord& r : reader.iterations(run.id, stores[s].job)) {
                rows[{ run.id, r.iteration, r.worker }] = r;
                if (run.id == last && r.iteration >= 0 && r.iteration < planned[s])
                    seen[static_cast<std::size_t>(r.iteration)] = true;
            }
        for (std::size_t k = 0; k < seen.size(); ++k)
            EXPECT_TRUE(seen[k]) << "iteration " << k << " has no row";
        std::multimap<Key, IterationRecord> superseded;
        for (const db::RunInfo& run : reader.runs())
            for (const IterationRecord& r : reader.superseded_iterations(run.id, stores[s].job))
                superseded.emplace(Key { run.id, r.iteration, r.worker }, r);
        if (stores[s].deterministic) {
            EXPECT_TRUE(std::all_of(superseded.begin(), superseded.end(), [&](const auto& entry) {
                const auto it = rows.find(entry.first);
                return it != rows.end() && it->second == entry.second;
            })) << "a paced job recorded an iteration differently after resuming";
        }
        for (const auto& [key, row] : kept[s]) {
            const auto& [run, iteration, worker] = key;
            const auto it = rows.find(key);
            const auto [from, to] = superseded.equal_range(key);
            const bool in_run = it != rows.end() && it->second == row;
            const bool set_aside = std::any_of(from, to, [&](const auto& entry) { return entry.second == row; });
            EXPECT_TRUE(in_run || set_aside) << "run " << run << ", iteration " << iteration << ", worker " << worker
                                             << " was committed and is gone";
        }
    }
}
