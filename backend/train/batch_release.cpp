#include "train/batch_release.h"

#include <algorithm>

namespace fulcrum::train {

BatchRelease::BatchRelease(std::size_t workers, RemoteWorkers* remote, bool real_mode)
    : remote_(remote)
    , real_mode_(real_mode)
    , slots_(workers)
{
}

BatchRelease::Slot* BatchRelease::local_slot(WorkerId worker)
{
    if (!real_mode_ || (remote_ && remote_->is_remote(worker)) || worker < 0
        || static_cast<std::size_t>(worker) >= slots_.size())
        return nullptr;
    return &slots_[static_cast<std::size_t>(worker)];
}

void BatchRelease::give_up(WorkerId worker, bool paced)
{
    if (remote_ && remote_->is_remote(worker))
        remote_->give_up_task(worker);
    if (!real_mode_ && worker >= 0 && static_cast<std::size_t>(worker) < slots_.size()) {
        if (!paced)
            return;
        {
            std::lock_guard lock(mutex_);
            slots_[static_cast<std::size_t>(worker)].modelled = true;
        }
        changed_.notify_all();
        return;
    }
    Slot* slot = local_slot(worker);
    if (!slot)
        return;
    {
        std::lock_guard lock(mutex_);
        // The batch under way, and the next one: an exclusion asked between a safe point and
        // the batch's start applies to that batch (the allocation already counted the worker).
        slot->give_up_through = std::max(slot->give_up_through, slot->started + 1);
    }
    changed_.notify_all();
}

void BatchRelease::keep(WorkerId worker)
{
    if (remote_ && remote_->is_remote(worker))
        remote_->keep_next_task(worker);
    if (!real_mode_ && worker >= 0 && static_cast<std::size_t>(worker) < slots_.size()) {
        std::lock_guard lock(mutex_);
        slots_[static_cast<std::size_t>(worker)].modelled = false;
        return;
    }
    Slot* slot = local_slot(worker);
    if (!slot)
        return;
    std::lock_guard lock(mutex_);
    slot->give_up_through = std::min(slot->give_up_through, slot->started);
}

BatchRelease::Batch BatchRelease::start(WorkerId worker)
{
    std::lock_guard lock(mutex_);
    return ++slots_[static_cast<std::size_t>(worker)].started;
}

bool BatchRelease::idle(WorkerId worker, Batch batch, std::chrono::duration<double> idle)
{
    std::unique_lock lock(mutex_);
    return !changed_.wait_for(
        lock, idle, [&] { return batch <= slots_[static_cast<std::size_t>(worker)].give_up_through; });
}

bool BatchRelease::given_up(WorkerId worker, Batch batch) const
{
    std::lock_guard lock(mutex_);
    return batch <= slots_[static_cast<std::size_t>(worker)].give_up_through;
}

std::optional<WorkerId> BatchRelease::wait_for_give_up(
    std::span<const WorkerId> watched, std::chrono::steady_clock::time_point until, const std::atomic<bool>* stop)
{
    std::optional<WorkerId> gone;
    const auto given_up = [&] {
        for (const WorkerId w : watched)
            if (w >= 0 && static_cast<std::size_t>(w) < slots_.size() && slots_[static_cast<std::size_t>(w)].modelled) {
                gone = w;
                return true;
            }
        return false;
    };
    std::unique_lock lock(mutex_);
    // In slices, so that a stop request is honoured promptly (as the pacer's own sleep).
    constexpr auto slice = std::chrono::milliseconds(50);
    while (!given_up()) {
        const auto now = std::chrono::steady_clock::now();
        if (now >= until || (stop && stop->load(std::memory_order_relaxed)))
            return std::nullopt;
        changed_.wait_until(lock, std::min(until, now + slice));
    }
    return gone;
}

} // namespace fulcrum::train
