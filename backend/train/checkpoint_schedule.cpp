#include "train/checkpoint_schedule.h"

#include "train/job_core.h"

namespace fulcrum::train {

CheckpointSchedule::CheckpointSchedule(JobCore& core)
    : core_(core)
    , last_at_(std::chrono::steady_clock::now())
{
}

bool CheckpointSchedule::on() const
{
    return !off_ && (core_.config().checkpoint_every > 0 || core_.config().checkpoint_seconds > 0);
}

void CheckpointSchedule::start(std::optional<std::int64_t> count)
{
    last_at_ = std::chrono::steady_clock::now();
    if (!last_ && count)
        last_ = *count;
}

bool CheckpointSchedule::due(std::int64_t count, bool forced) const
{
    if (!on() || count == last_)
        return false;
    const TrainerConfig& c = core_.config();
    const bool by_count = c.checkpoint_every > 0 && count % c.checkpoint_every == 0;
    const bool by_time = c.checkpoint_seconds > 0
        && std::chrono::duration<double>(std::chrono::steady_clock::now() - last_at_).count() >= c.checkpoint_seconds;
    return forced || by_count || by_time;
}

void CheckpointSchedule::take(std::optional<std::string> state, std::int64_t count, std::int64_t at, double now)
{
    if (!state) {
        off_ = true;
        core_.emit(at, now, EventKind::CheckpointsOff,
            "policy " + core_.manager().policy().name()
                + " keeps no checkpoint: this job cannot be resumed after a crash",
            EventActor::system());
        return;
    }
    core_.observer().on_checkpoint(at, now, std::move(*state));
    last_ = count;
    last_at_ = std::chrono::steady_clock::now();
}

} // namespace fulcrum::train
