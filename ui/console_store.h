#pragma once

#include "protocol/messages.h"
#include "ui/models/events_model.h"
#include "ui/models/jobs_model.h"
#include "ui/models/workers_model.h"

#include <QObject>

namespace fulcrum::ui {

// The console's one ingest path: every server message, live or replayed, goes through
// ingest() into the item models the views read. It follows one source at a time (the
// live stream, or one replay); messages of another source are ignored.
class ConsoleStore : public QObject {
    Q_OBJECT
public:
    explicit ConsoleStore(QObject* parent = nullptr);

    // 0: the live stream; otherwise a replay's id. Clears the models.
    void follow(std::int64_t replay);
    std::int64_t source() const { return source_; }
    void ingest(const protocol::ServerMessage& message);

    JobsModel& jobs() { return jobs_; }
    WorkersModel& workers() { return workers_; }
    EventsModel& events() { return events_; }
    const protocol::ReplayState* replay_state() const { return replay_state_ ? &*replay_state_ : nullptr; }

signals:
    void replayStateChanged();

private:
    std::int64_t source_ = 0;
    JobsModel jobs_;
    WorkersModel workers_;
    EventsModel events_;
    std::optional<protocol::ReplayState> replay_state_;
};

} // namespace fulcrum::ui
