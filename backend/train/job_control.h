#pragma once

#include "balance/batch_size_manager.h"
#include "sync/sync_spec.h"
#include "train/batch_release.h"
#include "train/elastic_resize.h"

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace fulcrum::train {

// One job's control mailbox, the same for every trainer: what an operator (or the system)
// asks of a running job, from any thread. Each request is checked when made (a refusal
// throws RefusedRequest with a code and the job is unchanged) and takes effect at the
// trainer's next safe point: a barrier for the BSP family, between two events of the
// asynchronous clock for the free-running models. Each change becomes an event there.
//
// Pins, exclusions and policy changes are the BatchSizeManager's business: it already
// validates them against the job and queues them for its next allocation, so this
// mailbox hands them on. Stragglers, pauses, sync-model switches and resizes wait here.
class JobControl {
public:
    // `switchable(spec)` throws RefusedRequest when the trainer cannot run `spec` from its
    // next safe point ("sync-model-not-switchable", "illegal-value"). `release`: where an
    // excluded or removed worker's batch under way is given up (none: it finishes).
    JobControl(balance::BatchSizeManager& manager, int workers, const sync::SyncSpec& sync,
        std::function<void(const sync::SyncSpec&)> switchable, BatchRelease* release = nullptr);

    // The operator's requests. An exclusion also gives up the worker's batch under way, so a
    // barrier it holds goes on without it (BatchRelease); so does a remove-worker resize.
    void pin(WorkerId worker, std::int32_t batch_size, const EventActor& actor);
    void unpin(WorkerId worker, const EventActor& actor);
    void exclude(WorkerId worker, std::optional<double> for_s, const EventActor& actor);
    void include(WorkerId worker, const EventActor& actor);
    // From the next safe point on `policy` sizes the workers (BatchSizeManager::set_policy).
    // Refused ("policy-not-applicable") while the job runs, or is switching to, a sync model
    // with no barrier to balance at (asp, ssp, elastic-bsp), unless the policy is uniform.
    void set_policy(std::unique_ptr<balance::BatchSizePolicy> policy, balance::ManagerOptions options,
        const EventActor& actor, std::string spec_json = {});
    // Drills and demos: from the next safe point the worker's batches take `slowdown` times
    // longer (1 clears it). Refused: "unknown-worker", "illegal-value" (outside 1 to 1000).
    void inject_straggler(WorkerId worker, double slowdown, const EventActor& actor);
    // Refused: "illegal-value" (the spec does not fit the job), "policy-not-applicable" (to a
    // free-running model while a policy other than uniform is in effect or asked for), or
    // what the trainer's `switchable` says.
    void set_sync_model(const sync::SyncSpec& spec, const EventActor& actor);
    // Holds the job at its next safe point until resume() (or a stop request).
    void pause(const EventActor& actor);
    void resume(const EventActor& actor);
    // Elastic PS: a server or worker change before the next iteration (BSP family).
    void request_resize(ResizeRequest request);
    // An event from outside the trainer (an operator's freeze, the elastic scheduler's),
    // recorded at the next safe point with the job's iteration and clock.
    struct Note {
        EventKind kind = EventKind::Warning;
        std::string message;
        EventActor actor;
        std::optional<WorkerId> worker; // the worker it is about, if one
    };
    void record(Note note);
    // The cluster the job runs on changed (fulcrumd's cluster-state message, in which the
    // job is `cluster_job`): handed to the observer's on_cluster at the next safe point, with
    // the job's iteration and clock. Only the newest state before a safe point is kept.
    struct ClusterChange {
        JobId cluster_job = 0;
        std::string state;
    };
    void record_cluster(ClusterChange change);
    // The cluster's time-sharing of each worker's GPU (fulcrumd): how many live jobs run on
    // it, 1 when the worker has it alone. The modelled clocks (virtual, paced) stretch the
    // worker's compute time by it from the next safe point; the real mode measures sharing.
    void set_gpu_sharing(std::vector<int> jobs_per_gpu);
    // The live jobs whose pushes and pulls cross each worker's server link (fulcrumd's
    // cluster, the worker's own job included; 1: alone), with the link's eq. 5 parameters
    // (Wang et al.: T = a + k·b·M + (k−1)·η·M for k contending transfers of M bytes). The
    // modelled clocks stretch the worker's communication by T(k) / T(1) for the job's own
    // model size, from the next safe point.
    struct LinkModel { // eq. 5's parameters of a server link
        double a = 0, b = 0, eta = 0;
        bool operator==(const LinkModel&) const = default;
    };
    struct LinkContention {
        std::vector<int> jobs;
        LinkModel link;
        bool operator==(const LinkContention&) const = default;
    };
    void set_link_contention(LinkContention contention);
    // A job resumed from a checkpoint after a crash: what its cluster was (GPU sharing, link
    // contention) at the checkpoint, and the changes its first attempt recorded past it. The
    // trainer follows these instead of the live cluster until its run clock reaches
    // `until_s`, the end of the last row the first attempt recorded, so that it records those
    // rows again exactly; from then on the live cluster's newest state applies.
    struct GpuSharing {
        std::vector<int> jobs_per_gpu;
        bool operator==(const GpuSharing&) const = default;
    };
    struct RecordedShares {
        struct Change {
            std::int64_t at = 0; // the safe point's iteration (an update's, free-running)
            std::optional<GpuSharing> gpu;
            std::optional<LinkContention> link;
            double time_s = 0; // the run clock at that safe point
        };
        GpuSharing gpu; // at the checkpoint
        std::optional<LinkContention> link; // at the checkpoint; unset: no link model known
        std::vector<Change> changes; // past the checkpoint, in order
        double until_s = 0;
    };
    void follow_recorded_shares(RecordedShares shares);
    // The run clock to which the shares asked for last are followed (the checkpoint-resumed
    // event says it, so that a later resume knows how far this attempt repeated the last).
    std::optional<double> recorded_until() const;
    // A trainer whose batch sizes no policy decides (federated rounds): every set-policy is
    // refused ("policy-not-applicable") with `why`.
    void refuse_policies(std::string why);

    // What is asked or in effect, for a status display (any thread).
    bool paused() const;
    double straggler_slowdown(WorkerId worker) const; // as last requested
    std::vector<double> straggler_slowdowns() const; // every worker's, as last requested
    std::string sync_model() const; // in effect, as sync::describe gives it
    int servers() const; // the job's parameter servers (shards) in effect
    balance::WorkerOverride worker(WorkerId worker) const { return manager_.state(worker); }
    // Every worker's: a status of hundreds of workers reads them at once.
    std::vector<balance::WorkerOverride> workers() const { return manager_.states(); }

    // The trainer's side, at its safe points.
    struct Slowdown {
        WorkerId worker = 0;
        double factor = 1;
        EventActor actor;
    };
    struct SyncChange {
        sync::SyncSpec spec;
        EventActor actor;
    };
    // The mailbox: one queue of the typed requests asked since the trainer last took them.
    // A change (a straggler, a resize, a note) is kept with every other of its kind, in
    // order; a state (a sync model asked for, the cluster, its GPU sharing and link
    // contention, the shares to follow) replaces the one before it.
    using Request = std::variant<Slowdown, SyncChange, ResizeRequest, Note, ClusterChange, GpuSharing, LinkContention,
        RecordedShares>;
    // Every request of kind T, in the order asked (the changes).
    template <class T> std::vector<T> take();
    // The request of kind T, if one was asked (the states).
    template <class T> std::optional<T> take_one();
    // The sync model, policy and stragglers now in effect (at the start, after a switch, or
    // read from a checkpoint).
    void sync_in_effect(const sync::SyncSpec& spec);
    void policy_in_effect(const std::string& name);
    void slowdowns_in_effect(const std::vector<double>& slowdowns);
    void servers_in_effect(int servers);
    // Returns the requester when a pause is asked for, without waiting.
    std::optional<EventActor> pause_requested() const;
    // Blocks while paused, until resume() or `stop`; returns the seconds held and who resumed.
    std::pair<double, EventActor> hold(const std::atomic<bool>* stop);

private:
    void check_worker(WorkerId worker) const;
    template <class T> void replace(T state); // under mutex_
    template <class T> bool asked() const; // under mutex_

    balance::BatchSizeManager& manager_;
    const int workers_;
    const std::function<void(const sync::SyncSpec&)> switchable_;
    BatchRelease* const release_;

    mutable std::mutex mutex_;
    int servers_ = 1;
    std::vector<double> slowdown_view_;
    std::string sync_description_;
    bool free_running_ = false; // the sync model in effect has no barrier per iteration
    std::optional<bool> free_running_requested_; // a switch asked for, not yet made
    bool uniform_policy_ = true; // in effect
    std::optional<bool> uniform_requested_; // a set-policy asked for, not yet applied
    std::string policies_refused_; // why no policy applies to this trainer (empty: they do)
    std::vector<Request> mailbox_;
    std::optional<double> recorded_until_;
    bool pause_requested_ = false;
    EventActor pause_actor_;
    std::condition_variable pause_cv_;
};

} // namespace fulcrum::train
