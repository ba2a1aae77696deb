#include "ui/console_store.h"

namespace fulcrum::ui {

ConsoleStore::ConsoleStore(QObject* parent)
    : QObject(parent)
{
}

void ConsoleStore::follow(std::int64_t replay)
{
    source_ = replay;
    jobs_.clear();
    workers_.clear();
    events_.clear();
    replay_state_.reset();
}

void ConsoleStore::ingest(const protocol::ServerMessage& message)
{
    using namespace protocol;
    if (const auto* rows = std::get_if<IterationRows>(&message)) {
        if (rows->replay == source_)
            workers_.apply(*rows);
    } else if (const auto* update = std::get_if<JobUpdate>(&message)) {
        if (update->replay == source_) {
            jobs_.apply(update->status);
            if (!workers_.job())
                workers_.show_job(update->status.job); // the first job, until the operator picks one
        }
    } else if (const auto* workers = std::get_if<WorkerUpdate>(&message)) {
        if (workers->replay == source_)
            workers_.apply(*workers);
    } else if (const auto* event = std::get_if<Event>(&message)) {
        if (event->replay == source_)
            events_.append(event->event);
    } else if (const auto* state = std::get_if<ReplayState>(&message)) {
        if (state->replay == source_) {
            replay_state_ = *state;
            emit replayStateChanged();
        }
    }
}

} // namespace fulcrum::ui
