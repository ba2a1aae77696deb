#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

namespace fulcrum::serve {

// Marks the thread it lives on as serving a WebSocket frame for its scope (in fulcrumd: the
// daemon's receive and receive_binary, a connection opening or closing, the /metrics page).
// Those handlers read published snapshots (the cluster core's view, each job's status and
// workers, the hub's client list) and post changes to the threads that own the state; they
// never wait for one of them, nor for a disk.
class IoPath {
public:
    IoPath();
    ~IoPath();
    IoPath(const IoPath&) = delete;
    IoPath& operator=(const IoPath&) = delete;

    static bool active(); // on this thread, now

    // Counted, and a debug build stops at once: what a frame handler must never do.
    enum class Breach { WaitedForCore, TookStateLock };
    static void breach(Breach what);
    static std::uint64_t breaches(Breach what); // since the start, by every thread
};

// A lock on state that fulcrumd's own threads share (a job's trainer callbacks and the core, a
// clock's participants, a replay and its reader). Taking one on an I/O path is a breach
// (IoPath::TookStateLock): the handler could wait behind a barrier, a disk or a decision.
// The only locks an I/O path takes are hand-offs, each held for a push, a pop or one slot's
// update and never while waiting: a client's send queue, the core's and the disk pool's task
// queues, a job's remote-result and rank-report slots, the failed-authentication table.
// Those are plain std::mutex, and each says so where it is declared.
class StateMutex {
public:
    void lock()
    {
        if (IoPath::active())
            IoPath::breach(IoPath::Breach::TookStateLock);
        mutex_.lock();
    }
    bool try_lock() { return mutex_.try_lock(); }
    void unlock() { mutex_.unlock(); }

private:
    std::mutex mutex_;
};

// Replaces a published snapshot with a changed copy (read-copy-update): readers on any thread
// load the snapshot without a lock, and writers racing each other each apply their change to
// the latest one. For state that changes seldom and is read on every frame (the hub's clients,
// a client's subscriptions). Returns what `change` returned.
template <class T, class Change> auto copy_on_write(std::atomic<std::shared_ptr<const T>>& published, Change change)
{
    std::shared_ptr<const T> seen = published.load();
    for (;;) {
        auto next = std::make_shared<T>(*seen);
        auto result = change(*next);
        if (published.compare_exchange_weak(seen, std::shared_ptr<const T>(std::move(next))))
            return result;
    }
}

} // namespace fulcrum::serve
