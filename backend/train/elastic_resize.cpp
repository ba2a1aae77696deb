#include "train/elastic_resize.h"

#include <algorithm>
#include <cstdio>

namespace fulcrum::train {

std::string ResizeOutcome::describe() const
{
    char text[256];
    switch (action) {
    case ResizeAction::AddServer:
    case ResizeAction::RemoveServer:
        std::snprintf(text, sizeof text, "%s server %d: %lld keys moved, %d servers now (%.3f ms)",
            action == ResizeAction::AddServer ? "added" : "removed", target, static_cast<long long>(moved_keys),
            servers, seconds * 1e3);
        break;
    case ResizeAction::AddWorker:
    case ResizeAction::RemoveWorker:
        std::snprintf(text, sizeof text,
            "%s worker %d: %lld samples moved, %lld re-activated from backups, %d workers now (%.3f ms)",
            action == ResizeAction::AddWorker ? "added" : "removed", target, static_cast<long long>(moved_samples),
            static_cast<long long>(reactivated_samples), workers, seconds * 1e3);
        break;
    }
    return text;
}

int Membership::count() const
{
    return static_cast<int>(std::count(members.begin(), members.end(), true));
}

void Membership::apply(const ResizeRequest& resolved)
{
    switch (resolved.action) {
    case ResizeAction::AddServer:
        ++servers;
        break;
    case ResizeAction::RemoveServer:
        --servers;
        break;
    case ResizeAction::AddWorker:
    case ResizeAction::RemoveWorker:
        if (resolved.target && *resolved.target >= 0 && static_cast<std::size_t>(*resolved.target) < members.size())
            members[static_cast<std::size_t>(*resolved.target)] = resolved.action == ResizeAction::AddWorker;
        break;
    }
}

ResizeRequest resolve_resize(const Membership& job, const ResizeRequest& request)
{
    ResizeRequest r = request;
    const auto slots = static_cast<int>(job.members.size());
    const int members = job.count();
    const std::string name = "job " + std::to_string(job.job);
    const auto member = [&](int slot) { return job.members[static_cast<std::size_t>(slot)]; };
    const auto check_slot = [&](int slot) {
        if (slot < 0 || slot >= slots)
            throw ResizeError("unknown-worker",
                "worker slot " + std::to_string(slot) + " does not exist (" + name + " has slots 0 to "
                    + std::to_string(slots - 1) + ")");
    };
    switch (r.action) {
    case ResizeAction::AddServer:
        r.target = job.servers;
        if (job.parameters > 0 && job.servers + 1 > job.parameters)
            throw ResizeError("no-keys",
                "cannot add a server to " + name + ": every one of its " + std::to_string(job.parameters)
                    + " parameters already has its own");
        break;
    case ResizeAction::RemoveServer:
        if (!r.target)
            r.target = job.servers - 1;
        if (*r.target < 0 || *r.target >= job.servers)
            throw ResizeError("unknown-server",
                "server " + std::to_string(*r.target) + " does not exist (" + name + " has servers 0 to "
                    + std::to_string(job.servers - 1) + ")");
        if (job.servers == 1)
            throw ResizeError("last-server", "server 0 is the last server of " + name);
        break;
    case ResizeAction::AddWorker:
        if (r.target)
            check_slot(*r.target);
        if (job.max_workers > 0 && members >= job.max_workers)
            throw ResizeError(
                "above-max-workers", name + " has " + std::to_string(members) + " workers, its elastic.max_workers");
        if (!r.target) {
            const auto free = std::find(job.members.begin(), job.members.end(), false);
            if (free == job.members.end())
                throw ResizeError("no-free-slot",
                    "every one of the " + std::to_string(slots) + " worker slots of " + name + " is in use");
            r.target = static_cast<int>(free - job.members.begin());
        }
        if (member(*r.target))
            throw ResizeError(
                "already-member", "worker " + std::to_string(*r.target) + " is already a worker of " + name);
        break;
    case ResizeAction::RemoveWorker:
        if (!r.target)
            for (int i = slots - 1; i >= 0 && !r.target; --i)
                if (member(i))
                    r.target = i;
        if (!r.target)
            throw ResizeError("not-a-member", name + " has no worker to remove");
        check_slot(*r.target);
        if (!member(*r.target))
            throw ResizeError("not-a-member", "worker " + std::to_string(*r.target) + " is not a worker of " + name);
        if (members == 1)
            throw ResizeError("last-worker", "worker " + std::to_string(*r.target) + " is the last worker of " + name);
        if (members <= job.min_workers)
            throw ResizeError(
                "below-min-workers", name + " has " + std::to_string(members) + " workers, its elastic.min_workers");
        break;
    }
    return r;
}

} // namespace fulcrum::train
