#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace fulcrum::daemon {

// A few threads for the daemon's disk work (reading run stores for list-runs, opening a
// replay), so a request that reads SQLite never holds the I/O threads every client's
// stream shares. Tasks run in the order posted, two at a time by default; each sends its
// own reply. Destroying it drops the tasks not yet started and waits for those running.
class DiskWork {
public:
    explicit DiskWork(int threads = 2);
    ~DiskWork();
    DiskWork(const DiskWork&) = delete;
    DiskWork& operator=(const DiskWork&) = delete;

    void post(std::function<void()> task);

private:
    void run();

    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<std::function<void()>> tasks_;
    bool stopping_ = false;
    std::vector<std::thread> threads_;
};

} // namespace fulcrum::daemon
