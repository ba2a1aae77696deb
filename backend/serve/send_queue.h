#pragma once

#include "protocol/messages.h"

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace fulcrum::serve {

// One encoded frame, shared by every client it goes to (built once per publish).
using Frame = std::shared_ptr<const std::string>;

// A client's bounded send queue: the backpressure rule that keeps a slow or stalled
// client from slowing training or the other clients. A frame with a coalescing key (a
// job's status, its worker states) replaces the queued frame with the same key: the
// client gets the latest state, not every one. A frame without a key (iteration rows,
// events) is dropped when the queue is full. The next frame the client takes after a loss
// is a `missed` message with the counts. What a client asked for (a reply, a snapshot, its
// replay, a remote worker's task) is never dropped: it is bounded by the client's own
// requests, and losing it would leave the client waiting forever. Thread-safe.
enum class Delivery { Droppable, Always };

class SendQueue {
public:
    explicit SendQueue(std::size_t limit = 1024);

    // Returns true when the queue was empty before: the writer must be woken.
    bool push(Frame frame, std::string coalesce_key = {}, Delivery delivery = Delivery::Droppable);
    std::optional<Frame> pop();
    std::size_t size() const;
    std::size_t limit() const { return limit_; }
    protocol::Missed missed() const; // totals since the start

private:
    struct Entry {
        Frame frame;
        std::string key;
    };
    mutable std::mutex mutex_; // a hand-off (IoPath): held for one push or pop
    std::deque<Entry> entries_;
    std::size_t limit_;
    protocol::Missed total_, unreported_;
};

} // namespace fulcrum::serve
