// How fast fulcrumd answers a straggler (issue 42), on loopback, R times each case.
//
// A frozen remote worker: a real-mode BSP job of one local and two remote fulcrum-worker
// processes; at iteration N one remote worker gets SIGSTOP. Measured:
//   - no operator: the seconds from SIGSTOP until the job records an iteration again (the
//     worker is lost once it has been silent for the worker timeout);
//   - with an operator's exclusion sent 1 s after SIGSTOP: the seconds from the command
//     until the job records an iteration again;
//   - no operator, the job's "on_stall": {"action": "exclude"} (stalls past 5 x the
//     prediction, at least 2 s): the seconds from SIGSTOP to the worker-stalled event, and
//     to the job's next iteration.
// Each case runs on a fresh job; the frozen worker is killed after its case.
//
// A slowed worker (slowdown_case.h): two remote workers, each pinned to its own core; at
// iteration M a process takes 90 % of one worker's core. Under LB-BSP (lbbsp-cpu with the
// predictor given) and under uniform BSP: the iterations and seconds until the time per
// iteration is within 10 % of its new steady value.
//
//   build/release/bench/straggler_response [--case frozen|slowdown|all] [--timeout S]
//       [--repeat R] [--at N] [--slowdown-at M] [--window W] [--predictor ema|memoryless|...]
//       [--series]   (every iteration's time in the slowdown case)

#include "access/auth.h"
#include "daemon/daemon.h"
#include "served.h"
#include "server/ws_server.h"
#include "slowdown_case.h"
#include "worker_processes.h"
#include "ws_client.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <unistd.h>
#include <variant>
#include <vector>

using namespace fulcrum;
using namespace fulcrum::protocol;
using Clock = std::chrono::steady_clock;
using testing_support::Served;
using testing_support::WsClient;

namespace {

struct Options {
    std::string which = "all";
    double timeout_s = 10;
    int repeat = 3;
    std::int64_t at = 30;
    std::int64_t slowdown_at = 30;
    int window = 60;
    std::string predictor = "ema";
    bool series = false;
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
    const pid_t frozen = bench::spawn_worker(served.server.port(), job, 1, token);
    const pid_t other = bench::spawn_worker(served.server.port(), job, 2, token);
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
    bench::end_process(frozen);
    bench::end_process(other);
    return t;
}

void report(const char* what, std::vector<double> seconds, double target)
{
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[seconds.size() / 2];
    std::printf("%-58s median %6.2f s  max %6.2f s  (target < %.1f s)\n", what, median, seconds.back(), target);
}

void report_slowdown(const char* policy, const std::vector<bench::SlowdownResult>& runs)
{
    for (const auto& r : runs) {
        const std::string settled = r.settle_iterations < 0
            ? std::string("never within 10 % of it")
            : std::to_string(r.settle_iterations) + " iterations, " + std::to_string(r.settle_s).substr(0, 5) + " s";
        std::printf("%-10s per iteration %.3f s before, %.3f s after (x%.2f), steady after %s; loaded worker's "
                    "share %.2f -> %.2f, after %d iterations\n",
            policy, r.before_s, r.after_s, r.after_s / r.before_s, settled.c_str(), r.loaded_share_before,
            r.loaded_share_after, r.share_settle_iterations);
    }
}

int usage()
{
    std::fprintf(stderr,
        "usage: straggler_response [--case frozen|slowdown|all] [--timeout S] [--repeat R] [--at N]\n"
        "                          [--slowdown-at M] [--window W] [--predictor ema|memoryless|arima|narx]\n"
        "                          [--series]\n");
    return 2;
}

} // namespace

int main(int argc, char** argv)
{
    Options o;
    std::vector<std::string> args(argv + 1, argv + argc);
    if (const auto series = std::find(args.begin(), args.end(), "--series"); series != args.end()) {
        o.series = true;
        args.erase(series);
    }
    for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
        const std::string& flag = args[i];
        const char* value = args[i + 1].c_str();
        if (flag == "--case")
            o.which = value;
        else if (flag == "--timeout")
            o.timeout_s = std::atof(value);
        else if (flag == "--repeat")
            o.repeat = std::max(1, std::atoi(value));
        else if (flag == "--at")
            o.at = std::max(1, std::atoi(value));
        else if (flag == "--slowdown-at")
            o.slowdown_at = std::max(11, std::atoi(value));
        else if (flag == "--window")
            o.window = std::max(15, std::atoi(value));
        else if (flag == "--predictor")
            o.predictor = value;
        else
            return usage();
    }
    if (args.size() % 2 == 1 || (o.which != "frozen" && o.which != "slowdown" && o.which != "all"))
        return usage();
    if (!(o.timeout_s >= 2)) {
        std::fprintf(stderr, "straggler_response: --timeout: expected seconds >= 2\n");
        return 2;
    }
    const bool frozen = o.which != "slowdown";
    const bool slowdown = o.which != "frozen";
    if (slowdown && bench::allowed_cores().size() < 2) {
        std::fprintf(stderr,
            "straggler_response: the slowdown case pins its two workers to two cores of its own; "
            "this process may run on fewer\n");
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
        if (frozen) {
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
        }
        if (slowdown) {
            bench::SlowdownOptions lbbsp;
            lbbsp.policy_json = R"({"type": "lbbsp-cpu", "predictor": {"type": ")" + o.predictor + R"("}})";
            lbbsp.at = o.slowdown_at;
            lbbsp.window = o.window;
            lbbsp.series = o.series;
            bench::SlowdownOptions uniform = lbbsp;
            uniform.policy_json = R"({"type": "uniform"})";
            std::vector<bench::SlowdownResult> balanced, even;
            for (int r = 0; r < o.repeat; ++r) {
                balanced.push_back(bench::slowdown_case(served, op, lbbsp, "l" + std::to_string(r)));
                even.push_back(bench::slowdown_case(served, op, uniform, "u" + std::to_string(r)));
            }
            std::printf("90 %% load on worker 0's core from iteration %lld, %d iterations watched (lbbsp-cpu with "
                        "the %s predictor)\n",
                static_cast<long long>(o.slowdown_at), o.window, o.predictor.c_str());
            report_slowdown("lbbsp-cpu", balanced);
            report_slowdown("uniform", even);
        }
        served.server.stop();
        served.server.wait();
        served.daemon.stop_all();
    }
    std::filesystem::remove_all(dir);
    return 0;
}
