#include "common/job_fold.h"

#include <algorithm>

namespace fulcrum {

JobFold::JobFold(int workers, std::string policy, std::string sync_model, std::vector<bool> members)
    : policy_(std::move(policy))
    , sync_model_(std::move(sync_model))
    , holds_(static_cast<std::size_t>(std::max(workers, 0)))
    , members_(members.empty() ? std::vector<bool>(holds_.size(), true) : std::move(members))
    , member_since_(members_.size(), 0)
{
}

void JobFold::restart(std::string policy, std::string sync_model, std::vector<bool> members)
{
    policy_ = std::move(policy);
    sync_model_ = std::move(sync_model);
    paused_ = false;
    holds_.assign(holds_.size(), WorkerHold {});
    members_ = std::move(members);
    member_since_.resize(members_.size(), 0);
}

std::int64_t JobFold::member_since(WorkerId worker) const
{
    return worker >= 0 && static_cast<std::size_t>(worker) < member_since_.size()
        ? member_since_[static_cast<std::size_t>(worker)]
        : 0;
}

void JobFold::apply(const JobEvent& e)
{
    switch (e.kind) {
    case EventKind::JobPaused:
        paused_ = true;
        return;
    case EventKind::JobResumed:
        paused_ = false;
        return;
    case EventKind::PolicyChange:
        if (const auto* change = std::get_if<NameChange>(&e.detail))
            policy_ = change->to;
        return;
    case EventKind::SyncModelChange:
        if (const auto* change = std::get_if<NameChange>(&e.detail))
            sync_model_ = change->to;
        return;
    default:
        break;
    }
    if (!e.worker || *e.worker < 0)
        return;
    const auto w = static_cast<std::size_t>(*e.worker);
    if ((e.kind == EventKind::AddWorker || e.kind == EventKind::RemoveWorker) && w < members_.size()) {
        members_[w] = e.kind == EventKind::AddWorker;
        if (members_[w])
            member_since_[w] = e.iteration;
        else if (w < holds_.size())
            holds_[w].stalled_since.reset(); // a removed worker is no longer stalled
        return;
    }
    if (w >= holds_.size())
        return;
    WorkerHold& h = holds_[w];
    switch (e.kind) {
    case EventKind::Pin:
        h.pinned = true;
        break;
    case EventKind::Unpin:
        h.pinned = false;
        break;
    case EventKind::WorkerStalled: {
        const auto* stall = std::get_if<Stall>(&e.detail);
        h.stalled_since = e.time_s - (stall ? stall->elapsed_s : 0.0);
        h.stall_predicted_s = stall ? stall->predicted_s : 0.0;
        break;
    }
    case EventKind::WorkerRecovered:
    case EventKind::WorkerLost:
        h.stalled_since.reset();
        h.stall_predicted_s = 0;
        break;
    case EventKind::Exclude: {
        h.stalled_since.reset(); // out of the barrier: shown as excluded
        h.stall_predicted_s = 0;
        h.excluded = true;
        h.pinned = false; // an exclusion drops the pin (BatchSizeManager)
        const auto* limit = std::get_if<ExclusionLimit>(&e.detail);
        h.excluded_until = limit && limit->for_s ? std::optional<double>(e.time_s + *limit->for_s) : std::nullopt;
        break;
    }
    case EventKind::Include:
    case EventKind::Readmit:
        h.excluded = false;
        h.excluded_until.reset();
        break;
    case EventKind::StragglerInjected: {
        const auto* slowdown = std::get_if<Slowdown>(&e.detail);
        h.slowdown = slowdown ? slowdown->factor : 1.0;
        break;
    }
    case EventKind::StragglerCleared:
        h.slowdown = 1;
        break;
    default:
        break;
    }
}

} // namespace fulcrum
