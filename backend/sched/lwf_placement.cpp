#include "sched/placement_policies.h"

#include <algorithm>
#include <numeric>

namespace fulcrum::sched {

LwfPlacement::LwfPlacement(int kappa)
    : kappa_(kappa)
{
}

// LWF-κ (Wang et al. Algorithm 1): a job of at most κ GPUs takes the least-loaded GPUs
// anywhere (balance); a larger one fills whole servers, least-loaded server first, so its
// all-reduce crosses as few links as possible (consolidation).
std::vector<int> LwfPlacement::place(const JobSpec& job, const ClusterSpec& cluster, const std::vector<GpuState>& gpus)
{
    std::vector<int> candidates = eligible_gpus(job, gpus);
    if (static_cast<int>(candidates.size()) < job.gpus)
        return {};
    if (job.gpus <= kappa_)
        return least_loaded(std::move(candidates), job.gpus, gpus);

    std::vector<double> server_load(static_cast<std::size_t>(cluster.servers), 0.0);
    for (const GpuState& g : gpus)
        server_load[static_cast<std::size_t>(g.server)] += g.workload_s;
    std::vector<std::vector<int>> by_server(static_cast<std::size_t>(cluster.servers));
    for (int g : candidates)
        by_server[static_cast<std::size_t>(gpus[static_cast<std::size_t>(g)].server)].push_back(g);
    std::vector<int> servers(static_cast<std::size_t>(cluster.servers));
    std::iota(servers.begin(), servers.end(), 0);
    std::stable_sort(servers.begin(), servers.end(), [&](int x, int y) {
        return server_load[static_cast<std::size_t>(x)] < server_load[static_cast<std::size_t>(y)];
    });
    std::vector<int> chosen;
    for (int s : servers) {
        auto& own = by_server[static_cast<std::size_t>(s)];
        const int take = std::min<int>(static_cast<int>(own.size()), job.gpus - static_cast<int>(chosen.size()));
        const std::vector<int> picked = least_loaded(own, take, gpus);
        chosen.insert(chosen.end(), picked.begin(), picked.end());
        if (static_cast<int>(chosen.size()) == job.gpus)
            break;
    }
    return chosen;
}

} // namespace fulcrum::sched
