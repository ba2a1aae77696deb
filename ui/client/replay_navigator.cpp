#include "ui/client/replay_navigator.h"

#include "ui/client/commands.h"
#include "ui/console_store.h"

#include <algorithm>

namespace fulcrum::ui {

using namespace protocol;

ReplayNavigator::ReplayNavigator(ConsoleStore& store, Commands& commands, QObject* parent)
    : QObject(parent)
    , store_(store)
    , commands_(commands)
{
    // A refused seek (an iteration the run does not have) ends the move; Commands reports it.
    connect(&commands_, &Commands::failed, this, [this] {
        if (seeking_)
            cancel();
    });
}

void ReplayNavigator::go_to_iteration(std::int64_t iteration, std::optional<JobId> job)
{
    Target t;
    t.iteration = iteration;
    t.job = job.value_or(store_.shown_job().value_or(0));
    go_to(t);
}

void ReplayNavigator::go_to_time(double time_s)
{
    Target t;
    t.time_s = time_s;
    go_to(t);
}

bool ReplayNavigator::ahead(const Target& t) const
{
    if (t.iteration) {
        const JobHistory* h = store_.history(t.job);
        return !h || !h->last_iteration() || *t.iteration > *h->last_iteration();
    }
    return *t.time_s > delivered_time_s_;
}

void ReplayNavigator::go_to(Target t)
{
    const ReplayState* s = store_.replay_state();
    if (!s)
        return;
    if (!target_ || replay_ != s->replay) {
        // A new move: what to come back to. A move that replaces one under way keeps the
        // state from before the first.
        was_playing_ = s->state == ReplayPhase::Playing;
        speed_before_ = s->speed;
        fast_forwarded_ = false;
    }
    replay_ = s->replay;
    const bool forward = ahead(t) && s->state != ReplayPhase::Finished;
    if (t.iteration) {
        const JobHistory* h = store_.history(t.job);
        t.from = h && h->last_iteration() ? static_cast<double>(*h->last_iteration()) : -1.0;
    } else {
        t.from = delivered_time_s_;
    }
    t.what = t.iteration ? QStringLiteral("moving to iteration %1").arg(*t.iteration)
                         : QStringLiteral("moving to %1 s").arg(*t.time_s, 0, 'f', 1);
    target_ = t;
    if (!forward) {
        seek_exactly();
        return;
    }
    seeking_ = false;
    fast_forwarded_ = true;
    // Past a moment nothing is taken in on the way (the exact seek would drop it again).
    store_.hold_after(t.time_s);
    if (s->speed != 0)
        send(ReplayAction::SetSpeed, 0);
    if (s->state != ReplayPhase::Playing)
        send(ReplayAction::Play);
    shown_percent_ = 0;
    emit progressed(0, target_->what);
}

void ReplayNavigator::send(ReplayAction action, double speed)
{
    ReplayCommand c;
    c.replay = replay_;
    c.action = action;
    c.speed = speed;
    commands_.replay(c);
}

void ReplayNavigator::seek_exactly()
{
    ReplayCommand c;
    c.replay = replay_;
    c.action = ReplayAction::Seek;
    c.iteration = target_->iteration;
    if (target_->iteration)
        c.job = target_->job;
    c.time_s = target_->time_s;
    seek_id_ = commands_.replay(c);
    seeking_ = seek_id_.has_value();
    if (!seeking_)
        cancel(); // not sent: Commands reported why
}

bool ReplayNavigator::reached(const IterationRows& rows) const
{
    if (target_->iteration)
        return rows.job == target_->job && rows.iteration >= *target_->iteration;
    return barrier_s(rows) >= *target_->time_s;
}

double ReplayNavigator::done(const IterationRows& rows) const
{
    const double at = target_->iteration
        ? (rows.job == target_->job ? static_cast<double>(rows.iteration) : target_->from)
        : barrier_s(rows);
    const double to = target_->iteration ? static_cast<double>(*target_->iteration) : *target_->time_s;
    return to > target_->from ? std::clamp((at - target_->from) / (to - target_->from), 0.0, 1.0) : 1.0;
}

void ReplayNavigator::cancel()
{
    store_.hold_after(std::nullopt);
    target_.reset();
    seeking_ = false;
    seek_id_.reset();
}

double ReplayNavigator::speed_on_arrival() const
{
    return pause_on_arrival_ ? 1.0 : speed_before_;
}

void ReplayNavigator::arrive()
{
    // A fast-forward that ran to the end of the run never paused nor seeked.
    const bool ended = fast_forwarded_ && !seeking_;
    const bool play = fast_forwarded_ && !pause_on_arrival_ && was_playing_;
    cancel();
    if (ended)
        send(ReplayAction::SetSpeed, speed_on_arrival());
    else if (play)
        send(ReplayAction::Play);
    emit arrived();
}

void ReplayNavigator::on_message(const ServerMessage& message)
{
    if (target_ && store_.source() != replay_) {
        cancel(); // the console left that replay
        return;
    }
    if (const auto* rows = std::get_if<IterationRows>(&message);
        rows && rows->replay == store_.source() && store_.replaying()) {
        delivered_time_s_ = std::max(delivered_time_s_, barrier_s(*rows));
        if (target_ && !seeking_) {
            // A whole percent at a time: a fast-forward delivers thousands of iterations.
            if (const int percent = static_cast<int>(100 * done(*rows)); percent != shown_percent_) {
                shown_percent_ = percent;
                emit progressed(percent / 100.0, target_->what);
            }
            if (reached(*rows)) {
                store_.hold_after(barrier_s(*rows));
                // Paused and at the old speed before the seek, so its state is the final one;
                // the seek goes back over whatever came past the target.
                send(ReplayAction::Pause);
                send(ReplayAction::SetSpeed, speed_on_arrival());
                seek_exactly();
            }
        }
    } else if (const auto* state = std::get_if<ReplayState>(&message); state && state->replay == store_.source()) {
        if (state->seeked)
            delivered_time_s_ = state->time_s;
        if (target_ && !seeking_ && state->state == ReplayPhase::Finished)
            arrive(); // the run ended before the target: it stands at its end
    } else if (const auto* end = std::get_if<SnapshotEnd>(&message);
               end && target_ && seeking_ && seek_id_ && end->id == *seek_id_) {
        arrive();
    }
}

} // namespace fulcrum::ui
