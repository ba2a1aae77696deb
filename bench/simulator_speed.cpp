// How fast the multi-job cluster simulator runs: the paper's 160-job workload on 64 GPUs
// under every placement and communication scheduler, and (with --large) 10,000 jobs on
// 1,024 GPUs. Baseline in the same run: a bare binary-heap push/pop of as many events,
// the floor any event-driven simulator of this workload pays.
//
//   build/release/bench/simulator_speed [--large]

#include "sched/simulator.h"
#include "sched/workload.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <queue>

using namespace fulcrum::sched;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

double heap_floor_s(std::int64_t events)
{
    // One push and one pop per event on a heap of ~a hundred pending events, keyed like the
    // simulator's (time, sequence).
    std::priority_queue<std::pair<double, std::int64_t>, std::vector<std::pair<double, std::int64_t>>, std::greater<>>
        heap;
    double t = 0;
    for (int i = 0; i < 128; ++i)
        heap.push({ t + i * 1e-3, i });
    const auto start = Clock::now();
    for (std::int64_t i = 0; i < events; ++i) {
        const auto top = heap.top();
        heap.pop();
        t = top.first;
        heap.push({ t + 0.05 + static_cast<double>(i % 97) * 1e-4, i });
    }
    const double s = seconds_since(start);
    std::printf("  (heap checksum %.3g)\n", t);
    return s;
}

void run(const char* title, const ClusterSpec& cluster, const WorkloadGenerator& g, const char* placement,
    const char* comm, double target_s)
{
    SimulationOptions options;
    options.placement = placement;
    options.comm = comm;
    const auto start = Clock::now();
    const SimulationResult r = simulate(cluster, generate_workload(g), options);
    const double s = seconds_since(start);
    const double floor = heap_floor_s(r.tasks);
    std::printf(
        "%-28s %-7s %-9s %6d jobs %5d GPUs %11lld tasks %8.3f s  %6.1f ns/task  %.1fx heap floor  avg JCT %.1f s%s\n",
        title, placement, comm, g.jobs, cluster.gpus(), static_cast<long long>(r.tasks), s,
        1e9 * s / static_cast<double>(r.tasks), s / floor, r.average_jct_s(),
        target_s > 0 ? (s < target_s ? "  target met" : "  TARGET MISSED") : "");
}

} // namespace

int main(int argc, char** argv)
{
    const bool large = argc > 1 && !std::strcmp(argv[1], "--large");
    const ClusterSpec paper;
    const WorkloadGenerator g160;
    for (const char* placement : { "rand", "ff", "ls", "lwf-1" })
        run("microsoft-160 (< 1 s)", paper, g160, placement, "ada-srsf", 1.0);
    for (const char* comm : { "srsf-1", "srsf-2", "srsf-3" })
        run("microsoft-160 (< 1 s)", paper, g160, "lwf-1", comm, 1.0);
    if (large) {
        ClusterSpec big;
        big.servers = 256;
        WorkloadGenerator g;
        g.jobs = 10000;
        g.horizon_s = 20.0 * 60.0 * g.jobs / 160.0;
        run("microsoft-10000 (< 60 s)", big, g, "lwf-1", "ada-srsf", 60.0);
    }
    return 0;
}
