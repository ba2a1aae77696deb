#pragma once

#include "balance/batch_size_policy.h"
#include "common/error.h"

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

namespace fulcrum::balance {

// A refused operator request; the run goes on unchanged.
class OverrideError : public RefusedRequest {
public:
    using RefusedRequest::RefusedRequest;
};

struct ManagerOptions {
    // Apply a new allocation only when it shortens the predicted iteration time by at least
    // this fraction (0 = always apply). Avoids churning batch sizes for noise.
    double damping = 0;
    // Overrides the policy's own preference (CPU blocking, GPU non-blocking) when set.
    std::optional<bool> blocking;
};

// What the manager holds about one worker besides its batch size.
struct WorkerOverride {
    std::optional<std::int32_t> pinned;
    bool excluded = false;
    std::optional<double> excluded_until; // run clock; re-admitted at the first barrier after it
    // Elastic PS membership: a slot that is not (or no longer) a worker of the job gets no
    // batch and accepts no operator request. Not an operator state, so no event.
    bool member = true;

    bool idle() const { return excluded || !member; }
};

// The LB-BSP BatchSizeManager: runs one job's policy at every barrier and applies what an
// operator asked for on top: pinned workers keep their size and the policy balances the
// others around them (X preserved), excluded workers get nothing and their share goes to
// the others. Requests are checked when made and take effect at the next barrier; each
// becomes an event. Thread-safe for requests; next() is called by the trainer alone.
class BatchSizeManager {
public:
    BatchSizeManager(std::unique_ptr<BatchSizePolicy> policy, int workers, std::int32_t total_batch,
        std::vector<std::int32_t> batch_limits = {}, ManagerOptions options = {});

    // The policy in effect. Between barriers only (the trainer's thread, or before and after
    // the run): set_policy() replaces it at a barrier.
    const BatchSizePolicy& policy() const { return *policy_; }
    BatchSizePolicy& policy() { return *policy_; }
    bool blocking() const { return blocking_; }
    int workers() const { return workers_; }
    // The least batch a worker that trains gets (the scenario's training.min_batch; 1 by
    // default): the policy's sizes are split again with that floor, keeping X, and a pin
    // below it is refused. Where X cannot give every active worker that much (the members
    // of an elastic job grew), they share X evenly instead. Before initial().
    void set_min_batch(std::int32_t min_batch) { min_batch_ = std::max<std::int32_t>(1, min_batch); }
    std::int32_t min_batch() const { return min_batch_; }

    // Sizes for iteration 0, one per worker. Throws std::invalid_argument if the policy's
    // sizes break a worker's memory limit (the job cannot start).
    Allocation initial();
    // Workers' memory limits (x_o) as the job knows them, before initial(): a GPU worker's
    // measured on its device replaces its profile's. 0 leaves a worker's limit as it is.
    void set_batch_limits(const std::vector<std::int32_t>& limits);
    // After the barrier of `iteration` (observations of the workers that ran), the sizes for
    // the next one: one per worker of the job, 0 for an excluded worker.
    Allocation next(const std::vector<WorkerObservation>& observations, std::int64_t iteration, double now_s);

    // Operator overrides. Throw OverrideError for an unknown worker, a pin outside
    // [1, X - one sample per other worker] or above the worker's memory limit, or excluding
    // the last worker.
    void pin(WorkerId worker, std::int32_t batch_size, const EventActor& actor);
    void unpin(WorkerId worker, const EventActor& actor);
    void exclude(WorkerId worker, std::optional<double> for_s, const EventActor& actor);
    void include(WorkerId worker, const EventActor& actor);

    // Elastic PS: which slots are workers of the job at the start (call before initial()),
    // and changes between iterations (take effect at the next barrier). join/leave throw
    // OverrideError for an unknown slot, a slot already in that state, or the last worker.
    void start_with_members(const std::vector<bool>& members);
    void join(WorkerId worker);
    void leave(WorkerId worker);
    // Elastic PS with the batch per worker fixed (EPS's growth, weak scaling; scenario
    // elastic.batch_per_worker): from the next barrier on, and after every join or leave, X is
    // `batch_per_member` times the members. 0: X stays the job's total batch (LB-BSP).
    void follow_members(std::int32_t batch_per_member);
    // X as the next barrier splits it (the total batch, or the members' per follow_members).
    std::int32_t total_batch() const;

    // An operator's set-policy: from the next barrier on, `policy` sizes the workers (with
    // its own damping and blocking). The sizes in effect, pins and exclusions carry over; the
    // new policy learns from the observations it is given from then on. A second request
    // before that barrier replaces the first. Throws OverrideError("over-memory-limit") if
    // the policy's starting sizes break a worker's memory limit. Becomes a "policy-change"
    // event whose message is "OLD -> NEW" (policy names).
    // `spec_json` is the request's policy section as given: a checkpoint keeps it, so a
    // resumed job rebuilds the policy in effect rather than the scenario's.
    void set_policy(std::unique_ptr<BatchSizePolicy> policy, ManagerOptions options, const EventActor& actor,
        std::string spec_json = {});
    // The policy section of the last set-policy that took effect; empty: the scenario's.
    const std::string& policy_spec_json() const { return policy_spec_json_; }
    // A resumed job's manager, made with the policy a checkpoint names: that policy's section.
    void keep_policy_spec_json(std::string spec_json) { policy_spec_json_ = std::move(spec_json); }
    // A checkpoint between barriers (the trainer's thread): pins, exclusions, memberships,
    // the sizes in effect, a non-blocking policy's pending answer and the policy's own state.
    // False when the policy keeps no checkpoint. Requests not yet applied are not in it.
    bool save_state(StateWriter& out) const;
    // Into a manager made with the policy the checkpoint names (policy_spec_json).
    void load_state(StateReader& in);

    WorkerOverride state(WorkerId worker) const;
    std::vector<WorkerOverride> states() const; // every worker's, under one lock
    // Whether next() would change anything besides asking the policy: a request made, or a
    // timed exclusion run out by `now_s`. Lets a trainer without barriers (asp, ssp,
    // elastic-bsp) look for operator changes between events at no cost.
    bool changes_due(double now_s) const;
    // Events since the last call (overrides applied, phase changes, warnings), stamped with
    // the barrier at which they took effect.
    std::vector<JobEvent> take_events();

private:
    struct Request {
        enum class Kind { Pin, Unpin, Exclude, Include, Join, Leave } kind;
        WorkerId worker;
        std::int32_t batch_size = 0;
        std::optional<double> for_s;
        EventActor actor;
    };
    // A policy's answer indexed by worker id (the policy answers for the workers that ran).
    struct Proposal {
        std::vector<std::optional<std::int32_t>> size;
        std::vector<std::optional<double>> predicted;
        std::string decision;
    };
    Proposal index_by_worker(const Allocation& allocation, const std::vector<WorkerObservation>& observations) const;
    void check_worker(WorkerId worker) const;
    void check_member(WorkerId worker) const; // with mutex_ held
    void apply_requests(std::int64_t iteration, double now_s);
    void follow_membership(); // with mutex_ held: X from the members (follow_members)
    // The slots a policy's first sizes are for: every one, or the members when following them.
    std::vector<WorkerObservation> initial_askers(const std::vector<WorkerOverride>& states) const;
    Allocation assemble(const Proposal& proposal, std::int64_t iteration, double now_s);
    bool fits_limits(const std::vector<std::int32_t>& sizes) const;
    double predicted_time(const std::vector<std::int32_t>& sizes, const std::vector<double>& speeds,
        const std::vector<double>& comm) const;
    void emit(std::int64_t iteration, double now_s, EventKind kind, std::optional<WorkerId> worker, std::string message,
        const EventActor& actor = EventActor::system());

    std::unique_ptr<BatchSizePolicy> policy_;
    int workers_;
    std::int32_t total_batch_; // guarded by mutex_ once follow_members() is in effect
    std::int32_t batch_per_member_ = 0;
    std::vector<std::int32_t> limits_;
    ManagerOptions options_;
    bool blocking_;

    std::int32_t min_batch_ = 1;
    mutable std::mutex mutex_; // guards overrides_ (as seen by requests), requests_, policy_request_, events_
    std::vector<WorkerOverride> overrides_; // as the next barrier will see them (requests validated against this)
    std::vector<WorkerOverride> applied_; // as in effect now
    std::vector<Request> requests_;
    struct PolicyRequest {
        std::unique_ptr<BatchSizePolicy> policy;
        ManagerOptions options;
        EventActor actor;
        std::string spec_json;
    };
    std::optional<PolicyRequest> policy_request_;
    std::vector<JobEvent> events_;

    std::vector<std::int32_t> current_; // sizes in effect, one per worker
    std::optional<Proposal> pending_;
    std::string policy_spec_json_; // non-blocking: the answer computed during the last iteration
};

} // namespace fulcrum::balance
