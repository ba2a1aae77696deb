#pragma once

#include "train/comm_gate.h"
#include "train/job_core.h"

#include <atomic>
#include <optional>

namespace fulcrum::train {

// The virtual and paced modes' timing, one piece for both engines (the barrier engine's
// ModelledBarrierClock and the free-running engine's ModelledClock): what fulcrumd's
// communication scheduler grants a transfer, what a worker's batch takes on the modelled
// clock, and the pacing of the run clock to the wall or to fulcrumd's shared clock.

// Where fulcrumd's communication scheduler decides: when `transfer` starts and how much each
// of its workers' pushes and pulls are stretched by what they start beside. None otherwise.
std::optional<CommGrant> ask_for_links(
    const JobCore& core, const CommTransfer& transfer, const std::atomic<bool>* stop);

// Worker i's batch of row.batch_size from run time t on its performance model: its compute
// (slowed by an injected straggler and a time-shared GPU), its pushes and pulls (`alone_s`
// on its links alone: held and stretched as `grant` says for the r-th of its transfer's
// workers, else stretched by the live jobs on its link, eq. 5), its CPU and memory shares
// and device use, and its end. Returns the device memory the batch used.
double time_modelled_batch(const JobCore& core, IterationRecord& row, std::size_t i, double t, double alone_s,
    const std::optional<CommGrant>& grant, std::size_t r);

// After run time t: the paced mode waits for the wall; fulcrumd's virtual jobs for its
// shared clock (no other job can still have an earlier event).
void pace_to(JobCore& core, double t, const std::atomic<bool>* stop);

// The paced mode at a finite speed: the run clock follows the wall clock, so a person's
// exclusion can come while a modelled batch is under way and give it up (issue 42 item 2).
bool paced_in_wall_time(JobCore& core);

} // namespace fulcrum::train
