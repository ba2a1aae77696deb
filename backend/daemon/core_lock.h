#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

namespace fulcrum::daemon {

// Marks the thread it lives on as serving a WebSocket frame (Daemon::receive and
// receive_binary, a connection opening or closing, the /metrics page) for its scope. Those
// handlers read the job queue's published view and post changes to the core's thread; they
// never wait for the queue's lock.
class IoPath {
public:
    IoPath();
    ~IoPath();
    IoPath(const IoPath&) = delete;
    IoPath& operator=(const IoPath&) = delete;

    static bool active(); // on this thread, now
};

// The job queue's lock, which the core's thread, the elastic scheduler's thread and the
// trainers' callbacks take and the I/O path must not. Taking it inside an IoPath is counted
// (taken_on_io_path, which a test reads after driving every message through the daemon)
// and stops a debug build at once.
class CoreMutex {
public:
    void lock();
    bool try_lock();
    void unlock() { mutex_.unlock(); }

    static std::uint64_t taken_on_io_path();

private:
    static void check();

    std::mutex mutex_;
};

} // namespace fulcrum::daemon
