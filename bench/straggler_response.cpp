// How fast fulcrumd answers a frozen remote worker (issue 42): a real-mode BSP job of one
// local and two remote fulcrum-worker processes on loopback; at iteration N one remote
// worker gets SIGSTOP. Measured, R times each:
//   - no operator: the seconds from SIGSTOP until the job records an iteration again (the
//     worker is lost once it has been silent for the worker timeout);
//   - with an operator's exclusion sent 1 s after SIGSTOP: the seconds from the command
//     until the job records an iteration again;
//   - no operator, the job's "on_stall": {"action": "exclude"} (stalls past 5 x the
//     prediction, at least 2 s): the seconds from SIGSTOP to the worker-stalled event, and
//     to the job's next iteration.
// Each case runs on a fresh job; the frozen worker is killed after its case.
//
//   build/release/bench/straggler_response [--timeout S] [--repeat R] [--at N]

#include "daemon/auth.h"
#include "daemon/daemon.h"
#include "daemon/ws_server.h"
#include "served.h"
#include "ws_client.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <variant>
#include <vector>

extern char** environ;

using namespace fulcrum;
using namespace fulcrum::protocol;
using Clock = std::chrono::steady_clock;
using testing_support::Served;
using testing_support::WsClient;

namespace {

struct Options {
    double timeout_s = 10;
    int repeat = 3;
    std::int64_t at = 30;
};

enum class Response : std::uint8_t { None, Operator, OnStall };

std::string job_json(double timeout_s, Response response)
{
    const std::string on_stall = response == Response::OnStall ? R"("on_stall": {"action": "exclude"}, )" : "";
    return R"({"name": "straggler-response", "seed": 3, "mode": "real", )" + on_stall + R"("worker_timeout_s": )"
        + std::to_string(timeout_s) + R"(,
      "data": {"source": "synthetic", "train_size": 3000, "test_size": 300, "dim": 40, "classes": 4},
      "model": {"type": "mlp", "hidden": [64]},
      "training": {"total_batch": 300, "learning_rate": 0.1, "iterations": 100000000, "eval_interval": 100000000},
      "policy": {"type": "uniform"},
      "workers": [{"name": "local", "speed": 1000}, {"name": "remote", "count": 2, "speed": 1000, "remote": true}]})";
}

pid_t spawn_worker(unsigned short port, JobId job, int slot, const std::string& token)
{
    std::vector<std::string> args { FULCRUM_WORKER_BINARY, "--server", "127.0.0.1:" + std::to_string(port), "--job",
        std::to_string(job), "--worker", std::to_string(slot), "--token", token, "--name",
        "bench-" + std::to_string(slot) };
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t quiet;
    posix_spawn_file_actions_init(&quiet);
    posix_spawn_file_actions_addopen(&quiet, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    if (::posix_spawn(&pid, FULCRUM_WORKER_BINARY, &quiet, nullptr, argv.data(), environ) != 0) {
        std::perror("straggler_response: fulcrum-worker");
        std::exit(1);
    }
    posix_spawn_file_actions_destroy(&quiet);
    return pid;
}

void end(pid_t pid)
{
    ::kill(pid, SIGCONT);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
}

struct Timing {
    double moved_s = 0; // from SIGSTOP (or the operator's command) to the job's next iteration
    double stalled_s = -1; // from SIGSTOP to the worker-stalled event (OnStall)
};

// One case on a fresh job.
Timing frozen_case(Served& served, WsClient& op, const Options& o, Response response, int round)
{
    const bool exclude = response == Response::Operator;
    const std::string id = std::string(response == Response::None ? "n" : exclude ? "x" : "p") + std::to_string(round);
    const Reply submitted = op.request(SubmitJob { "s" + id, job_json(o.timeout_s, response) }, "s" + id);
    if (submitted.error) {
        std::fprintf(stderr, "straggler_response: %s\n", submitted.error->message.c_str());
        std::exit(1);
    }
    const JobId job = *submitted.job;
    const std::string token = *served.tokens.token_for(Role::Worker);
    const pid_t frozen = spawn_worker(served.server.port(), job, 1, token);
    const pid_t other = spawn_worker(served.server.port(), job, 2, token);
    op.request(Subscribe { "sub" + id, { Stream::Iterations, Stream::Events }, job, {} }, "sub" + id);
    const auto of_job = [job](const IterationRows& r) { return r.job == job; };
    std::int64_t last = op.receive_until<IterationRows>([&](const IterationRows& r) {
                              return of_job(r) && r.rows.size() == 3 && r.iteration >= o.at;
                          }).iteration;
    ::kill(frozen, SIGSTOP);
    const Clock::time_point stopped = Clock::now();
    Clock::time_point from = stopped;
    if (exclude) {
        std::this_thread::sleep_for(std::chrono::seconds(1));
        WorkerCommand command;
        command.id = "ex" + id;
        command.action = WorkerAction::Exclude;
        command.job = job;
        command.worker = 1;
        from = Clock::now();
        op.send(ClientMessage { command });
    }
    Timing t;
    const auto since = [](Clock::time_point at) { return std::chrono::duration<double>(Clock::now() - at).count(); };
    for (;;) {
        const ServerMessage m = op.receive();
        if (const auto* e = std::get_if<Event>(&m); e && e->event.job == job && e->event.kind == "worker-stalled")
            t.stalled_s = since(stopped);
        const auto* r = std::get_if<IterationRows>(&m);
        if (!r || !of_job(*r))
            continue;
        if (r->iteration > last
            && std::none_of(r->rows.begin(), r->rows.end(), [](const IterationRecord& x) { return x.worker == 1; }))
            break; // an iteration without the frozen worker: the job moves again
        last = std::max(last, r->iteration);
    }
    t.moved_s = since(from);
    op.request(Unsubscribe { "sub" + id }, "sub" + id); // the reply names the subscription
    op.request(JobCommand { "c" + id, JobAction::Cancel, job }, "c" + id);
    end(frozen);
    end(other);
    return t;
}

void report(const char* what, std::vector<double> seconds, double target)
{
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[seconds.size() / 2];
    std::printf("%-58s median %6.2f s  max %6.2f s  (target < %.1f s)\n", what, median, seconds.back(), target);
}

} // namespace

int main(int argc, char** argv)
{
    Options o;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        const char* value = argv[i + 1];
        if (flag == "--timeout")
            o.timeout_s = std::atof(value);
        else if (flag == "--repeat")
            o.repeat = std::max(1, std::atoi(value));
        else if (flag == "--at")
            o.at = std::max(1, std::atoi(value));
        else {
            std::fprintf(stderr, "usage: straggler_response [--timeout S] [--repeat R] [--at N]\n");
            return 2;
        }
    }
    if (!(o.timeout_s >= 2)) {
        std::fprintf(stderr, "straggler_response: --timeout: expected seconds >= 2\n");
        return 2;
    }
    const auto dir = std::filesystem::temp_directory_path() / ("fulcrum-straggler-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    {
        daemon::DaemonOptions options;
        options.data_dir = dir;
        options.cluster.servers = 1;
        options.cluster.gpus_per_server = 4;
        Served served(options, dir / "tokens");
        WsClient op(served.server.port(), *served.tokens.token_for(Role::Operator));
        op.send(Hello { kProtocolVersion, "straggler_response" });
        op.receive_until<Welcome>();
        std::vector<double> silent, excluded, stalled, released;
        for (int r = 0; r < o.repeat; ++r) {
            silent.push_back(frozen_case(served, op, o, Response::None, r).moved_s);
            excluded.push_back(frozen_case(served, op, o, Response::Operator, r).moved_s);
            const Timing on_stall = frozen_case(served, op, o, Response::OnStall, r);
            stalled.push_back(on_stall.stalled_s);
            released.push_back(on_stall.moved_s);
        }
        std::printf("frozen remote worker (SIGSTOP at iteration %lld), worker timeout %.1f s, %d runs each\n",
            static_cast<long long>(o.at), o.timeout_s, o.repeat);
        report("no operator: SIGSTOP to the next iteration", silent, o.timeout_s + 1);
        report("operator's exclusion: command to the next iteration", excluded, 1);
        // Its batches are predicted at well under 0.4 s here, so the stall limit is the 2 s floor.
        report("on_stall exclude: SIGSTOP to worker-stalled", stalled, 2 + 1);
        report("on_stall exclude: SIGSTOP to the next iteration", released, 2 + 1);
        served.server.stop();
        served.server.wait();
        served.daemon.stop_all();
    }
    std::filesystem::remove_all(dir);
    return 0;
}
