#include "daemon/placement_pass.h"

#include "common/error.h"
#include "daemon/elastic_job.h"
#include "scenario/job_footprint.h"
#include "sched/tenant_quota.h"

#include <algorithm>
#include <sstream>
#include <thread>

namespace fulcrum::daemon {

// A virtual job's workers do take GPUs: they are the scheduling model's jobs on fulcrumd's
// one virtual clock, placed, sharing links and queued as fulcrum-sim's (a workload's among
// them); so do an elastic job's, since EPS grows and shrinks it by GPUs.
bool takes_gpu(const scenario::Scenario& s, const scenario::WorkerSpec& w, const sched::ClusterSpec& cluster)
{
    if (w.remote || s.external)
        return false;
    return cluster.cpu_workers_take_gpus || s.mode == scenario::Mode::Virtual || s.elastic.present || w.gpu.has_value()
        || w.device.is_cuda();
}

GpuDemand demand_of(const scenario::Scenario& s, const sched::ClusterSpec& cluster)
{
    GpuDemand demand;
    if (s.external) // an external job's ranks run where its framework started them
        return demand;
    demand.workers = static_cast<int>(
        std::count_if(s.workers.begin(), s.workers.end(), [&](const auto& w) { return takes_gpu(s, w, cluster); }));
    demand.memory_gb = s.placement_memory_gb.value_or(cluster.gpu_memory_gb);
    demand.servers = s.placement_server_gpus;
    return demand;
}

scenario::JobFootprint footprint_of(const scenario::Scenario& s)
{
    return scenario::estimate_footprint(s, static_cast<int>(std::thread::hardware_concurrency()));
}

PlacementPass::PlacementPass(const DaemonOptions& options, ClusterBook& book, ElasticScheduling& elastic,
    WorkerPool& pool, ResourceBook& resources)
    : options_(options)
    , book_(book)
    , elastic_(elastic)
    , pool_(pool)
    , resources_(resources)
{
}

int PlacementPass::gpus_asked(const ElasticJob& job) const
{
    GpuDemand request = demand_of(job.scenario(), options_.cluster);
    if (ElasticScheduling::resizable(job))
        request.workers = ElasticScheduling::requested_workers(job);
    return elastic_.fed_by_pool(job) ? ElasticScheduling::slots_of_kind(job, request.workers, false) : request.gpus();
}

bool PlacementPass::waits_for_idle_gpus(
    const std::vector<ElasticJob*>& queued, const std::vector<ElasticJob*>& running) const
{
    const sched::TenantQuotas& quotas = options_.cluster.tenants;
    if (!quotas.active())
        return !queued.empty();
    const sched::TenantHeld held = elastic_.held(running);
    return std::any_of(queued.begin(), queued.end(), [&](const ElasticJob* job) {
        return sched::quota_room(quotas, held, job->tenant(), options_.cluster.gpus()) > 0;
    });
}

std::string PlacementPass::asks(const ElasticJob& job, std::size_t ahead) const
{
    const GpuDemand demand = demand_of(job.scenario(), options_.cluster);
    GpuDemand asked = demand;
    if (ElasticScheduling::resizable(job))
        asked.workers = ElasticScheduling::requested_workers(job);
    std::ostringstream asks;
    if (elastic_.fed_by_pool(job)) {
        const int pooled = ElasticScheduling::slots_of_kind(job, asked.workers, true);
        asks << pooled << " pooled worker" << (pooled == 1 ? "" : "s") << " (fulcrum-worker --pool), "
             << pool_.idle_for(job.tenant()) << " idle now";
        if (const int local = asked.workers - pooled; local > 0)
            asks << ", and " << local << (local == 1 ? " GPU" : " GPUs") << " for its local workers";
        asks << "; ";
    } else if (asked.gpus() == 0)
        asks << "no GPU (its workers run beside the GPUs or where they were started); ";
    else
        asks << asked.gpus() << (asked.gpus() == 1 ? " GPU" : " GPUs")
             << (asked.servers > 0 ? " (" + std::to_string(asked.servers) + " for its servers)" : "") << " with "
             << demand.memory_gb << " GB each, " << book_.room_for(demand) << " with room now; ";
    asks << ahead << " job" << (ahead == 1 ? "" : "s") << " ahead";
    return asks.str();
}

// Tenants' quotas (sched/tenant_quota.h): a borrower waits while a job within its quota
// does; a job within its quota that does not fit takes back what borrowers hold beyond theirs
// (reclaim, before EPS's own release), elastic borrowers shrinking and rigid ones stopped at
// a checkpoint to be queued again (rigid_borrowers requeue); a job whose tenant does not
// borrow waits for what is left of its quota.
PlacementPass::QuotaStep PlacementPass::quota_step(const ElasticJob& job, const GpuDemand& request, int local_gpus,
    const ElasticJob* owner_waits, const std::vector<ElasticJob*>& running, Outcome& outcome)
{
    const sched::TenantQuotas& quotas = options_.cluster.tenants;
    if (!quotas.active() || local_gpus <= 0)
        return {};
    const sched::TenantHeld held = elastic_.held(running);
    const sched::TenantQuota quota = quotas.of(job.tenant());
    const bool within = !sched::serve_order(quotas, held, job.tenant(), local_gpus).borrowing;
    if (!within && owner_waits)
        return { "waiting: job " + std::to_string(owner_waits->id()) + " of tenant " + owner_waits->tenant()
                + " waits within its quota, and GPUs that idle or come back go to it first",
            false };
    const bool sized = elastic_.sizes(job) && !elastic_.fed_by_pool(job);
    const int least = sized ? job.scenario().elastic.min_workers + (request.servers > 0 ? 1 : 0) : local_gpus;
    if (book_.room_for(request) < local_gpus) {
        const std::string why = "reclaimed for job " + std::to_string(job.id()) + " of tenant " + job.tenant()
            + " (within its quota of " + std::to_string(quota.gpus) + " GPUs)";
        for (const JobId borrower : elastic_.reclaim_for(job, request, local_gpus, least, running))
            outcome.requeue.push_back({ borrower, why + "; rigid_borrowers requeue" });
    }
    if (sized && elastic_.active())
        return { {}, within }; // EPS sizes it within its quota (ElasticScheduling::admit)
    // A tenant that does not borrow takes no more than its quota's room and the GPUs free now:
    // short of its quota, it waits for the quota; with room in its quota, for GPUs that a
    // borrower still holds (said so, not blamed on its quota).
    const int free = book_.room_for(request);
    if (quota.borrow || sched::quota_room(quotas, held, job.tenant(), free) >= local_gpus)
        return { {}, within };
    if (sched::quota_room(quotas, held, job.tenant(), local_gpus) < local_gpus)
        return { "waiting for its tenant's quota: tenant " + job.tenant() + " holds "
                + std::to_string(sched::held_by(held, job.tenant())) + " of its " + std::to_string(quota.gpus)
                + " GPUs and does not borrow; this job needs " + std::to_string(local_gpus),
            within };
    return { "waiting for " + std::to_string(local_gpus) + " GPUs with room for a worker; " + std::to_string(free)
            + " have room now",
        within };
}

std::string PlacementPass::placed_message(const ElasticJob& job, const GpuDemand& request, const GpuDemand& demand,
    const std::vector<int>& gpus, std::optional<int> size) const
{
    const scenario::Scenario& s = job.scenario();
    const bool pooled = elastic_.fed_by_pool(job);
    const bool external = s.external.has_value();
    const bool smaller = size && *size < request.workers;
    const bool fewer_servers = !pooled && demand.servers < request.servers;
    const auto cpu_workers = std::count_if(s.workers.begin(), s.workers.end(),
        [&](const auto& w) { return !w.remote && !external && !takes_gpu(s, w, options_.cluster); });
    const std::string servers = std::to_string(demand.servers) + " servers";
    const std::string placed_what = demand.workers == 0 && demand.servers > 0 ? "its " + servers
                                                                              : std::to_string(demand.workers)
            + " local worker" + (demand.workers == 1 ? "" : "s") + (demand.servers > 0 ? " and its " + servers : "");
    const std::string beside_gpus = cpu_workers == 0
        ? ""
        : std::to_string(cpu_workers) + " CPU worker" + (cpu_workers == 1 ? "" : "s") + " beside the GPUs";
    const std::string policy(sched::policy_name(elastic_.policy()));
    if (external)
        return "an external job: its " + std::to_string(job.workers()) + " ranks run where " + s.external->framework
            + " started them";
    if (pooled)
        return policy + ": " + std::to_string(*size) + " of the " + std::to_string(request.workers)
            + " workers it asks for, from the worker pool (" + std::to_string(pool_.idle_for(job.tenant())) + " idle)"
            + (demand.workers > 0 ? " and, its local ones, on " + book_.describe(gpus) : "");
    if (demand.gpus() == 0 && cpu_workers > 0)
        return "its " + beside_gpus + " (they take none)";
    return book_.placement() + " placed " + placed_what + " on " + book_.describe(gpus)
        + (smaller || fewer_servers ? " (" + policy + ": " + std::to_string(*size) + " of the "
                    + std::to_string(request.workers) + " workers it asks for"
                    + (fewer_servers ? " and " + std::to_string(demand.servers) + " of its "
                                + std::to_string(request.servers) + " server GPUs"
                                     : "")
                    + " were free; it grows when GPUs are idle)"
                                    : "")
        + (beside_gpus.empty() ? "" : "; its " + beside_gpus);
}

PlacementPass::Outcome PlacementPass::run(
    const std::vector<ElasticJob*>& queued, const std::vector<ElasticJob*>& running, const RemainingWork& remaining)
{
    pool_.drop_holds(); // this pass's own only, whatever became of the last one's starts
    Outcome outcome;
    std::optional<JobId> pool_head; // --elastic static: the pooled job first in line, waiting
    std::optional<JobId> gpu_head; // --queue fifo: the first job waiting for GPUs
    const ElasticJob* owner_waits = nullptr; // a within-quota job that waits: idle GPUs are its own
    const auto wait = [&](ElasticJob& job, std::string why) { outcome.waiting.push_back({ &job, std::move(why) }); };
    // With tenants' quotas, within-quota jobs first, then borrowers by borrowed GPUs per
    // weight (sched::serve_order); once a within-quota job waits, no borrower is placed: the
    // GPUs that idle or come back are its own.
    const sched::TenantQuotas& quotas = options_.cluster.tenants;
    std::vector<ElasticJob*> order = queued;
    if (quotas.active()) {
        const sched::TenantHeld held = elastic_.held(running);
        std::stable_sort(order.begin(), order.end(), [&](const ElasticJob* a, const ElasticJob* b) {
            return sched::serve_order(quotas, held, a->tenant(), gpus_asked(*a))
                < sched::serve_order(quotas, held, b->tenant(), gpus_asked(*b));
        });
    }
    for (ElasticJob* queued_job : order) {
        ElasticJob& job = *queued_job;
        const bool pooled = elastic_.fed_by_pool(job); // its workers come from the pool, not the GPUs
        GpuDemand request = demand_of(job.scenario(), options_.cluster);
        if (ElasticScheduling::resizable(job)) // its initial members, under every policy
            request.workers = ElasticScheduling::requested_workers(job);
        if (gpu_head && !pooled && request.gpus() > 0) {
            wait(job, "waiting behind job " + std::to_string(*gpu_head) + " (--queue fifo)");
            continue;
        }
        const scenario::JobFootprint needs = footprint_of(job.scenario());
        if (std::string why = resources_.wait_reason(needs); !why.empty()) {
            wait(job, std::move(why));
            continue;
        }
        const bool fifo = options_.queue == DaemonOptions::Queue::Fifo && !pooled && request.gpus() > 0;
        const int local_gpus = pooled ? ElasticScheduling::slots_of_kind(job, request.workers, false) : request.gpus();
        const QuotaStep quota = quota_step(job, request, local_gpus, owner_waits, running, outcome);
        if (!quota.wait.empty()) {
            wait(job, quota.wait);
            if (quota.within_quota && !owner_waits)
                owner_waits = &job;
            continue;
        }
        GpuDemand demand = request;
        std::optional<int> size; // the workers it starts with (eps, or a pooled job)
        if (elastic_.active() && request.workers > 0) {
            if (const std::optional<sched::SlotCount> start = elastic_.admit(job, request, running, remaining)) {
                size = start->workers;
                demand.workers = start->workers;
                if (!pooled)
                    demand.servers = start->servers; // in proportion, when it starts smaller
            }
        } else if (pooled && !pool_head) {
            size = elastic_.admit_whole(job, request);
        }
        const int local_slots = ElasticScheduling::slots_of_kind(job, job.workers(), false);
        if (pooled && !size) {
            const std::string and_gpus = local_slots > 0 ? " and GPUs for its local ones" : "";
            wait(job,
                elastic_.active() ? "waiting for " + std::to_string(job.scenario().elastic.min_workers)
                        + " workers: pooled workers for its remote slots (fulcrum-worker --pool; "
                        + std::to_string(pool_.idle_for(job.tenant())) + " idle now)" + and_gpus
                    : pool_head ? "waiting behind job " + std::to_string(*pool_head)
                        + " for the worker pool (--elastic static: first come, first served)"
                                : "waiting for its whole request of " + std::to_string(request.workers)
                        + " workers (--elastic static): pooled workers for its remote slots (fulcrum-worker --pool; "
                        + std::to_string(pool_.idle_for(job.tenant())) + " idle now)" + and_gpus);
            if (!elastic_.active() && !pool_head)
                pool_head = job.id();
            if (quota.within_quota && !owner_waits) // what was reclaimed for its GPUs stays its own
                owner_waits = &job;
            continue;
        }
        if (pooled) { // the GPUs of its local members, when it mixes local and remote workers
            demand.workers = ElasticScheduling::slots_of_kind(job, *size, false);
            demand.servers = 0;
        }
        const std::vector<int> gpus
            = (pooled && local_slots == 0) || (elastic_.active() && request.workers > 0 && !size)
            ? std::vector<int> {}
            : book_.place(job.id(), demand, remaining);
        if (demand.gpus() > 0 && gpus.empty()) {
            wait(job,
                "waiting for " + std::to_string(demand.gpus()) + " GPUs with room for a worker; "
                    + std::to_string(book_.room_for(demand)) + " have room now");
            if (fifo)
                gpu_head = job.id();
            if (quota.within_quota && !owner_waits)
                owner_waits = &job;
            continue;
        }
        std::vector<std::int32_t> placement;
        std::size_t next = 0;
        for (const auto& w : job.scenario().workers)
            placement.push_back( // the workers' GPUs first; the servers' after them
                !takes_gpu(job.scenario(), w, options_.cluster)
                        || next >= std::min<std::size_t>(gpus.size(), demand.workers)
                    ? -1
                    : gpus[next++]);
        const bool fewer_servers = !pooled && demand.servers < request.servers;
        outcome.placed.push_back({ &job, std::move(placement), placed_message(job, request, demand, gpus, size),
            elastic_.sizes(job) || pooled ? size : std::nullopt,
            fewer_servers ? std::optional<int>(demand.servers) : std::nullopt });
        resources_.hold(job.id(), needs);
        if (pooled) // assigned when it starts: the jobs after it in the pass count without them
            pool_.hold(job.id(), ElasticScheduling::processes_to_start(job, *size), job.tenant());
    }
    return outcome;
}

} // namespace fulcrum::daemon
