// How long fulcrumd's scheduling decisions take on a cluster of 1,000 GPUs holding 100 live
// jobs: placing a newcomer (each placement policy), a growth step's GPU (ClusterBook::add_gpu),
// and the Elastic PS rules deciding a release for a newcomer over 100 holders and a growth
// round's order, and the communication scheduler starting (or holding) a transfer beside the
// 100 jobs' transfers on the links (LinkSchedule::try_start, srsf-1 and ada-srsf). Prints medians and the ratio to one
// scan of the cluster's GPUs (ClusterBook::room_for) measured in the same run. Target (issue 21): < 1 ms a decision.
//
//   build/release/bench/scheduling_decisions [--gpus N] [--jobs N] [--repeats N]
//
// Not included: ElasticScheduling's reads of each job's status (a lock and a copy per job)
// and the trainer's own resize, which happen on the job's thread at its next barrier.

#include "common/random.h"
#include "daemon/cluster_book.h"
#include "daemon/link_schedule.h"
#include "sched/eps_rules.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>

using namespace fulcrum;
using Clock = std::chrono::steady_clock;

namespace {

double median_us(int repeats, const std::function<void()>& decide, const std::function<void()>& undo = {})
{
    std::vector<double> us;
    us.reserve(static_cast<std::size_t>(repeats));
    for (int k = 0; k < repeats; ++k) {
        const auto start = Clock::now();
        decide();
        us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
        if (undo)
            undo();
    }
    std::nth_element(us.begin(), us.begin() + static_cast<std::ptrdiff_t>(us.size() / 2), us.end());
    return us[us.size() / 2];
}

} // namespace

int main(int argc, char** argv)
{
    int gpus = 1000, jobs = 100, repeats = 2000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--gpus"))
            gpus = std::stoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--jobs"))
            jobs = std::stoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--repeats"))
            repeats = std::stoi(argv[i + 1]);
    }
    sched::ClusterSpec cluster;
    cluster.gpus_per_server = 4;
    cluster.servers = (gpus + 3) / 4;
    cluster.gpu_memory_gb = 16;
    Rng rng(7);
    std::map<JobId, double> left;
    const daemon::RemainingWork remaining = [&](JobId j) { return left.count(j) ? left[j] : 0.0; };
    // 100 jobs of 1 to 8 whole-GPU workers (about 450 GPUs), so a newcomer of 4 fits.
    const auto fill = [&](daemon::ClusterBook& book) {
        for (JobId j = 1; j <= static_cast<JobId>(jobs); ++j) {
            left[j] = 10 + 1000 * uniform01(rng);
            book.place(j, { 1 + static_cast<int>(uniform01(rng) * 8), 16 }, remaining);
        }
    };
    const JobId newcomer = static_cast<JobId>(jobs) + 1;

    std::printf("scheduling decisions on %d GPUs with %d live jobs (median of %d)\n", cluster.gpus(), jobs, repeats);
    daemon::ClusterBook scanned(cluster, "lwf-1");
    fill(scanned);
    int sink = 0;
    const double scan_us = median_us(repeats, [&] { sink += scanned.room_for({ 1, 16 }); });
    std::printf("  %-44s %9.2f us   1x (baseline)\n", "scan of the cluster's GPUs (room_for)", scan_us);

    for (const char* policy : { "rand", "ff", "ls", "lwf-1", "lwf-4" }) {
        daemon::ClusterBook book(cluster, policy);
        fill(book);
        const double us = median_us(
            repeats,
            [&] {
                sink += static_cast<int>(book.place(newcomer, { 4, 16 }, remaining).size());
            },
            [&] { book.release(newcomer); });
        std::printf(
            "  %-44s %9.2f us %5.1fx\n", ("place a 4-GPU newcomer, " + std::string(policy)).c_str(), us, us / scan_us);
    }
    daemon::ClusterBook grown(cluster, "lwf-1");
    fill(grown);
    std::optional<int> added;
    const double grow_us = median_us(
        repeats, [&] { added = grown.add_gpu(1, remaining); },
        [&] {
            if (added)
                grown.remove_gpu(1, *added);
        });
    std::printf("  %-44s %9.2f us %5.1fx\n", "a growth step's GPU (add_gpu)", grow_us, grow_us / scan_us);

    std::vector<sched::EpsHolder> holders(static_cast<std::size_t>(jobs));
    for (auto& h : holders) {
        const int request = 1 + static_cast<int>(uniform01(rng) * 8);
        h.held = { request + static_cast<int>(uniform01(rng) * 4), 0 };
        h.request = { request, 0 };
        h.minimum = { 1, 0 };
        h.may_release = uniform01(rng) < 0.7;
    }
    const double release_us = median_us(repeats, [&] {
        const auto taken = sched::eps_release(holders, 2, 40);
        sink += taken.front().workers;
    });
    std::printf("  %-44s %9.2f us %5.1fx\n", "eps_release: 38 GPUs from 100 holders", release_us, release_us / scan_us);
    const double order_us = median_us(repeats, [&] { sink += static_cast<int>(sched::eps_growth_order(100, 7)[0]); });
    std::printf("  %-44s %9.2f us %5.1fx\n", "eps_growth_order over 100 jobs", order_us, order_us / scan_us);

    // One transfer in flight per live job, each over the servers its workers' GPUs are on;
    // the newcomer's 4 workers ask at an instant when all of them still run.
    for (const char* comm : { "srsf-1", "ada-srsf" }) {
        daemon::LinkSchedule links(cluster, comm);
        links.set_policy("none"); // every live job's transfer starts, whatever it meets
        for (JobId j = 1; j <= static_cast<JobId>(jobs); ++j) {
            std::vector<int> on;
            for (int w = 1 + static_cast<int>(uniform01(rng) * 8); w > 0; --w)
                on.push_back(static_cast<int>(uniform01(rng) * cluster.gpus()));
            links.try_start({ j, 1e8, on, std::vector<double>(on.size(), 1000.0) }, 0);
        }
        links.set_policy(comm);
        std::vector<int> on;
        for (int w = 0; w < 4; ++w)
            on.push_back(static_cast<int>(uniform01(rng) * cluster.gpus()));
        const daemon::LinkSchedule::Transfer asked { newcomer, 1e6, on, std::vector<double>(4, 1e-9) };
        double at = 1;
        // A transfer that starts ends 1e-9 s later (before the next ask), so every ask meets
        // the same 100 transfers.
        const double us = median_us(repeats, [&] {
            at += 1e-6;
            sink += links.try_start(asked, at).started ? 1 : 0;
        });
        std::printf("  %-44s %9.2f us %5.1fx\n", ("a transfer's start beside 100 jobs', " + std::string(comm)).c_str(),
            us, us / scan_us);
    }
    return sink == -1 ? 1 : 0; // keeps the work from being optimized away
}
