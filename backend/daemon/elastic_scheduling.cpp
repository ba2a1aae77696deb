#include "daemon/elastic_scheduling.h"

#include "common/error.h"
#include "daemon/elastic_job.h"
#include "daemon/remote_pool.h"
#include "scenario/scenario.h"
#include "sched/eps_rules.h"
#include "serve/stream_hub.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace fulcrum::daemon {

namespace {

std::string per_s(double rate)
{
    std::ostringstream text;
    text.precision(3);
    text << rate << " samples/s";
    return text.str();
}

} // namespace

ElasticScheduling::ElasticScheduling(const DaemonOptions::Elastic& options, ClusterBook& book, WorkerPool& pool)
    : options_(options)
    , book_(book)
    , pool_(pool)
    , next_round_(
          Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.round_s)))
{
}

int ElasticScheduling::requested_workers(const ElasticJob& job)
{
    const scenario::Scenario& s = job.scenario();
    const int slots = static_cast<int>(s.workers.size());
    const int initial = s.elastic.initial_workers > 0 ? s.elastic.initial_workers : slots;
    return std::clamp(initial, s.elastic.min_workers, s.elastic.max_workers);
}

bool ElasticScheduling::resizable(const ElasticJob& job)
{
    const scenario::Scenario& s = job.scenario();
    return s.elastic.present && !s.external;
}

bool ElasticScheduling::pooled_slot(const ElasticJob& job, WorkerId worker)
{
    const auto& slots = job.scenario().workers;
    return job.remote() && worker >= 0 && static_cast<std::size_t>(worker) < slots.size()
        && slots[static_cast<std::size_t>(worker)].remote;
}

int ElasticScheduling::slots_of_kind(const ElasticJob& job, int first, bool pooled)
{
    int n = 0;
    for (WorkerId w = 0; w < first && w < job.workers(); ++w)
        n += pooled_slot(job, w) == pooled ? 1 : 0;
    return n;
}

int ElasticScheduling::processes_to_start(const ElasticJob& job, int first)
{
    const std::vector<bool> joined = job.remote()->joined_slots();
    int n = 0;
    for (WorkerId w = 0; w < first && w < job.workers(); ++w)
        n += pooled_slot(job, w) && !(static_cast<std::size_t>(w) < joined.size() && joined[w]) ? 1 : 0;
    return n;
}

int ElasticScheduling::members_of_kind(const ElasticJob& job, bool pooled)
{
    const std::vector<bool> members = job.member_slots();
    int n = 0;
    for (std::size_t w = 0; w < members.size(); ++w)
        n += members[w] && pooled_slot(job, static_cast<WorkerId>(w)) == pooled ? 1 : 0;
    return n;
}

bool ElasticScheduling::fed_by_pool(const ElasticJob& job) const
{
    return resizable(job) && job.remote() != nullptr;
}

std::optional<int> ElasticScheduling::admit_whole(const ElasticJob& job, const GpuDemand& request) const
{
    return fits(job, request, request.workers) ? std::optional<int>(request.workers) : std::nullopt;
}

bool ElasticScheduling::fits(const ElasticJob& job, const GpuDemand& request, int members) const
{
    return processes_to_start(job, members) <= pool_.idle_for(job.tenant())
        && slots_of_kind(job, members, false) <= book_.room_for(request);
}

std::optional<sched::SlotCount> ElasticScheduling::admit(
    ElasticJob& newcomer, const GpuDemand& request, const std::vector<ElasticJob*>& running, const RemainingWork&)
{
    const bool elastic = sizes(newcomer);
    const bool pooled = fed_by_pool(newcomer);
    if (pooled) // its remote slots' processes from the pool, its local slots' GPUs from the book
        return admit_pooled(newcomer, request, running, elastic);
    // Its servers' GPUs (placement.server_gpus) count with its workers', as the simulator's
    // slots do: a newcomer starting smaller starts with fewer of both, in proportion
    // (eps_start_size), down to one server.
    const bool servers = request.servers > 0;
    const sched::SlotCount asked { request.workers, servers ? request.servers : 0 };
    const sched::SlotCount minimum { elastic ? newcomer.scenario().elastic.min_workers : request.workers,
        servers ? (elastic ? 1 : request.servers) : 0 };
    // Borrowed GPUs came back first (PlacementPass::quota_step, reclaim_for), then EPS's release.
    int free = book_.room_for(request);
    if (active() && free < asked.slots())
        release_for(newcomer, false, asked.slots(), minimum.slots(), free, running);
    free = sched::quota_room(quotas(), held(running), newcomer.tenant(), book_.room_for(request));
    return sched::eps_start_size(free, asked, minimum, elastic);
}

// A job fed by the pool starts with its first N slots as members, N as large as its request
// allows with a pooled process for each remote slot among them and a GPU for each local one
// (all remote: as many as the pool holds, eps_start_size's rule), at least min_workers when
// EPS sizes it. Short of processes, EPS first takes pooled workers from jobs past early
// feedback; short of GPUs, GPUs.
std::optional<sched::SlotCount> ElasticScheduling::admit_pooled(
    ElasticJob& newcomer, const GpuDemand& request, const std::vector<ElasticJob*>& running, bool elastic)
{
    const int minimum = elastic ? newcomer.scenario().elastic.min_workers : request.workers;
    for (const bool pooled : { true, false }) {
        // Pooled: the processes its remote member slots lack (one started by hand may have joined).
        const int wanted
            = pooled ? processes_to_start(newcomer, request.workers) : slots_of_kind(newcomer, request.workers, false);
        const int least = pooled ? processes_to_start(newcomer, minimum) : slots_of_kind(newcomer, minimum, false);
        const int free = pooled ? pool_.idle_for(newcomer.tenant()) : book_.room_for(request);
        if (active() && free < wanted)
            release_for(newcomer, pooled, wanted, least, free, running);
    }
    for (int n = request.workers; n >= minimum && n >= 1; --n)
        if (fits(newcomer, request, n))
            return sched::SlotCount { n, 0 };
    return std::nullopt;
}

std::optional<int> ElasticScheduling::add_gpu(JobId job, const RemainingWork& remaining)
{
    const std::optional<int> gpu = book_.add_gpu(job, remaining);
    if (gpu)
        note_change();
    return gpu;
}

void ElasticScheduling::remove_gpu(JobId job, int gpu)
{
    book_.remove_gpu(job, gpu);
    note_change();
}

bool ElasticScheduling::servers_hold_gpus(const ElasticJob& job)
{
    return job.scenario().placement_server_gpus > 0 && !job.remote();
}

std::vector<int> ElasticScheduling::server_gpus(const ElasticJob& job) const
{
    std::vector<int> gpus = book_.gpus_of(job.id());
    for (const std::int32_t worker_gpu : job.status().placement)
        if (const auto g = std::find(gpus.begin(), gpus.end(), worker_gpu); g != gpus.end())
            gpus.erase(g);
    return gpus;
}

int ElasticScheduling::wanted_server_gpus(const ElasticJob& job)
{
    const scenario::Scenario& s = job.scenario();
    return std::max(1, s.placement_server_gpus + job.server_count() - s.server_shards);
}

void ElasticScheduling::set_policy(sched::ElasticPolicy policy, const std::vector<ElasticJob*>& running)
{
    if (policy == options_.policy)
        return;
    options_.policy = policy;
    tracked_.clear();
    for (ElasticJob* job : running) {
        if (active() || !job->remote())
            started(*job);
        else if (resizable(*job)) // static: it keeps its processes; the pool follows an operator's resizes
            tracked_[job->id()] = Tracked {};
    }
    if (!active())
        return;
    rebase(Clock::now());
}

void ElasticScheduling::rebase(Clock::time_point now)
{
    next_round_ = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.round_s));
}

void ElasticScheduling::started(ElasticJob& job)
{
    if (!resizable(job))
        return;
    // Under static too: no decisions, but the book and the pool follow an operator's resizes.
    tracked_[job.id()] = Tracked {};
    if (job.remote()) // its members' processes (under static, its whole request, kept to its end)
        reconcile(job, {},
            label() + ": job " + std::to_string(job.id())
                + (sizes(job) ? " starts" : " starts with its whole request"));
}

void ElasticScheduling::follow_pool(const std::vector<ElasticJob*>& running)
{
    for (ElasticJob* job : running)
        if (tracked_.contains(job->id()) && job->remote())
            reconcile_pool(*job, {}, false);
}

void ElasticScheduling::ended(JobId job)
{
    tracked_.erase(job);
}

bool ElasticScheduling::may_release(ElasticJob& job, Tracked& t) const
{
    const protocol::JobStatus s = job.status();
    note_feedback(job, t);
    return t.feedback && !t.trial && !job.frozen() && job.resizes_in_flight() == 0
        && s.state == protocol::JobState::Running;
}

// EPS's release (eps_release): the holders are the running jobs EPS sizes of the newcomer's
// kind (GPUs, or pooled processes), each counting its members; what a job gives up are its
// highest-numbered members. Nothing is taken when even that would not let the newcomer
// start: a removal pauses a live job. With tenants' quotas, GPUs come only from the
// newcomer's own tenant's jobs: another tenant's come back by reclaim only (reclaim_for).
void ElasticScheduling::release_for(
    const ElasticJob& newcomer, bool pooled, int wanted, int minimum, int free, const std::vector<ElasticJob*>& running)
{
    std::vector<ElasticJob*> jobs;
    for (ElasticJob* job : running) {
        // A pooled process serves only the tenants its token reaches: one freed for a job of
        // another tenant would idle, its job shrunk for nothing.
        if (pooled && !serves(*job, newcomer.tenant()))
            continue;
        if (!pooled && quotas().active() && job->tenant() != newcomer.tenant())
            continue;
        jobs.push_back(job);
    }
    release_among(jobs, pooled, wanted, minimum, free, [&](const ElasticJob& job) {
        return label() + ": released for job " + std::to_string(newcomer.id()) + " (asks for " + std::to_string(wanted)
            + (pooled ? " pooled workers, " : " GPUs, ") + std::to_string(free) + " idle); job "
            + std::to_string(job.id()) + " is past its early feedback (" + sched::to_string(options_.feedback) + ")";
    });
}

int ElasticScheduling::release_among(const std::vector<ElasticJob*>& candidates, bool pooled, int wanted, int minimum,
    int free, const std::function<std::string(const ElasticJob&)>& why, bool dry_run)
{
    std::vector<ElasticJob*> jobs;
    std::vector<sched::EpsHolder> holders;
    for (ElasticJob* job : candidates) {
        const auto it = tracked_.find(job->id());
        if (it == tracked_.end() || slots_of_kind(*job, job->workers(), pooled) == 0)
            continue;
        // What it holds of the kind asked for: its members in such slots (a job mixing local
        // and remote workers gives GPUs or pooled processes, whichever is asked for), never
        // below elastic.min_workers in all.
        const scenario::ElasticScenarioSpec& e = job->scenario().elastic;
        const int others = members_of_kind(*job, !pooled);
        sched::EpsHolder h;
        h.held = { members_of_kind(*job, pooled), 0 };
        h.request = { slots_of_kind(*job, requested_workers(*job), pooled), 0 };
        h.minimum = { std::max(0, e.min_workers - others), 0 };
        if (servers_hold_gpus(*job)) { // its servers' GPUs count, and go, with its workers'
            h.held.servers = static_cast<int>(server_gpus(*job).size());
            h.request.servers = job->scenario().placement_server_gpus;
            h.minimum.servers = 1;
        }
        h.may_release = may_release(*job, it->second);
        jobs.push_back(job);
        holders.push_back(h);
    }
    const std::vector<sched::SlotCount> taken = sched::eps_release(holders, free, wanted);
    int freed = 0;
    for (const sched::SlotCount& t : taken)
        freed += t.slots();
    if (freed == 0 || free + freed < minimum)
        return 0;
    if (dry_run)
        return freed;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        // Its highest-numbered members of that kind leave.
        const std::vector<bool> members = jobs[i]->member_slots();
        std::vector<WorkerId> leaving;
        for (auto w = static_cast<WorkerId>(members.size()) - 1;
             w >= 0 && static_cast<int>(leaving.size()) < taken[i].workers; --w)
            if (members[static_cast<std::size_t>(w)] && pooled_slot(*jobs[i], w) == pooled)
                leaving.push_back(w);
        if (leaving.empty() && taken[i].servers == 0)
            continue;
        try {
            shrink(*jobs[i], leaving, taken[i].servers, why(*jobs[i]));
        } catch (const RefusedRequest&) {
            // it keeps no checkpoints to restart from, or it just ended: it keeps its workers
        }
    }
    return freed;
}

sched::TenantHeld ElasticScheduling::held(const std::vector<ElasticJob*>& running) const
{
    std::map<std::string, std::set<int>> gpus;
    for (const JobId id : book_.placed_jobs()) {
        std::string tenant = "default";
        if (tenant_of_)
            tenant = tenant_of_(id);
        else if (const auto it
                 = std::find_if(running.begin(), running.end(), [&](const ElasticJob* j) { return j->id() == id; });
                 it != running.end())
            tenant = (*it)->tenant();
        for (const int g : book_.gpus_of(id))
            gpus[tenant].insert(g);
    }
    sched::TenantHeld by_tenant;
    for (const auto& [tenant, set] : gpus)
        by_tenant[tenant] = static_cast<int>(set.size());
    return by_tenant;
}

bool ElasticScheduling::requeueable(const ElasticJob& job)
{
    const scenario::Scenario& s = job.scenario();
    return !job.remote() && !s.external && (s.checkpoint.every_iterations > 0 || s.checkpoint.every_seconds > 0)
        && job.status().state == protocol::JobState::Running;
}

std::vector<JobId> ElasticScheduling::reclaim_for(const ElasticJob& newcomer, const GpuDemand& request, int wanted,
    int least, const std::vector<ElasticJob*>& running)
{
    std::vector<JobId> to_requeue;
    const sched::TenantHeld before = held(running);
    const int free = book_.room_for(request);
    const sched::TenantHeld plan = sched::reclaim_plan(quotas(), before, newcomer.tenant(), wanted, free, least);
    // What can come back now: elastic borrowers past early feedback, rigid ones a requeue can
    // stop. Nothing is taken unless that lets the newcomer start (a borrower shrunk for a job
    // that still waits would be shrunk again at every pass).
    const auto borrowers_of = [&](const std::string& tenant, bool elastic) {
        std::vector<ElasticJob*> jobs;
        for (ElasticJob* job : running)
            if (job->tenant() == tenant && !book_.gpus_of(job->id()).empty() && sizes(*job) == elastic
                && (elastic || requeueable(*job)))
                jobs.push_back(job);
        return jobs;
    };
    const auto rigid_gpus = [&](const std::vector<ElasticJob*>& rigid, int wanted_back) {
        int n = 0;
        for (auto job = rigid.rbegin(); job != rigid.rend() && n < wanted_back; ++job)
            n += static_cast<int>(book_.gpus_of((*job)->id()).size());
        return n;
    };
    const bool requeue = quotas().rigid == sched::RigidBorrowers::Requeue;
    int feasible = 0;
    for (const auto& [tenant, owed] : plan) {
        const int elastic = active()
            ? release_among(
                borrowers_of(tenant, true), false, owed, 0, 0, [](const ElasticJob&) { return std::string(); }, true)
            : 0;
        const int rigid = requeue ? rigid_gpus(borrowers_of(tenant, false), owed - elastic) : 0;
        feasible += std::min(owed, elastic + rigid);
    }
    if (free + feasible < least)
        return to_requeue;
    for (const auto& [tenant, owed] : plan) {
        const sched::TenantQuota mine = quotas().of(newcomer.tenant());
        const sched::TenantQuota theirs = quotas().of(tenant);
        const std::string why = label() + ": reclaimed for job " + std::to_string(newcomer.id()) + " of tenant "
            + newcomer.tenant() + " (within its quota of " + std::to_string(mine.gpus) + " GPUs; tenant " + tenant
            + " holds " + std::to_string(sched::held_by(before, tenant)) + ", " + std::to_string(owed) + " of them "
            + "borrowed beyond its quota of " + std::to_string(theirs.gpus) + ")";
        const std::vector<ElasticJob*> elastic = borrowers_of(tenant, true);
        const std::vector<ElasticJob*> rigid = borrowers_of(tenant, false);
        const int freed = active() ? release_among(elastic, false, owed, 0, 0,
                              [&](const ElasticJob& job) {
                                  return why + "; job " + std::to_string(job.id()) + " is past its early feedback ("
                                      + sched::to_string(options_.feedback) + ")";
                              })
                                   : 0;
        if (!requeue)
            continue; // rigid borrowers keep their GPUs to their end
        int more = owed - freed;
        for (auto job = rigid.rbegin(); job != rigid.rend() && more > 0; ++job) { // the latest-started first
            more -= static_cast<int>(book_.gpus_of((*job)->id()).size());
            to_requeue.push_back((*job)->id());
        }
    }
    return to_requeue;
}

bool ElasticScheduling::serves(const ElasticJob& holder, const std::string& tenant) const
{
    const std::vector<WorkerPool::Pooled> held = pool_.assigned_to(holder.id());
    return std::all_of(
        held.begin(), held.end(), [&](const WorkerPool::Pooled& p) { return p.client->reach().covers(tenant); });
}

std::string ElasticScheduling::label() const
{
    return std::string(sched::policy_name(options_.policy));
}

EventActor ElasticScheduling::actor() const
{
    return EventActor::scheduler(label());
}

void ElasticScheduling::carry_out(
    ElasticJob& job, const std::vector<protocol::ResizeJob>& changes, const std::string& reason)
{
    if (options_.policy == sched::ElasticPolicy::KillRestart) {
        job.restart(changes, actor(), reason);
        return;
    }
    for (const protocol::ResizeJob& change : changes) // each checked against the record the ones before left
        job.resize(job.resolve(change, actor(), reason));
}

void ElasticScheduling::shrink(
    ElasticJob& job, const std::vector<WorkerId>& workers, int servers, const std::string& reason)
{
    std::vector<protocol::ResizeJob> changes;
    changes.reserve(workers.size() + static_cast<std::size_t>(std::max(0, servers)));
    for (const WorkerId worker : workers)
        changes.push_back({ {}, job.id(), ResizeAction::RemoveWorker, worker });
    for (int k = 0; k < servers; ++k)
        changes.push_back({ {}, job.id(), ResizeAction::RemoveServer, std::nullopt });
    carry_out(job, changes, reason);
    if (servers > 0) { // the last servers' GPUs are free at once, as the workers' are
        std::vector<int> held = server_gpus(job);
        for (int k = 0; k < servers && !held.empty(); ++k) {
            remove_gpu(job.id(), held.back());
            held.pop_back();
        }
    }
    const std::vector<std::int32_t> placement = job.status().placement;
    for (const WorkerId worker : workers) {
        if (pooled_slot(job, worker)) { // its process goes back to the pool once the trainer no longer has it
            if (const auto it = tracked_.find(job.id()); it != tracked_.end())
                it->second.leaving[worker] = reason;
            continue;
        }
        if (static_cast<std::size_t>(worker) < placement.size() && placement[static_cast<std::size_t>(worker)] >= 0)
            remove_gpu(job.id(), placement[static_cast<std::size_t>(worker)]);
        job.place_worker(worker, -1);
    }
}

std::optional<std::string> ElasticScheduling::assign_pooled(ElasticJob& job, WorkerId worker, const std::string& reason)
{
    const std::optional<WorkerPool::Pooled> pooled = pool_.assign(job.id(), worker, job.tenant());
    if (!pooled)
        return std::nullopt;
    // Told first: its first task may follow at once, and it reads tasks only once it knows the job.
    protocol::WorkerAssigned assigned;
    assigned.assignment.job = job.id();
    assigned.assignment.worker = worker;
    assigned.assignment.scenario_json = job.scenario().json;
    assigned.reason = reason;
    pooled->client->send(assigned);
    try {
        job.remote()->join(pooled->client, worker, pooled->host);
    } catch (const RefusedRequest& e) { // a process started by hand took the slot meanwhile
        pool_.release(pooled->client->id());
        pooled->client->send(protocol::WorkerReleased { job.id(), worker, e.what() });
        return std::nullopt;
    }
    note_change();
    const std::string where = "pooled worker on " + pooled->host;
    try {
        job.note(EventKind::WorkerAssigned, worker,
            where + " takes worker " + std::to_string(worker) + " (" + reason + ")", actor());
    } catch (const RefusedRequest&) {
        // it ended meanwhile
    }
    return where;
}

void ElasticScheduling::release_pooled(ElasticJob& job, WorkerId worker, const std::string& reason)
{
    const std::optional<WorkerPool::Pooled> pooled = pool_.assigned(job.id(), worker);
    if (!pooled)
        return; // a process started by hand for the slot: it stays until the job ends
    job.remote()->release(worker);
    pool_.release(pooled->client->id());
    pooled->client->send(protocol::WorkerReleased { job.id(), worker, reason });
    note_change();
    try {
        job.note(EventKind::WorkerReleased, worker,
            "pooled worker on " + pooled->host + " leaves worker " + std::to_string(worker)
                + " and waits in the pool again (" + reason + ")",
            actor());
    } catch (const RefusedRequest&) {
        // it ended meanwhile
    }
}

void ElasticScheduling::note_feedback(ElasticJob& job, Tracked& t) const
{
    if (t.feedback)
        return;
    const ElasticJob::Work work = job.work();
    if (!sched::live_feedback_reached(options_.feedback, work.done, work.planned, job.status().accuracy))
        return;
    t.feedback = true;
    try {
        job.note(EventKind::EarlyFeedback, std::nullopt,
            "past its early-feedback point (" + sched::to_string(options_.feedback)
                + "): the elastic scheduler may take its workers for newcomers, down to elastic.min_workers",
            actor());
    } catch (const RefusedRequest&) {
        // it ended meanwhile
    }
}

void ElasticScheduling::tick(
    const std::vector<ElasticJob*>& running, bool queue_empty, const RemainingWork& remaining, Clock::time_point now)
{
    for (ElasticJob* job : running) {
        const auto it = tracked_.find(job->id());
        if (it == tracked_.end())
            continue;
        reconcile(*job, remaining);
        note_feedback(*job, it->second);
        if (it->second.trial && !job->frozen())
            judge(*job, it->second);
    }
    // A round due within a microsecond is due: on the virtual clock rounds fall on computed
    // instants, which the time points' whole nanoseconds may round a hair apart.
    if (now + std::chrono::microseconds(1) < next_round_)
        return;
    next_round_ = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.round_s));
    if (queue_empty)
        grow_round(running, remaining);
}

// A job fed by the pool gives back the processes of the slots it no longer has and, when
// `give_missing`, gets one for a member without (its start, or a process that died).
void ElasticScheduling::reconcile_pool(ElasticJob& job, const std::string& why, bool give_missing)
{
    if (job.status().state == protocol::JobState::Queued)
        return;
    const std::optional<ElasticJob::Holdings> h = job.holdings();
    if (!h)
        return;
    const std::vector<bool> joined = job.remote()->joined_slots();
    Tracked* t = tracked_.contains(job.id()) ? &tracked_.at(job.id()) : nullptr;
    for (std::size_t w = 0; w < h->trainer.size() && w < h->record.size() && w < joined.size(); ++w) {
        const auto worker = static_cast<WorkerId>(w);
        if (!pooled_slot(job, worker))
            continue; // a local slot: its GPU (reconcile)
        if (!h->keeps(w) && joined[w]) {
            const bool told = t && t->leaving.contains(worker);
            release_pooled(job, worker,
                told ? t->leaving.at(worker)
                     : "job " + std::to_string(job.id()) + " no longer has worker " + std::to_string(w));
        } else if (h->trainer[w] && !joined[w] && give_missing) { // it waits for every member's process
            assign_pooled(job, worker,
                !why.empty() ? why
                             : label() + ": worker " + std::to_string(w) + " of job " + std::to_string(job.id())
                        + " has no process");
        }
        // Gone, or staying: a removal the trainer refused leaves the worker in the record, and
        // the reason given for it would be a later release's otherwise.
        if (t && (!h->keeps(w) || h->record[w]))
            t->leaving.erase(worker);
    }
}

// The book follows the trainer: a worker that left (or a growth the trainer refused) frees
// its GPU, a member without one (a job resumed from a checkpoint) is given one when free; the
// pool too (reconcile_pool).
void ElasticScheduling::reconcile(ElasticJob& job, const RemainingWork& remaining, const std::string& why)
{
    if (job.status().state == protocol::JobState::Queued)
        return;
    if (job.remote())
        reconcile_pool(job, why, true);
    const std::optional<ElasticJob::Holdings> h = job.holdings();
    if (!h)
        return;
    const std::vector<std::int32_t> placement = job.status().placement;
    for (std::size_t w = 0; w < h->trainer.size() && w < h->record.size() && w < placement.size(); ++w) {
        if (pooled_slot(job, static_cast<WorkerId>(w)))
            continue;
        if (!h->keeps(w) && placement[w] >= 0) {
            remove_gpu(job.id(), placement[w]);
            job.place_worker(static_cast<WorkerId>(w), -1);
        } else if (h->trainer[w] && h->record[w] && placement[w] < 0) { // not one a held ask removed
            if (const auto gpu = add_gpu(job.id(), remaining))
                job.place_worker(static_cast<WorkerId>(w), *gpu);
        }
    }
    if (!servers_hold_gpus(job))
        return;
    // Its servers' GPUs follow its servers: a server the trainer refused to add frees the GPU
    // taken for it, one it refused to remove gets one back when free.
    std::vector<int> held = server_gpus(job);
    const auto wanted = static_cast<std::size_t>(wanted_server_gpus(job));
    for (; held.size() > wanted; held.pop_back())
        remove_gpu(job.id(), held.back());
    while (held.size() < wanted) {
        const std::optional<int> gpu = add_gpu(job.id(), remaining);
        if (!gpu)
            break;
        held.push_back(*gpu);
    }
}

void ElasticScheduling::judge(ElasticJob& job, Tracked& t)
{
    const WorkerId worker = *t.trial;
    if (job.resizes_in_flight() > 0)
        return; // the step has not reached a barrier yet
    if (!job.member_slots()[static_cast<std::size_t>(worker)]) { // the trainer refused it
        t.trial.reset();
        t.capped = true;
        return;
    }
    const std::int64_t from = job.member_since(worker) + 1; // the step's first iteration carries its move
    const std::int64_t to = from + options_.observe_iterations;
    if (job.status().iteration < to)
        return;
    t.trial.reset();
    const std::optional<double> after = job.samples_per_s(from, to);
    if (!after || sched::eps_growth_kept(t.baseline, *after))
        return;
    t.capped = true;
    try {
        shrink(job, { worker }, t.trial_server ? 1 : 0,
            label() + ": rolled back: " + per_s(*after) + " over the " + std::to_string(options_.observe_iterations)
                + " iterations after worker " + std::to_string(worker) + (t.trial_server ? " and a server" : "")
                + " joined, below " + per_s(t.baseline) + " before; the job grows no further");
    } catch (const RefusedRequest&) {
        // it just ended
    }
}

void ElasticScheduling::grow_round(const std::vector<ElasticJob*>& running, const RemainingWork& remaining)
{
    std::vector<ElasticJob*> jobs;
    for (ElasticJob* job : running)
        if (tracked_.contains(job->id()))
            jobs.push_back(job);
    const std::size_t round = round_++;
    std::vector<std::size_t> order = sched::eps_growth_order(jobs.size(), round);
    if (quotas().active()) { // idle GPUs by weight: the tenant with the fewest borrowed per weight first
        const sched::TenantHeld by_tenant = held(running);
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            return sched::serve_order(quotas(), by_tenant, jobs[a]->tenant(), 1)
                < sched::serve_order(quotas(), by_tenant, jobs[b]->tenant(), 1);
        });
    }
    // Each kind grows until its idle resources run out; pooled processes per tenant, as they
    // serve only their own tenant's jobs.
    bool gpus_left = true;
    std::set<std::string> pool_spent;
    for (const std::size_t i : order) {
        ElasticJob& job = *jobs[i];
        Tracked& t = tracked_.at(job.id());
        const protocol::JobStatus s = job.status();
        if (t.capped || t.trial || job.frozen() || job.resizes_in_flight() > 0
            || s.state != protocol::JobState::Running)
            continue;
        // Its pace before the step: the last observed iterations, the first barrier left out.
        const std::int64_t before_from = s.iteration - options_.observe_iterations;
        const std::optional<double> baseline
            = before_from >= 1 ? job.samples_per_s(before_from, s.iteration) : std::nullopt;
        if (!baseline)
            continue; // too young to judge a step against
        std::optional<WorkerId> slot; // the slot an operator's add-worker would take, within its bounds
        try {
            slot = job.resolve({ {}, job.id(), ResizeAction::AddWorker, std::nullopt }, actor()).target;
        } catch (const RefusedRequest&) {
            continue; // at its max_workers, or every slot in use
        }
        const WorkerId worker = slot.value_or(0);
        const bool pooled = pooled_slot(job, worker); // its next slot's kind: a pooled process, or a GPU
        if (pooled ? pool_spent.contains(job.tenant()) : !gpus_left)
            continue;
        const std::string why = label() + ": growth round " + std::to_string(round) + " on idle ";
        const std::string judged = "; " + per_s(*baseline) + " before, judged over the next "
            + std::to_string(options_.observe_iterations) + " iterations";
        std::string where;
        std::optional<int> gpu, server_gpu;
        const bool with_server = servers_hold_gpus(job);
        if (pooled) {
            const bool joined = job.remote()->joined_slots()[static_cast<std::size_t>(worker)];
            const std::optional<std::string> assigned
                = joined ? std::optional<std::string>("worker process") : assign_pooled(job, worker, why + "pool");
            if (!assigned) {
                pool_spent.insert(job.tenant()); // no idle pooled process of its tenant left this round
                continue;
            }
            where = *assigned;
        } else {
            const int step_gpus = with_server ? 2 : 1;
            if (sched::quota_room(quotas(), held(running), job.tenant(), step_gpus) < step_gpus)
                continue; // at a quota its tenant does not borrow beyond
            gpu = add_gpu(job.id(), remaining);
            if (gpu && with_server) { // EPS's step: a worker and a server
                server_gpu = add_gpu(job.id(), remaining);
                if (!server_gpu) {
                    remove_gpu(job.id(), *gpu);
                    gpu.reset();
                }
            }
            if (!gpu) {
                gpus_left = false; // no idle GPU (or pair of GPUs) left this round
                continue;
            }
            job.place_worker(worker, *gpu);
            where = book_.describe({ *gpu });
            if (server_gpu)
                where += " and a server on " + book_.describe({ *server_gpu });
        }
        std::vector<protocol::ResizeJob> step { { {}, job.id(), ResizeAction::AddWorker, worker } };
        if (server_gpu)
            step.push_back({ {}, job.id(), ResizeAction::AddServer, std::nullopt });
        try {
            carry_out(job, step, why + where + judged);
        } catch (const RefusedRequest& e) { // its bounds moved under it, or no checkpoints: give it back
            if (gpu) {
                remove_gpu(job.id(), *gpu);
                job.place_worker(worker, -1);
                if (server_gpu)
                    remove_gpu(job.id(), *server_gpu);
            } else {
                release_pooled(job, worker, std::string("the growth step was refused: ") + e.what());
            }
            continue;
        }
        t.trial = worker;
        t.trial_server = server_gpu.has_value();
        t.baseline = *baseline;
    }
}

void ElasticScheduling::resize(
    ElasticJob& job, const protocol::ResizeJob& r, const EventActor& actor, const RemainingWork& remaining)
{
    const train::ResizeRequest asked = job.resolve(r, actor); // its bounds and slot, checked here only
    const bool on_workers = r.action == ResizeAction::AddWorker || r.action == ResizeAction::RemoveWorker;
    if (!tracked_.contains(job.id()) || (!on_workers && !servers_hold_gpus(job))) {
        job.resize(asked);
        return;
    }
    const std::string name = "job " + std::to_string(job.id());
    if (r.action == ResizeAction::RemoveServer) {
        job.resize(asked);
        const std::vector<int> held = server_gpus(job);
        if (held.size() > 1)
            remove_gpu(job.id(), held.back());
        return;
    }
    const WorkerId worker = asked.target.value_or(0);
    if (r.action == ResizeAction::RemoveWorker) {
        job.resize(asked);
        if (pooled_slot(job, worker)) { // its process goes back to the pool once the trainer no longer has it
            tracked_.at(job.id()).leaving[worker] = "removed by " + actor.line();
            return;
        }
        const std::vector<std::int32_t> placement = job.status().placement;
        if (static_cast<std::size_t>(worker) < placement.size() && placement[static_cast<std::size_t>(worker)] >= 0) {
            remove_gpu(job.id(), placement[static_cast<std::size_t>(worker)]);
            job.place_worker(worker, -1);
        }
        return;
    }
    if (r.action == ResizeAction::AddWorker && pooled_slot(job, worker)) {
        const bool joined = job.remote()->joined_slots()[static_cast<std::size_t>(worker)];
        if (!joined && !assign_pooled(job, worker, "added by " + actor.line()))
            throw RefusedRequest("no-pooled-worker",
                name
                    + " cannot grow: no fulcrum-worker waits idle in fulcrumd's pool (start one with "
                      "fulcrum-worker --pool)");
        try {
            job.resize(asked);
        } catch (const RefusedRequest& e) {
            if (!joined)
                release_pooled(job, worker, std::string("the resize was refused: ") + e.what());
            throw;
        }
        return;
    }
    const std::optional<int> gpu = add_gpu(job.id(), remaining);
    if (!gpu)
        throw RefusedRequest("no-free-gpu",
            r.action == ResizeAction::AddServer
                ? name + " cannot add a server: no GPU of the cluster has room for it"
                : name + " cannot grow: no GPU of the cluster has room for another of its workers");
    try {
        job.resize(asked);
    } catch (...) {
        remove_gpu(job.id(), *gpu);
        throw;
    }
    if (r.action == ResizeAction::AddWorker)
        job.place_worker(worker, *gpu);
}

} // namespace fulcrum::daemon
