#include "daemon/cluster_book.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace fulcrum::daemon {

ClusterBook::ClusterBook(
    sched::ClusterSpec cluster, const std::string& placement, std::uint64_t seed, std::string elastic)
    : cluster_(std::move(cluster))
    , placement_name_(placement)
    , elastic_name_(std::move(elastic))
    , seed_(seed)
    , policy_(sched::make_placement(placement, seed))
{
}

void ClusterBook::set_placement(const std::string& placement)
{
    policy_ = sched::make_placement(placement, seed_);
    placement_name_ = placement;
}

std::string ClusterBook::impossible(const GpuDemand& demand) const
{
    std::ostringstream why;
    if (demand.gpus() > cluster_.gpus())
        why << "asks for " << demand.gpus() << " GPUs (one per worker it places on a GPU"
            << (demand.servers > 0 ? ", and " + std::to_string(demand.servers) + " for its servers" : "")
            << "); the cluster has " << cluster_.gpus() << " (" << cluster_.servers << " servers of "
            << cluster_.gpus_per_server << ")"
            << (cluster_.cpu_workers_take_gpus
                       ? "; this cluster places CPU workers on GPUs too (its file's cpu_workers_take_gpus)"
                       : "");
    else if (demand.workers > 0 && demand.memory_gb > cluster_.gpu_memory_gb)
        why << "asks for " << demand.memory_gb << " GB of GPU memory per worker; the cluster's GPUs have "
            << cluster_.gpu_memory_gb << " GB";
    return why.str();
}

std::vector<sched::GpuState> ClusterBook::gpu_states(const RemainingWork& remaining) const
{
    std::vector<sched::GpuState> gpus(static_cast<std::size_t>(cluster_.gpus()));
    for (std::size_t g = 0; g < gpus.size(); ++g) {
        gpus[g].server = cluster_.server_of(static_cast<int>(g));
        gpus[g].free_memory_gb = cluster_.gpu_memory_gb;
    }
    for (const auto& [job, held] : held_) {
        const double left = remaining ? std::max(0.0, remaining(job)) : 0.0;
        for (int g : held.gpus) {
            gpus[static_cast<std::size_t>(g)].free_memory_gb -= held.memory_gb;
            gpus[static_cast<std::size_t>(g)].workload_s += left;
        }
    }
    return gpus;
}

int ClusterBook::room_for(const GpuDemand& demand) const
{
    const auto gpus = gpu_states({});
    return static_cast<int>(std::count_if(gpus.begin(), gpus.end(),
        [&](const sched::GpuState& g) { return g.free_memory_gb + 1e-9 >= demand.memory_gb; }));
}

std::vector<int> ClusterBook::place(JobId job, const GpuDemand& demand, const RemainingWork& remaining)
{
    if (held_.contains(job))
        return held_.at(job).gpus;
    if (demand.gpus() == 0) { // only remote workers: nothing to place
        held_[job] = Held {};
        return {};
    }
    sched::JobSpec spec;
    spec.id = job;
    spec.gpus = demand.gpus();
    // A hair less than asked, so that a whole-GPU demand fits a GPU whose free memory is the
    // sum of floating-point subtractions.
    spec.model.memory_gb = demand.memory_gb - 1e-9;
    std::vector<int> chosen = policy_->place(spec, cluster_, gpu_states(remaining));
    if (chosen.size() != static_cast<std::size_t>(demand.gpus()))
        return {};
    held_[job] = Held { chosen, demand.memory_gb };
    return chosen;
}

void ClusterBook::release(JobId job)
{
    held_.erase(job);
}

std::optional<int> ClusterBook::add_gpu(JobId job, const RemainingWork& remaining)
{
    const auto it = held_.find(job);
    if (it == held_.end())
        return std::nullopt;
    Held& held = it->second;
    const double memory = held.memory_gb > 0 ? held.memory_gb : cluster_.gpu_memory_gb;
    const auto gpus = gpu_states(remaining);
    std::set<int> servers;
    std::vector<bool> own(gpus.size(), false);
    for (int g : held.gpus) {
        servers.insert(cluster_.server_of(g));
        own[static_cast<std::size_t>(g)] = true;
    }
    std::optional<int> best;
    const auto better = [&](int g) {
        if (!best)
            return true;
        const bool here = servers.contains(gpus[static_cast<std::size_t>(g)].server);
        const bool best_here = servers.contains(gpus[static_cast<std::size_t>(*best)].server);
        if (here != best_here)
            return here;
        return gpus[static_cast<std::size_t>(g)].workload_s < gpus[static_cast<std::size_t>(*best)].workload_s;
    };
    for (int g = 0; g < static_cast<int>(gpus.size()); ++g) {
        if (own[static_cast<std::size_t>(g)])
            continue;
        if (gpus[static_cast<std::size_t>(g)].free_memory_gb + 1e-9 < memory)
            continue;
        if (better(g))
            best = g;
    }
    if (best) {
        held.gpus.push_back(*best);
        held.memory_gb = memory;
    }
    return best;
}

void ClusterBook::remove_gpu(JobId job, int gpu)
{
    const auto it = held_.find(job);
    if (it == held_.end())
        return;
    auto& gpus = it->second.gpus;
    if (const auto g = std::find(gpus.begin(), gpus.end(), gpu); g != gpus.end())
        gpus.erase(g);
}

std::vector<JobId> ClusterBook::placed_jobs() const
{
    std::vector<JobId> jobs;
    jobs.reserve(held_.size());
    for (const auto& [job, held] : held_)
        jobs.push_back(job);
    return jobs;
}

std::vector<int> ClusterBook::gpus_of(JobId job) const
{
    const auto it = held_.find(job);
    return it == held_.end() ? std::vector<int> {} : it->second.gpus;
}

protocol::ClusterState ClusterBook::state(const std::vector<JobId>& queue, const RemainingWork& remaining) const
{
    protocol::ClusterState out;
    out.placement = placement_name_;
    out.elastic = elastic_name_;
    out.servers = cluster_.servers;
    out.gpus_per_server = cluster_.gpus_per_server;
    out.gpu_memory_gb = cluster_.gpu_memory_gb;
    out.queue = queue;
    const auto gpus = gpu_states(remaining);
    for (std::size_t g = 0; g < gpus.size(); ++g)
        out.gpus.push_back({ static_cast<std::int32_t>(g), gpus[g].server, std::max(0.0, gpus[g].free_memory_gb),
            gpus[g].workload_s, {} });
    for (const auto& [job, held] : held_)
        for (int g : held.gpus)
            out.gpus[static_cast<std::size_t>(g)].jobs.push_back(job);
    return out;
}

std::string ClusterBook::describe(const std::vector<int>& gpus) const
{
    if (gpus.empty())
        return "no GPUs";
    std::vector<int> sorted = gpus;
    std::sort(sorted.begin(), sorted.end());
    std::ostringstream text;
    text << (sorted.size() == 1 ? "GPU " : "GPUs ");
    // Runs of consecutive GPUs as "a-b".
    for (std::size_t i = 0; i < sorted.size();) {
        std::size_t j = i;
        while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1)
            ++j;
        text << (i ? ", " : "") << sorted[i];
        if (j > i)
            text << "-" << sorted[j];
        i = j + 1;
    }
    std::set<int> servers;
    for (int g : sorted)
        servers.insert(cluster_.server_of(g));
    text << (servers.size() == 1 ? " (server " : " (servers ");
    bool first = true;
    for (int s : servers) {
        text << (first ? "" : ", ") << s;
        first = false;
    }
    text << ")";
    return text.str();
}

} // namespace fulcrum::daemon
