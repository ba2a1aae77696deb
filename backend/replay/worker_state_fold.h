#pragma once

#include "common/records.h"

#include <optional>
#include <span>
#include <vector>

namespace fulcrum::replay {

// An operator's hold on one worker, as a live job reports it in `worker-states`.
struct WorkerHold {
    bool pinned = false; // the pinned size is the batch size it then runs
    bool excluded = false;
    std::optional<double> excluded_until; // run clock
    double slowdown = 1; // an injected straggler's factor

    bool operator==(const WorkerHold&) const = default;
};

// Rebuilds the workers' holds from a job's recorded events: pin, unpin, exclude, include,
// readmit, straggler-injected and straggler-cleared. The run store keeps no separate
// state table, so an exclusion's time limit and a straggler's factor are read back from
// the event text the batch-size manager and the trainer write ("excluded for 30 s",
// "batches take 4.000000x longer"); a text without them leaves the limit unset and the
// factor unknown (reported as 1).
std::vector<WorkerHold> fold_worker_events(std::span<const EventRecord> events, int workers);

} // namespace fulcrum::replay
