#pragma once

// One fold over a job's typed events (common/job_event.h): what live status, replay's
// rebuilt status, the console and a job's membership read, so live and replay agree by
// construction.

#include "common/job_event.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fulcrum {

// An operator's hold on one worker, as a live job reports it in `worker-states`.
struct WorkerHold {
    bool pinned = false; // the pinned size is the batch size it then runs
    bool excluded = false;
    std::optional<double> excluded_until; // run clock
    double slowdown = 1; // an injected straggler's factor
    // Stalled (worker-stalled, until worker-recovered, or its exclusion, loss or removal):
    // when its batch started on the run clock, and the time that batch was predicted to take.
    std::optional<double> stalled_since;
    double stall_predicted_s = 0;

    bool operator==(const WorkerHold&) const = default;
};

// A job's state as its events leave it.
class JobFold {
public:
    JobFold() = default;
    // `members`: the worker slots that are members at the start (empty: all `workers`).
    JobFold(int workers, std::string policy, std::string sync_model, std::vector<bool> members = {});

    void apply(const JobEvent& e);
    // The job (re)starts with these names and members, a resumed one's from its checkpoint:
    // each slot keeps the iteration it has been a member since.
    void restart(std::string policy, std::string sync_model, std::vector<bool> members);

    bool paused() const { return paused_; }
    const std::string& policy() const { return policy_; }
    const std::string& sync_model() const { return sync_model_; }
    const std::vector<WorkerHold>& holds() const { return holds_; }
    const std::vector<bool>& members() const { return members_; }
    // The iteration from which `worker` has been a member (0 for a starting member).
    std::int64_t member_since(WorkerId worker) const;

    bool operator==(const JobFold&) const = default;

private:
    bool paused_ = false;
    std::string policy_;
    std::string sync_model_;
    std::vector<WorkerHold> holds_;
    std::vector<bool> members_;
    std::vector<std::int64_t> member_since_;
};

} // namespace fulcrum
