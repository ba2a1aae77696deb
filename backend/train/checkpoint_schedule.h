#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace fulcrum::train {

class JobCore;

// When an engine checkpoints (config's checkpoint_every and checkpoint_seconds): every so
// many counts (barriers, or updates for the free-running models), every so many seconds of
// wall time, and at a stop; and, when the policy keeps no checkpoint, saying so once.
// Shared by both engines so their rules cannot drift apart.
class CheckpointSchedule {
public:
    explicit CheckpointSchedule(JobCore& core);

    // Configured, and the policy keeps checkpoints (as far as known).
    bool on() const;
    // At a segment's start: the wall-time interval starts now; `count`, when given, counts as
    // checkpointed if nothing was yet (no checkpoint right at the start of a segment).
    void start(std::optional<std::int64_t> count);
    // Resumed from a checkpoint taken at `count`.
    void resumed_at(std::int64_t count) { last_ = count; }
    // Whether one is due at `count` (`forced`: the run stops).
    bool due(std::int64_t count, bool forced) const;
    // Hands `state`, taken at `count` after iteration `at` (run clock `now`), to the
    // observer; no state: the policy keeps none, said once as an event.
    void take(std::optional<std::string> state, std::int64_t count, std::int64_t at, double now);
    // Whether the last checkpoint was taken at `count`.
    bool taken_at(std::int64_t count) const { return last_ == count; }

private:
    JobCore& core_;
    bool off_ = false; // the policy keeps none
    std::optional<std::int64_t> last_; // the count of the last checkpoint taken or resumed from
    std::chrono::steady_clock::time_point last_at_;
};

} // namespace fulcrum::train
