#include "serve/send_queue.h"

#include "protocol/codec.h"

#include <algorithm>

namespace fulcrum::serve {

SendQueue::SendQueue(std::size_t limit)
    : limit_(std::max<std::size_t>(1, limit))
{
}

bool SendQueue::push(Frame frame, std::string key, Delivery delivery)
{
    std::lock_guard lock(mutex_);
    const bool was_empty = entries_.empty();
    if (!key.empty()) {
        const auto same = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.key == key; });
        if (same != entries_.end()) {
            same->frame = std::move(frame);
            ++total_.coalesced;
            ++unreported_.coalesced;
            return false;
        }
        // Keyed frames may pass the limit: there are at most a few per job, so they stay bounded.
    } else if (delivery == Delivery::Droppable && entries_.size() >= limit_) {
        ++total_.dropped;
        ++unreported_.dropped;
        return false;
    }
    entries_.push_back({ std::move(frame), std::move(key) });
    return was_empty;
}

std::optional<Frame> SendQueue::pop()
{
    std::lock_guard lock(mutex_);
    if (unreported_.dropped > 0 || unreported_.coalesced > 0) {
        auto notice = std::make_shared<const std::string>(protocol::encode(protocol::ServerMessage { unreported_ }));
        unreported_ = {};
        return notice;
    }
    if (entries_.empty())
        return std::nullopt;
    Frame f = std::move(entries_.front().frame);
    entries_.pop_front();
    return f;
}

std::size_t SendQueue::size() const
{
    std::lock_guard lock(mutex_);
    return entries_.size();
}

protocol::Missed SendQueue::missed() const
{
    std::lock_guard lock(mutex_);
    return total_;
}

} // namespace fulcrum::serve
