#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

namespace fulcrum::engine {

// The virtual clock: a discrete-event queue. Events at equal times run in the order they
// were scheduled, so a run is deterministic however ties fall.
class EventQueue {
public:
    using Action = std::function<void()>;

    void schedule(double at_s, Action action);
    // Runs the earliest event; returns false if none is left.
    bool step();
    void run();

    double now() const { return now_; }
    // A resumed run: the clock stands where the checkpoint's stood; or a paced barrier that an
    // exclusion released before the arrivals already run. Only with no event pending.
    void restore(double now_s);
    bool empty() const { return events_.empty(); }
    // Drops every pending event (work abandoned: a backup worker's batch cut off at its
    // barrier); the clock stays where it is.
    void discard_pending() { events_ = {}; }
    std::size_t pending() const { return events_.size(); }

private:
    struct Event {
        double at_s;
        std::uint64_t sequence;
        Action action;
    };
    struct Later {
        bool operator()(const Event& a, const Event& b) const
        {
            return a.at_s != b.at_s ? a.at_s > b.at_s : a.sequence > b.sequence;
        }
    };
    std::priority_queue<Event, std::vector<Event>, Later> events_;
    std::uint64_t next_sequence_ = 0;
    double now_ = 0;
};

} // namespace fulcrum::engine
