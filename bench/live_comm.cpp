// Live communication scheduling in fulcrumd: jobs of one worker each on the GPUs of one
// server, so that every push and pull crosses its one link, run in virtual mode under each
// communication scheduler (none, srsf-1, srsf-2, ada-srsf) in an in-process fulcrumd. Prints
// each policy's mean job completion time on the run clock, its ratio to none (eq. 5
// contention, measured in the same run), and how many transfers were held for the link.
//
//   build/release/bench/live_comm [--models MB,MB,...] [--iterations N] [--speed S]
//
// --models: each job's model size in MB (default 100,100,5,5: two large, two small);
// --iterations per job (default 300); --speed: samples a second of each worker (default
// 480: 0.1 s per batch of 48). The jobs are queued behind a job holding every GPU, so they
// start together on fulcrumd's one clock. Virtual time does not depend on the machine: the
// figures are the same on any machine.

#include "daemon/daemon.h"
#include "daemon/daemon_options.h"
#include "protocol/codec.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace fulcrum;

namespace {

std::string job(const std::string& name, double model_mb, int iterations, double speed)
{
    std::ostringstream s;
    s << R"({"name": ")" << name << R"(", "mode": "virtual", "seed": 5,
      "data": {"source": "synthetic", "train_size": 600, "test_size": 100, "dim": 8, "classes": 3},
      "model": {"type": "softmax"}, "policy": {"type": "uniform"},
      "training": {"total_batch": 48, "iterations": )"
      << iterations << R"(, "eval_interval": 100000, "comm_model_mb": )" << model_mb << R"(},
      "workers": [{"speed": )"
      << speed << R"(, "noise": {"sigma": 0}}]})";
    return s.str();
}

struct Outcome {
    double mean_jct = 0;
    std::int64_t held = 0, transfers = 0;
    double wait_s = 0;
    bool finished = true;
};

Outcome run(const std::string& comm, const std::vector<double>& models, int iterations, double speed,
    const std::filesystem::path& dir)
{
    daemon::DaemonOptions o;
    o.data_dir = dir / comm;
    o.cluster.servers = 1;
    o.cluster.gpus_per_server = static_cast<int>(models.size());
    o.placement = "ff";
    o.comm = comm;
    daemon::Daemon d(o);
    std::ostringstream blocker;
    blocker << R"({"name": "blocker", "mode": "paced", "pace": 2,
      "data": {"source": "synthetic", "train_size": 600, "test_size": 100, "dim": 8, "classes": 3},
      "model": {"type": "softmax"}, "training": {"total_batch": 48, "iterations": 1000000},
      "workers": [{"speed": 3000, "count": )"
            << models.size() << "}]}";
    const JobId held_gpus = d.submit(blocker.str(), "blocker");
    std::vector<JobId> ids;
    for (std::size_t j = 0; j < models.size(); ++j)
        ids.push_back(d.submit(job("job-" + std::to_string(j), models[j], iterations, speed), "bench"));
    auto op = d.connect(protocol::Role::Operator, "bench");
    d.receive(*op, protocol::encode(protocol::ClientMessage { protocol::Hello { protocol::kProtocolVersion, "b" } }));
    d.receive(*op,
        protocol::encode(
            protocol::ClientMessage { protocol::JobCommand { "c", protocol::JobAction::Cancel, held_gpus } }));
    Outcome out;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
    for (;;) {
        int done = 0;
        for (const protocol::JobStatus& s : d.jobs())
            done += std::find(ids.begin(), ids.end(), s.job) != ids.end() && s.state != protocol::JobState::Running
                && s.state != protocol::JobState::Queued;
        if (done == static_cast<int>(ids.size()) || std::chrono::steady_clock::now() > deadline)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    for (const protocol::JobStatus& s : d.jobs()) {
        if (std::find(ids.begin(), ids.end(), s.job) == ids.end())
            continue;
        out.finished = out.finished && s.state == protocol::JobState::Finished;
        out.mean_jct += s.time_s / static_cast<double>(ids.size());
        if (s.link) {
            out.held += s.link->held;
            out.transfers += s.link->transfers;
            out.wait_s += s.link->wait_s;
        }
    }
    d.stop_all();
    return out;
}

} // namespace

int main(int argc, char** argv)
{
    std::vector<double> models { 100, 100, 5, 5 };
    int iterations = 300;
    double speed = 480;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--models")) {
            models.clear();
            std::stringstream list(argv[i + 1]);
            for (std::string mb; std::getline(list, mb, ',');)
                models.push_back(std::stod(mb));
        } else if (!std::strcmp(argv[i], "--iterations")) {
            iterations = std::stoi(argv[i + 1]);
        } else if (!std::strcmp(argv[i], "--speed")) {
            speed = std::stod(argv[i + 1]);
        } else {
            std::fprintf(stderr, "live_comm: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (models.empty() || iterations < 1 || !(speed > 0)) {
        std::fprintf(stderr, "live_comm: expected --models MB,... --iterations N >= 1 --speed S > 0\n");
        return 2;
    }
    const auto dir = std::filesystem::temp_directory_path() / ("fulcrum-live-comm-" + std::to_string(::getpid()));
    std::printf("%zu one-worker virtual jobs on one server's link, %d iterations each, models (MB):", models.size(),
        iterations);
    for (double m : models)
        std::printf(" %g", m);
    std::printf("\n  %-10s %14s %10s %18s %12s\n", "comm", "mean JCT (s)", "vs none", "held / transfers", "wait (s)");
    double baseline = 0;
    int status = 0;
    for (const char* comm : { "none", "srsf-1", "srsf-2", "ada-srsf" }) {
        const Outcome o = run(comm, models, iterations, speed, dir);
        if (baseline == 0)
            baseline = o.mean_jct;
        std::printf("  %-10s %14.2f %9.3fx %8lld / %-8lld %12.2f%s\n", comm, o.mean_jct, o.mean_jct / baseline,
            static_cast<long long>(o.held), static_cast<long long>(o.transfers), o.wait_s,
            o.finished ? "" : "  (a job did not finish)");
        status |= o.finished ? 0 : 1;
    }
    std::filesystem::remove_all(dir);
    return status;
}
