#pragma once

#include "common/named_values.h"
#include "sync/barrier_window.h"

#include <deque>
#include <string>
#include <vector>

namespace fulcrum {
class JsonFields;
}

namespace fulcrum::sync {

enum class SyncType { Bsp, Asp, Ssp, Backup, ElasticBsp };

inline constexpr NameTable<SyncType, 5> kSyncTypeNames { {
    { SyncType::Bsp, "bsp" },
    { SyncType::Asp, "asp" },
    { SyncType::Ssp, "ssp" },
    { SyncType::Backup, "backup" },
    { SyncType::ElasticBsp, "elastic-bsp" },
} };

inline std::string_view to_string(SyncType type)
{
    return name_of(kSyncTypeNames, type);
}
inline std::optional<SyncType> parse_sync_type(std::string_view name)
{
    return value_named(kSyncTypeNames, name);
}

// The two families a trainer runs: a barrier closes every iteration (bsp, backup), or
// workers run free of a per-iteration barrier (asp, ssp, elastic-bsp).
inline bool closes_every_iteration(SyncType type)
{
    return type == SyncType::Bsp || type == SyncType::Backup;
}

// A job's synchronization model: BSP (with LB-BSP's batch sizing, a policy matter), ASP,
// SSP with staleness bound s, BSP with k backup workers (the first n - k gradients of
// each iteration are used), or ElasticBSP with a barrier-window algorithm over R
// predicted iterations.
struct SyncSpec {
    SyncType type = SyncType::Bsp;
    int staleness = 5; // ssp: a worker may run at most s iterations ahead of the slowest
    int backups = 1; // backup: k
    int range = 15; // elastic-bsp: R
    std::string algorithm = "exact"; // elastic-bsp: gridscan, fullgridscan, zipline, exact
    int history = 5; // elastic-bsp: recent intervals averaged to predict end times
};

// The names of kSyncTypeNames, in its order (for a parser's list of expected values).
const std::vector<std::string>& sync_types();
// Every sync model with what it does (list-capabilities).
std::vector<CatalogueEntry> sync_catalogue();
// Reads the sync model under `key` of `owner`: a name ("asp") or an object
// ({"type": "ssp", "staleness": 3}). Throws JsonFieldError naming the field.
SyncSpec parse_sync_spec(const JsonFields& owner, std::string_view key);
// Throws std::invalid_argument naming the field for a bad value.
void validate(const SyncSpec& spec, int workers);
// "ssp(s=5)", "backup(k=2)", "elastic-bsp(R=15, exact)", ...
std::string describe(const SyncSpec& spec);

// ElasticBSP's prediction: worker i, free from `start[i]` on, ends its next R iterations
// at start + r * (mean of its recent iteration intervals).
EndTimes predict_end_times(
    const std::vector<double>& start, const std::vector<std::deque<double>>& intervals, int range);

} // namespace fulcrum::sync
