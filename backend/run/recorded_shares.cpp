#include "run/recorded_shares.h"

#include "common/job_event.h"

#include <algorithm>

namespace fulcrum::run {

namespace {

struct ShareChange {
    std::int64_t at = 0;
    double time_s = 0;
    bool link = false;
    WorkerId worker = 0;
    int jobs = 1;
};

// Safe points in the order they came: by run clock, then by iteration (a barrier's safe
// point and the checkpoint after the barrier before it share a run clock; the iteration
// of an engine's safe points is on one scale only within a sync model's segment).
bool before(const ShareChange& a, double time_s, std::int64_t at)
{
    return a.time_s < time_s || (a.time_s == time_s && a.at <= at);
}

} // namespace

train::JobControl::RecordedShares recorded_shares(std::span<const EventRecord> events, JobId job,
    const CheckpointPosition& checkpoint, int workers, std::optional<train::JobControl::LinkModel> link, double until_s)
{
    std::vector<ShareChange> kept;
    for (const EventRecord& r : events) {
        if (r.job != job)
            continue;
        const JobEvent e = typed(r);
        if (e.kind == EventKind::CheckpointResumed) {
            // The attempts before it were repeated by the one that resumed here up to its
            // reach; what they recorded past that never reached a row that was kept.
            const auto* reach = std::get_if<Reach>(&e.detail);
            const double until = reach && reach->until_s ? *reach->until_s : e.time_s;
            std::erase_if(
                kept, [&](const ShareChange& c) { return !before(c, e.time_s, e.iteration) && c.time_s >= until; });
            continue;
        }
        const auto* sharing = std::get_if<Sharing>(&e.detail);
        if (!sharing || !e.worker || *e.worker < 0 || *e.worker >= workers)
            continue;
        const bool on_link = e.kind == EventKind::LinkContended || e.kind == EventKind::LinkFree;
        if (on_link && !link)
            continue;
        kept.push_back({ e.iteration, e.time_s, on_link, *e.worker, std::max(1, sharing->jobs) });
    }
    std::stable_sort(kept.begin(), kept.end(), [](const ShareChange& a, const ShareChange& b) {
        return a.time_s < b.time_s || (a.time_s == b.time_s && a.at < b.at);
    });

    train::JobControl::RecordedShares shares;
    shares.until_s = until_s;
    std::vector<int> gpu(static_cast<std::size_t>(workers), 1), on_links(static_cast<std::size_t>(workers), 1);
    std::size_t i = 0;
    for (; i < kept.size() && before(kept[i], checkpoint.time_s, checkpoint.iteration); ++i)
        (kept[i].link ? on_links : gpu)[static_cast<std::size_t>(kept[i].worker)] = kept[i].jobs;
    shares.gpu = { gpu };
    if (link)
        shares.link = train::JobControl::LinkContention { on_links, *link };
    // One change per safe point, with every worker's share after it, as the live cluster
    // sends them.
    while (i < kept.size()) {
        train::JobControl::RecordedShares::Change change;
        change.at = kept[i].at;
        change.time_s = kept[i].time_s;
        bool gpu_changed = false, link_changed = false;
        for (; i < kept.size() && kept[i].at == change.at && kept[i].time_s == change.time_s; ++i) {
            (kept[i].link ? on_links : gpu)[static_cast<std::size_t>(kept[i].worker)] = kept[i].jobs;
            (kept[i].link ? link_changed : gpu_changed) = true;
        }
        if (gpu_changed)
            change.gpu = train::JobControl::GpuSharing { gpu };
        if (link_changed)
            change.link = train::JobControl::LinkContention { on_links, *link };
        shares.changes.push_back(std::move(change));
    }
    return shares;
}

} // namespace fulcrum::run
