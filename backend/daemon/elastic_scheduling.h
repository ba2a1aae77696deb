#pragma once

#include "common/job_event.h"
#include "daemon/cluster_book.h"
#include "daemon/daemon_options.h"
#include "daemon/worker_pool.h"
#include "protocol/messages.h"
#include "sched/eps_rules.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fulcrum::daemon {

class ElasticJob;

// fulcrumd's live elastic scheduling (--elastic eps or kill-restart): the Elastic Parameter Server's rules,
// the ones fulcrum-sim --elastic eps follows (sched/eps_rules.h), applied to running jobs
// through their trainers' resizes and kept in the cluster book, one GPU per member worker.
// - A newcomer that does not fit takes workers from running elastic jobs past their
//   early-feedback point (beyond their request first, never below elastic.min_workers),
//   and an elastic newcomer starts smaller when only part of its request is free.
// - Every round, while no job waits, each elastic job in turn (one later each round) gets
//   one worker on an idle GPU, up to elastic.max_workers. Its pace on its own run clock over
//   the observed iterations after the step is compared with the pace before: a step that
//   made it slower is rolled back, and the job grows no further.
// A job whose parameter servers hold GPUs (placement.server_gpus, as fulcrum-sim's parameter-
// server jobs hold slots) grows, shrinks and rolls back by a worker and a server at once, its
// servers' GPUs counted with its workers' (EPS's own steps, sched/eps_rules.h with servers).
// Every change is the trainer's add-worker or remove-worker event, recorded in the job's
// run store, with the scheduler as actor and its reason; under kill-restart each change is
// carried out by a checkpoint, a stop and a restart from it (ElasticJob::restart).
// A real-mode job whose workers are all remote ("remote": true) takes its workers from the
// worker pool instead of the GPUs: fulcrum-worker processes started with --pool. Each of its
// members gets a pooled process (worker-assigned, before its first task); a slot the trainer
// no longer has gives its process back at the next tick (worker-released); a member whose
// process died gets another. The same rules decide for both kinds, each within its own kind.
// Under --elastic static the pool still feeds such jobs, first come first served: a job
// starts when its whole request idles in the pool, and keeps what it started with.
// Not thread-safe: the cluster core (JobQueue) calls it on its thread only. It sees each job
// as an ElasticJob, so the ClusterCore tests drive it with jobs of their own on a test clock.
class ElasticScheduling {
public:
    using Clock = std::chrono::steady_clock;
    ElasticScheduling(const DaemonOptions::Elastic& options, ClusterBook& book, WorkerPool& pool);

    // eps or kill-restart: the scheduler resizes jobs (in place, or by restarting them).
    bool active() const { return options_.policy != sched::ElasticPolicy::StaticFifo; }
    sched::ElasticPolicy policy() const { return options_.policy; }
    // An operator's set-cluster-policy. To eps: the running jobs it sizes are taken in as
    // they are (the book then follows their members); to static: every job keeps its size.
    void set_policy(sched::ElasticPolicy policy, const std::vector<ElasticJob*>& running);
    // An elastic scenario (not an external job): its workers run in fulcrumd, in fulcrum-worker
    // processes fed by the pool, or some in each.
    static bool resizable(const ElasticJob& job);
    // A job whose size EPS decides: a resizable job under eps or kill-restart.
    bool sizes(const ElasticJob& job) const { return active() && resizable(job); }
    // A resizable job with remote workers: the worker pool feeds its remote slots (and the
    // cluster's GPUs its local ones), under every policy: under static it takes its whole
    // request or waits (admit_whole).
    bool fed_by_pool(const ElasticJob& job) const;
    // Worker slot `worker` of a job fed by the pool is a remote one: a pooled process takes it.
    static bool pooled_slot(const ElasticJob& job, WorkerId worker);
    // Slots of one kind (pooled, or local) among a job's first `first`.
    static int slots_of_kind(const ElasticJob& job, int first, bool pooled);
    // The pooled processes a job fed by the pool is assigned when it starts with its first
    // `first` slots as members: one for each remote slot among them that no process joined.
    static int processes_to_start(const ElasticJob& job, int first);
    // --elastic static, a job fed by the pool: its whole request (`request.workers` members)
    // when a pooled process idles for each remote slot among them and a GPU has room for each
    // local one, else nothing (it waits, and the pooled jobs behind it wait too).
    std::optional<int> admit_whole(const ElasticJob& job, const GpuDemand& request) const;
    // The workers such a job asks for: its elastic.initial_workers within its bounds.
    static int requested_workers(const ElasticJob& job);

    // The workers a queued job starts with now, and the GPUs its servers hold: `request` when
    // they fit; fewer, down to its elastic.min_workers and one server GPU, in proportion
    // (sched::eps_start_size), when EPS sizes it; nothing while it must wait. Under eps it
    // first takes workers of running jobs (`running`) past early feedback when that lets it
    // start. A job fed by the pool counts idle pooled processes (and its own joined ones), not
    // GPUs; those it takes from others come back to the pool at their next barrier.
    std::optional<sched::SlotCount> admit(ElasticJob& newcomer, const GpuDemand& request,
        const std::vector<ElasticJob*>& running, const RemainingWork& remaining);
    // A job EPS sizes has started (placed) or ended. A job fed by the pool gets a pooled
    // process for each of its members (under static too).
    void started(ElasticJob& job);
    void ended(JobId job);
    // Under static, between the jobs' barriers: a pooled job gives back the processes of the
    // slots an operator's resize took from it. A process that died is not replaced.
    void follow_pool(const std::vector<ElasticJob*>& running);
    // Growth trials judged, the book kept true to the trainers' members; a growth round when
    // one is due and `queue_empty`.
    void tick(const std::vector<ElasticJob*>& running, bool queue_empty, const RemainingWork& remaining,
        Clock::time_point now);
    // The ticks' time changes base (wall time, or the virtual jobs' shared clock, as a time
    // point since the clock's epoch): the next growth round is a round from `now`.
    void rebase(Clock::time_point now);
    // An operator's resize-job of a resizable job (under static too): an added worker needs an
    // idle GPU (else RefusedRequest "no-free-gpu") or, fed by the pool, an idle pooled process
    // (else "no-pooled-worker"); a removed one frees its GPU or process. Other jobs' resizes go
    // straight to the job.
    void resize(ElasticJob& job, const protocol::ResizeJob& r, const EventActor& actor, const RemainingWork& remaining);

    // Tenants' quotas (the cluster file's tenants section; issue 47): what the running jobs of
    // each tenant hold of the cluster's GPUs, each job counting every GPU it holds.
    const sched::TenantQuotas& quotas() const { return book_.spec().tenants; }
    // Distinct GPUs per tenant, from the book (a job placed earlier in this pass counts): a
    // GPU two jobs of one tenant share counts once, one two tenants share counts for each.
    // A job's tenant comes from `tenant_of` (JobQueue's jobs), else from `running`.
    sched::TenantHeld held(const std::vector<ElasticJob*>& running) const;
    void set_tenant_of(std::function<std::string(JobId)> tenant_of) { tenant_of_ = std::move(tenant_of); }
    // Reclaim (sched::reclaim_plan): GPUs borrowers hold beyond their quotas come back for a
    // newcomer within its tenant's quota that asks for `wanted` and starts with no fewer
    // than `least`. Under eps and kill-restart their elastic jobs past early feedback shrink,
    // never below elastic.min_workers, a reason naming both tenants; rigid borrowers keep
    // theirs (rigid_borrowers wait) or are named in the result (requeue), latest-started
    // first, for the caller to stop at a checkpoint and queue again.
    std::vector<JobId> reclaim_for(const ElasticJob& newcomer, const GpuDemand& request, int wanted, int least,
        const std::vector<ElasticJob*>& running);

    // How many times the book changed so far (the cluster stream is published after one).
    std::uint64_t changes() const { return changes_; }

private:
    std::optional<int> add_gpu(JobId job, const RemainingWork& remaining);
    // Fed by the pool: the idle pooled process that takes `worker`'s slot (told before its
    // first task), described for the reasons ("pooled worker on HOST"); nothing when none idles.
    std::optional<std::string> assign_pooled(ElasticJob& job, WorkerId worker, const std::string& reason);
    void release_pooled(ElasticJob& job, WorkerId worker, const std::string& reason);
    void remove_gpu(JobId job, int gpu);
    // Its servers hold GPUs (placement.server_gpus), which EPS resizes with its workers.
    static bool servers_hold_gpus(const ElasticJob& job);
    // The GPUs its parameter servers hold: its GPUs that none of its workers is placed on.
    std::vector<int> server_gpus(const ElasticJob& job) const;
    // The server GPUs its servers in effect call for: placement.server_gpus, moved by every
    // server added or removed since its start.
    static int wanted_server_gpus(const ElasticJob& job);
    void note_change() { ++changes_; }
    struct Tracked {
        bool capped = false; // a growth step was rolled back
        std::optional<WorkerId> trial; // the worker a growth step added, being judged
        bool trial_server = false; // the step added a server too (servers_hold_gpus)
        double baseline = 0; // iterations per second before the step
        bool feedback = false; // past its early-feedback point
        std::map<WorkerId, std::string> leaving; // fed by the pool: why each removed slot goes
    };
    bool may_release(ElasticJob& job, Tracked& t) const;
    void note_feedback(ElasticJob& job, Tracked& t) const; // once, as an early-feedback event
    // EPS's release for a newcomer short of GPUs (`pooled` false) or of pooled processes:
    // `wanted` and `minimum` of that kind, `free` of them idle.
    void release_for(const ElasticJob& newcomer, bool pooled, int wanted, int minimum, int free,
        const std::vector<ElasticJob*>& running);
    // EPS's release among `jobs` (eps_release): what each gives up so that `free` idle grow to
    // `wanted`, its highest-numbered members of that kind leaving with the reason `why(job)`;
    // nothing when even all of it would leave fewer than `minimum`. How many were freed.
    // `dry_run`: how many it would free, nothing asked of the jobs.
    int release_among(const std::vector<ElasticJob*>& jobs, bool pooled, int wanted, int minimum, int free,
        const std::function<std::string(const ElasticJob&)>& why, bool dry_run = false);
    // A rigid borrower that a requeue can stop at a checkpoint (JobRuntime::requeue's terms).
    static bool requeueable(const ElasticJob& job);
    std::optional<sched::SlotCount> admit_pooled(
        ElasticJob& newcomer, const GpuDemand& request, const std::vector<ElasticJob*>& running, bool elastic);
    // Its first `members` slots fit: a pooled process for each remote one, a GPU for each local one.
    bool fits(const ElasticJob& job, const GpuDemand& request, int members) const;
    static int members_of_kind(const ElasticJob& job, bool pooled); // its members in slots of one kind
    std::string label() const; // the policy's name: the start of every reason
    // Every pooled process `holder` holds may also serve a job of `tenant`.
    bool serves(const ElasticJob& holder, const std::string& tenant) const;
    EventActor actor() const; // "scheduler (eps)", "scheduler (kill-restart)"
    // In place (eps), or by a checkpoint, a stop and a start from it (kill-restart). Throws
    // RefusedRequest.
    void carry_out(ElasticJob& job, const std::vector<protocol::ResizeJob>& changes, const std::string& reason);
    // Removes the workers and `servers` of its servers (its last ones), their GPUs freed now.
    void shrink(ElasticJob& job, const std::vector<WorkerId>& workers, int servers, const std::string& reason);
    void judge(ElasticJob& job, Tracked& t);
    // `why`: the reason a pooled process given to a member without one is told (default:
    // the member has none, as after its process died).
    void reconcile(ElasticJob& job, const RemainingWork& remaining, const std::string& why = {});
    void reconcile_pool(ElasticJob& job, const std::string& why, bool give_missing);
    void grow_round(const std::vector<ElasticJob*>& running, const RemainingWork& remaining);

    DaemonOptions::Elastic options_;
    ClusterBook& book_;
    WorkerPool& pool_;
    std::map<JobId, Tracked> tracked_;
    std::size_t round_ = 0;
    std::uint64_t changes_ = 0;
    Clock::time_point next_round_;
    std::function<std::string(JobId)> tenant_of_;
};

} // namespace fulcrum::daemon
