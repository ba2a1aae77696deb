#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace fulcrum::serve {

// A few threads for fulcrumd's disk work (reading run stores for list-runs, opening a
// replay, the journal's fsync at a submission), so that a request that touches the disk
// never holds the I/O threads every client's stream shares. Tasks run in the order posted,
// two at a time by default; each sends its own reply. Its threads are fulcrum-disk
// (serve/thread_role.h). Destroying it drops the tasks not yet started and waits for those
// running.
class TaskThreads {
public:
    // `niceness`: how far below the process's priority its threads run (take_role).
    explicit TaskThreads(int threads = 2, int niceness = 0);
    ~TaskThreads();
    TaskThreads(const TaskThreads&) = delete;
    TaskThreads& operator=(const TaskThreads&) = delete;

    void post(std::function<void()> task);

private:
    void run();

    std::mutex mutex_; // a hand-off (IoPath): the queue of tasks only, held for a push or a pop
    std::condition_variable ready_;
    std::deque<std::function<void()>> tasks_;
    bool stopping_ = false;
    std::vector<std::thread> threads_;
};

} // namespace fulcrum::serve
