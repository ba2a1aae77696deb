#pragma once

// What a crashed job's store says its cluster was: the GPU sharing and link contention each
// attempt was told (gpu-shared, gpu-exclusive, link-contended and link-free events), so
// that the attempt resumed from a checkpoint records the rows its first attempt recorded
// past that checkpoint exactly as they were, whatever the live cluster is now.

#include "common/records.h"
#include "train/job_control.h"

#include <cstdint>
#include <optional>
#include <span>

namespace fulcrum::run {

// Where a checkpoint was taken: its iteration and run clock.
struct CheckpointPosition {
    std::int64_t iteration = 0;
    double time_s = 0;
};

// `events`: the run's events in the order they were recorded. Each attempt resumed from a
// checkpoint repeated the cluster of the attempt before it up to a reach its
// checkpoint-resumed event says; what the earlier attempt recorded past both that
// checkpoint and that reach is dropped, since no kept row saw it. `link` is the server
// links' eq. 5 model; without it the link contention is not followed. `until_s`: the end of
// the last row any attempt recorded past `checkpoint` (set aside or not).
train::JobControl::RecordedShares recorded_shares(std::span<const EventRecord> events, JobId job,
    const CheckpointPosition& checkpoint, int workers, std::optional<train::JobControl::LinkModel> link,
    double until_s);

} // namespace fulcrum::run
