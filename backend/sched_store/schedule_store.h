#pragma once

#include "common/records.h"
#include "sched/simulator.h"

#include <filesystem>
#include <string>

namespace fulcrum::sched_store {

// Appends a simulated schedule to a run store (created if missing) as a new run in mode
// "simulated": every job (finished, rejected or never ran, with the reason) in sched_jobs,
// the per-GPU compute spans and the all-reduce spans in sched_spans, and the metrics JSON
// as the run's summary. `description` is the run's scenario text (what was simulated).
// Throws InputError naming the path if it cannot be written or is not a run store.
RunId write_schedule(const std::filesystem::path& path, const std::string& name, const std::string& description,
    std::uint64_t seed, const sched::SimulationResult& result);

} // namespace fulcrum::sched_store
