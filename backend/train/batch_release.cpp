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

void BatchRelease::give_up(WorkerId worker)
{
    if (remote_ && remote_->is_remote(worker))
        remote_->give_up_task(worker);
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

} // namespace fulcrum::train
