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

// `events`: the run's events in the order they were recorded. A checkpoint-resumed event at
// iteration c ends the attempt before it past c (its rows past c were set aside), so only
// the newest attempt's changes count. `link` is the server links' eq. 5 model; without it
// the link contention is not followed (a store of a job alone on its links has none).
// `until_s`: the end of the last row the crashed attempt recorded past the checkpoint.
train::JobControl::RecordedShares recorded_shares(std::span<const EventRecord> events, JobId job,
    std::int64_t checkpoint_iteration, int workers, std::optional<train::JobControl::LinkModel> link, double until_s);

} // namespace fulcrum::run
