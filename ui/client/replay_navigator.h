#pragma once

#include "protocol/messages.h"

#include <QObject>
#include <QString>
#include <optional>
#include <string>

namespace fulcrum::ui {

class Commands;
class ConsoleStore;

// Moves the replay the console follows to an iteration or a moment of the run, so that the
// views hold exactly what the run had shown by then.
//
// A seek back is one seek: the server sends the state there and the store drops what came
// after. A seek forward would leave the skipped iterations and events out of the views, so
// the navigator fast-forwards instead: the replay plays as fast as the console reads up to
// the target, then pauses and seeks exactly to it. The play/pause state and speed from
// before are restored once it stands there. A target past the end stops at the end.
class ReplayNavigator : public QObject {
    Q_OBJECT
public:
    ReplayNavigator(ConsoleStore& store, Commands& commands, QObject* parent = nullptr);

    // `iteration` of `job` (default: the job the console shows).
    void go_to_iteration(std::int64_t iteration, std::optional<JobId> job = std::nullopt);
    // The last iteration whose barrier fell at or before `time_s` on the run's clock.
    void go_to_time(double time_s);
    // With `pause`, a fast-forward ends paused at ×1 whatever the replay did before (opening
    // a run at an iteration).
    void set_pause_on_arrival(bool pause) { pause_on_arrival_ = pause; }

    bool moving() const { return target_.has_value(); }
    // The newest barrier the console has of the replay it follows (the loading progress).
    double delivered_time_s() const { return delivered_time_s_; }
    // Fed every message after the store has taken it.
    void on_message(const protocol::ServerMessage& message);

signals:
    // Fast-forwarding: the share of the way done (0..1) and what it is for.
    void progressed(double fraction, const QString& what);
    // The replay stands at the target (its snapshot has arrived).
    void arrived();

private:
    struct Target {
        std::optional<std::int64_t> iteration;
        JobId job = 0;
        std::optional<double> time_s;
        double from = 0; // where the fast-forward started, in the target's unit
        QString what; // "moving to iteration 120"
    };
    void go_to(Target target);
    bool reached(const protocol::IterationRows& rows) const;
    double done(const protocol::IterationRows& rows) const;
    bool ahead(const Target& target) const;
    void seek_exactly();
    void send(protocol::ReplayAction action, double speed = 1);
    void cancel();
    void arrive();
    double speed_on_arrival() const;

    ConsoleStore& store_;
    Commands& commands_;
    std::optional<Target> target_;
    bool seeking_ = false; // the exact seek is sent; its snapshot-end ends the move
    std::optional<std::string> seek_id_;
    bool pause_on_arrival_ = false;
    bool fast_forwarded_ = false; // the move changed the speed and played: restore them
    bool was_playing_ = false;
    double speed_before_ = 1;
    std::int64_t replay_ = 0; // the replay the move belongs to
    double delivered_time_s_ = 0; // the newest barrier the store has of that replay
    int shown_percent_ = -1; // of the fast-forward, as last reported
};

} // namespace fulcrum::ui
