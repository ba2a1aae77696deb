#include "engine/event_queue.h"

#include <stdexcept>

namespace fulcrum::engine {

void EventQueue::schedule(double at_s, Action action)
{
    if (at_s < now_)
        throw std::logic_error("an event cannot be scheduled in the past");
    events_.push(Event { at_s, next_sequence_++, std::move(action) });
}

bool EventQueue::step()
{
    if (events_.empty())
        return false;
    Event event = events_.top();
    events_.pop();
    now_ = event.at_s;
    event.action();
    return true;
}

void EventQueue::run()
{
    while (step()) { }
}

void EventQueue::restore(double now_s)
{
    if (!events_.empty())
        throw std::logic_error("the virtual clock is restored only with no event pending");
    now_ = now_s;
}

} // namespace fulcrum::engine
