#pragma once

#include "common/error.h"
#include "common/job_event.h"
#include "common/records.h"
#include "common/resize_action.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fulcrum::train {

using ResizeAction = fulcrum::ResizeAction; // common/resize_action.h: one name table for all

struct ResizeRequest {
    ResizeAction action = ResizeAction::AddWorker;
    // add-worker: the worker slot that joins (default: the lowest free one); remove-worker:
    // the worker that leaves (default: the highest-numbered member); remove-server: the
    // server (default: the last). Unused by add-server.
    std::optional<int> target;
    EventActor actor = EventActor::elastic();
    std::string reason; // why it was asked (the elastic scheduler's), added to the event
    // The job's pause on its modelled run clock for this change, instead of the scenario's
    // (a kill-restart's changes: the restart's pause on the first, none on the others).
    std::optional<double> pause_s;
    // fulcrumd's number for this ask of the job, echoed by the event that answers it
    // (JobEvent::answers), so its record of what is asked and not yet made drops exactly
    // this one. 0: not fulcrumd's (a scenario's own resize).
    std::uint64_t ticket = 0;
};

struct ScheduledResize {
    std::int64_t before_iteration = 0;
    ResizeRequest request;
};

// Elasticity of one job. When enabled, the training set is split into per-worker data
// shares (the EPS chunking), and `workers` in the trainer's configuration are the slots a
// worker may occupy: the first `initial_workers` are members at the start.
struct ElasticSpec {
    int initial_workers = 0; // 0 = every slot
    int min_workers = 1; // a resize never leaves fewer members
    int max_workers = 0; // nor more (0: every slot)
    std::vector<ScheduledResize> resizes;
    bool partition_data = false; // split the data even without resizes (a static EPS job)
    ResizePauses pause_s; // each change's pause on the modelled run clock (virtual, paced)
    // Weak scaling (EPS's growth): each member computes this many samples, so X follows the
    // members and the job ends once it has taken its iterations x total batch samples, however
    // many barriers that takes. 0: X stays the total batch and the job runs its iterations.
    int batch_per_worker = 0;

    bool enabled() const { return partition_data || initial_workers > 0 || !resizes.empty(); }
};

// What one change did and how long it took on the trainer's thread.
struct ResizeOutcome {
    ResizeAction action = ResizeAction::AddWorker;
    int target = 0; // the worker slot or server index
    std::int64_t moved_keys = 0; // parameters handed between servers
    std::int64_t moved_samples = 0; // training samples handed between workers
    std::int64_t reactivated_samples = 0; // inactive backups switched back on
    int servers = 0, workers = 0; // after the change
    double seconds = 0;
    std::string describe() const;
};

// A refused change: the job goes on unchanged.
class ResizeError : public RefusedRequest {
public:
    using RefusedRequest::RefusedRequest;
};

// What an Elastic PS resize is checked against: a job's worker slots and which of them are
// members, its servers, and the bounds of its elastic section. The trainer's JobState and
// fulcrumd's record of a job (JobRuntime) each describe their job by one and ask
// resolve_resize, whoever asked for the change (an operator, the scheduler, a scenario).
struct Membership {
    std::int64_t job = 0;
    std::vector<bool> members; // one per worker slot
    int servers = 1;
    std::int64_t parameters = 0; // the keys the servers split; 0: unknown here, add-server unchecked
    int min_workers = 1;
    int max_workers = 0; // 0: every slot

    int count() const;
    void apply(const ResizeRequest& resolved); // the change made (its target filled in)
};

// The request with its default target filled in (add-worker: the lowest free slot;
// remove-worker: the highest member; remove-server: the last). Throws ResizeError naming the
// bound or slot, checked in this order: for add-worker a named slot that does not exist
// (`unknown-worker`), the bound (`above-max-workers`), then the slot (`no-free-slot`,
// `already-member`); for remove-worker the slot
// (`unknown-worker`, `not-a-member`), then `last-worker` and `below-min-workers`; for servers
// `no-keys`, `unknown-server` and `last-server`.
ResizeRequest resolve_resize(const Membership& job, const ResizeRequest& request);

} // namespace fulcrum::train
