// How long the Elastic PS mechanisms take in the live trainer's process: adding and
// removing a server shard (moving key ranges with their optimizer state) for a ResNet-50
// sized model, and adding and removing a worker (EPS data chunks, the members' new index
// lists) for Fashion-MNIST's 60,000 training samples. Baseline in the same run: copying the
// bytes that moved (servers) and writing every member's index list afresh (workers), the
// floor of any implementation that moves the same data.
//
//   build/release/bench/elastic_resize

#include "data/data_shares.h"
#include "ps/parameter_server.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <vector>

using namespace fulcrum;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

double copy_floor_s(Eigen::Index keys)
{
    // Parameters and velocity of the moved keys, copied once.
    std::vector<float> from(static_cast<std::size_t>(2 * keys), 1.0f), to(from.size());
    std::vector<double> times;
    for (int r = 0; r < 9; ++r) {
        const auto start = Clock::now();
        std::memcpy(to.data(), from.data(), to.size() * sizeof(float));
        times.push_back(seconds_since(start));
        from[static_cast<std::size_t>(r)] = to[static_cast<std::size_t>(r) + 1];
    }
    return median(times);
}

void servers(Eigen::Index parameters, int shards)
{
    ps::ParameterServer server(Eigen::VectorXf::Constant(parameters, 0.5f), shards, {}, ps::Aggregation::Weighted);
    std::vector<double> add, remove;
    Eigen::Index moved_add = 0, moved_remove = 0;
    for (int r = 0; r < 9; ++r) {
        auto start = Clock::now();
        moved_add = server.add_shard().moved_keys;
        add.push_back(seconds_since(start));
        start = Clock::now();
        moved_remove = server.remove_shard(shards).moved_keys;
        remove.push_back(seconds_since(start));
    }
    const double a = median(add), d = median(remove);
    const double fa = copy_floor_s(moved_add), fd = copy_floor_s(moved_remove);
    std::printf("add server    %5d -> %-3d %10lld params  %9lld keys moved  %8.3f ms  (copy floor %7.3f ms, %.2fx)\n",
        shards, shards + 1, static_cast<long long>(parameters), static_cast<long long>(moved_add), 1e3 * a, 1e3 * fa,
        a / fa);
    std::printf("remove server %5d -> %-3d %10lld params  %9lld keys moved  %8.3f ms  (copy floor %7.3f ms, %.2fx)\n",
        shards + 1, shards, static_cast<long long>(parameters), static_cast<long long>(moved_remove), 1e3 * d, 1e3 * fd,
        d / fd);
}

// What JobState::resize does for a worker change: the share change, then every member's
// index list rebuilt.
double worker_change(data::DataShares& shares, bool add, WorkerId worker)
{
    const auto start = Clock::now();
    if (add)
        shares.add_worker(worker);
    else
        shares.remove_worker(worker);
    std::size_t total = 0;
    for (const WorkerId w : shares.members())
        total += data::indices_of(shares.active(w)).size();
    const double s = seconds_since(start);
    if (total != static_cast<std::size_t>(shares.samples()))
        std::printf("  (shares lost samples: %zu of %lld)\n", total, static_cast<long long>(shares.samples()));
    return s;
}

void workers(std::int64_t samples, int members)
{
    std::vector<double> add, remove, floor;
    for (int r = 0; r < 9; ++r) {
        data::DataShares shares(samples, members);
        add.push_back(worker_change(shares, true, members));
        remove.push_back(worker_change(shares, false, members));
        const auto start = Clock::now();
        std::vector<std::int64_t> all(static_cast<std::size_t>(samples));
        std::iota(all.begin(), all.end(), 0);
        floor.push_back(seconds_since(start));
        if (all.back() != samples - 1)
            return;
    }
    const double a = median(add), d = median(remove), f = median(floor);
    std::printf(
        "add worker    %5d -> %-3d %10lld samples                     %8.3f ms  (index floor %6.3f ms, %.2fx)\n",
        members, members + 1, static_cast<long long>(samples), 1e3 * a, 1e3 * f, a / f);
    std::printf(
        "remove worker %5d -> %-3d %10lld samples                     %8.3f ms  (index floor %6.3f ms, %.2fx)\n",
        members + 1, members, static_cast<long long>(samples), 1e3 * d, 1e3 * f, d / f);
}

} // namespace

int main()
{
    std::printf("Elastic PS mechanisms, median of 9 (in-process; a deployment adds the network transfer)\n");
    servers(25'557'032, 4); // ResNet-50
    servers(138'357'544, 8); // VGG-16
    workers(60'000, 4);
    workers(60'000, 32);
    return 0;
}
