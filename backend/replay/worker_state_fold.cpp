#include "replay/worker_state_fold.h"

#include <charconv>
#include <string_view>

namespace fulcrum::replay {

namespace {

// The number that follows `marker` in `text`, if there is one.
std::optional<double> number_after(std::string_view text, std::string_view marker)
{
    const auto at = text.find(marker);
    if (at == std::string_view::npos)
        return std::nullopt;
    const char* first = text.data() + at + marker.size();
    double value = 0;
    const auto [end, ec] = std::from_chars(first, text.data() + text.size(), value);
    if (ec != std::errc {} || end == first)
        return std::nullopt;
    return value;
}

} // namespace

std::vector<WorkerHold> fold_worker_events(std::span<const EventRecord> events, int workers)
{
    std::vector<WorkerHold> holds(static_cast<std::size_t>(std::max(workers, 0)));
    for (const EventRecord& e : events) {
        if (!e.worker || *e.worker < 0 || *e.worker >= workers)
            continue;
        WorkerHold& h = holds[static_cast<std::size_t>(*e.worker)];
        if (e.kind == "pin") {
            h.pinned = true;
        } else if (e.kind == "unpin") {
            h.pinned = false;
        } else if (e.kind == "exclude") {
            h.excluded = true;
            h.pinned = false; // an exclusion drops the pin (BatchSizeManager)
            const auto limit = number_after(e.message, " for ");
            h.excluded_until = limit ? std::optional<double>(e.time_s + *limit) : std::nullopt;
        } else if (e.kind == "include" || e.kind == "readmit") {
            h.excluded = false;
            h.excluded_until.reset();
        } else if (e.kind == "straggler-injected") {
            h.slowdown = number_after(e.message, "take ").value_or(1.0);
        } else if (e.kind == "straggler-cleared") {
            h.slowdown = 1;
        }
    }
    return holds;
}

} // namespace fulcrum::replay
