#include "sync/sync_spec.h"

#include "common/json_fields.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace fulcrum::sync {

SyncSpec parse_sync_spec(const JsonFields& owner, std::string_view key)
{
    SyncSpec spec;
    const json::value* value = owner.find(key);
    if (!value)
        return spec;
    if (value->is_string()) {
        spec.type = *parse_sync_type(owner.string_or(key, "bsp", sync_types()));
        return spec;
    }
    const JsonFields y(*value, owner.at(key));
    spec.type = *parse_sync_type(y.string_or("type", "bsp", sync_types()));
    spec.staleness = static_cast<int>(y.integer_or("staleness", spec.staleness, 0, 1'000'000));
    spec.backups = static_cast<int>(y.integer_or("backups", spec.backups, 1, 100'000));
    spec.range = static_cast<int>(y.integer_or("range", spec.range, 1, 100'000));
    spec.algorithm = y.string_or("algorithm", spec.algorithm, window_algorithms());
    spec.history = static_cast<int>(y.integer_or("history", spec.history, 1, 100'000));
    y.reject_unknown();
    return spec;
}

const std::vector<std::string>& sync_types()
{
    static const std::vector<std::string> types = [] {
        std::vector<std::string> names;
        for (const auto& [type, name] : kSyncTypeNames)
            names.emplace_back(name);
        return names;
    }();
    return types;
}

std::vector<CatalogueEntry> sync_catalogue()
{
    std::vector<CatalogueEntry> out;
    for (const auto& [type, name] : kSyncTypeNames) {
        std::string what;
        std::vector<std::string> fields;
        switch (type) {
        case SyncType::Bsp:
            what = "a barrier every iteration: the slowest worker sets the pace (LB-BSP balances it)";
            break;
        case SyncType::Asp:
            what = "no barrier: each push is applied at once";
            break;
        case SyncType::Ssp:
            what = "no barrier, but no worker runs more than s iterations ahead of the slowest";
            fields = { "staleness" };
            break;
        case SyncType::Backup:
            what = "a barrier that closes at the (n - k)-th arrival; the k late gradients are dropped";
            fields = { "backups" };
            break;
        case SyncType::ElasticBsp:
            what = "supersteps whose barrier is placed from predicted end times (ZipLine or exact)";
            fields = { "range", "algorithm", "history" };
            break;
        }
        out.push_back(
            { std::string(name), what, closes_every_iteration(type) ? "barrier" : "free-running", {}, fields });
    }
    return out;
}

void validate(const SyncSpec& spec, int workers)
{
    if (spec.type == SyncType::Ssp && spec.staleness < 0)
        throw std::invalid_argument("sync.staleness: must be 0 or more");
    if (spec.type == SyncType::Backup && (spec.backups < 1 || spec.backups >= workers))
        throw std::invalid_argument("sync.backups: is " + std::to_string(spec.backups) + ", expected 1 to "
            + std::to_string(workers - 1) + " (fewer than the " + std::to_string(workers) + " workers)");
    if (spec.type == SyncType::ElasticBsp) {
        if (spec.range < 1)
            throw std::invalid_argument("sync.range: must be at least 1");
        try {
            check_window_algorithm(spec.algorithm);
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(std::string("sync.algorithm: ") + e.what());
        }
        if (spec.history < 1)
            throw std::invalid_argument("sync.history: must be at least 1");
    }
}

std::string describe(const SyncSpec& spec)
{
    switch (spec.type) {
    case SyncType::Ssp:
        return "ssp(s=" + std::to_string(spec.staleness) + ")";
    case SyncType::Backup:
        return "backup(k=" + std::to_string(spec.backups) + ")";
    case SyncType::ElasticBsp:
        return "elastic-bsp(R=" + std::to_string(spec.range) + ", " + spec.algorithm + ")";
    case SyncType::Bsp:
    case SyncType::Asp:
        break;
    }
    return std::string(to_string(spec.type));
}

EndTimes predict_end_times(
    const std::vector<double>& start, const std::vector<std::deque<double>>& intervals, int range)
{
    EndTimes ends(start.size());
    for (std::size_t i = 0; i < start.size(); ++i) {
        const auto& recent = intervals[i];
        double mean = recent.empty()
            ? 1.0
            : std::accumulate(recent.begin(), recent.end(), 0.0) / static_cast<double>(recent.size());
        mean = std::max(mean, 1e-9);
        ends[i].resize(static_cast<std::size_t>(range));
        for (int r = 0; r < range; ++r)
            ends[i][static_cast<std::size_t>(r)] = start[i] + (r + 1) * mean;
    }
    return ends;
}

} // namespace fulcrum::sync
