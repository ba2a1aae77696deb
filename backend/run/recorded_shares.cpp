#include "run/recorded_shares.h"

#include "common/job_event.h"

#include <algorithm>

namespace fulcrum::run {

namespace {

struct ShareChange {
    std::int64_t at = 0;
    bool link = false;
    WorkerId worker = 0;
    int jobs = 1;
};

} // namespace

train::JobControl::RecordedShares recorded_shares(std::span<const EventRecord> events, JobId job,
    std::int64_t checkpoint_iteration, int workers, std::optional<train::JobControl::LinkModel> link, double until_s)
{
    std::vector<ShareChange> kept;
    for (const EventRecord& r : events) {
        if (r.job != job)
            continue;
        const JobEvent e = typed(r);
        if (e.kind == EventKind::CheckpointResumed) {
            std::erase_if(kept, [&e](const ShareChange& c) { return c.at > e.iteration; });
            continue;
        }
        const auto* sharing = std::get_if<Sharing>(&e.detail);
        if (!sharing || !e.worker || *e.worker < 0 || *e.worker >= workers)
            continue;
        const bool on_link = e.kind == EventKind::LinkContended || e.kind == EventKind::LinkFree;
        if (on_link && !link)
            continue;
        kept.push_back({ e.iteration, on_link, *e.worker, std::max(1, sharing->jobs) });
    }
    std::stable_sort(kept.begin(), kept.end(), [](const ShareChange& a, const ShareChange& b) { return a.at < b.at; });

    train::JobControl::RecordedShares shares;
    shares.until_s = until_s;
    std::vector<int> gpu(static_cast<std::size_t>(workers), 1), on_links(static_cast<std::size_t>(workers), 1);
    std::size_t i = 0;
    for (; i < kept.size() && kept[i].at <= checkpoint_iteration; ++i)
        (kept[i].link ? on_links : gpu)[static_cast<std::size_t>(kept[i].worker)] = kept[i].jobs;
    shares.gpu = { gpu };
    if (link)
        shares.link = train::JobControl::LinkContention { on_links, *link };
    // One change per safe point, with every worker's share after it, as the live cluster
    // sends them.
    while (i < kept.size()) {
        train::JobControl::RecordedShares::Change change;
        change.at = kept[i].at;
        bool gpu_changed = false, link_changed = false;
        for (; i < kept.size() && kept[i].at == change.at; ++i) {
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
