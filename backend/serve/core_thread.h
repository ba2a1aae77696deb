#pragma once

#include "serve/io_path.h"
#include "serve/thread_role.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>

namespace fulcrum::serve {

// One thread that owns some state, which is then touched on it only and needs no lock: the
// cluster core's (the daemon's job queue: jobs, queue, cluster book, worker pool, elastic
// scheduling, the journal's entries) and the open replays' table (archive's ReplayManager).
// The I/O threads post() to it and the task replies; the threads that must wait for the
// answer (in the core's case a submission after its fsync, the elastic scheduler and the
// arrivals at their instants on the shared clock, a job at its end, tests) call() it. A
// call() inside an IoPath is a breach (IoPath::WaitedForCore).
class CoreThread {
public:
    // `name` says whose thread it is in an internal error's log line; `role` names the
    // thread for top -H and perf (serve/thread_role.h).
    explicit CoreThread(std::string name = "the cluster core's thread", ThreadRole role = ThreadRole::core);
    ~CoreThread(); // runs what was posted, then ends
    CoreThread(const CoreThread&) = delete;
    CoreThread& operator=(const CoreThread&) = delete;

    // False, and `task` dropped, once the thread is ending.
    bool post(std::function<void()> task);
    bool runs_here() const { return std::this_thread::get_id() == thread_.get_id(); }

    // Runs `work` on the core's thread and returns its result or throws its exception;
    // inline when called there. Throws RefusedRequest("shutting-down") once it is ending.
    template <class Work> std::invoke_result_t<Work&> call(Work&& work)
    {
        if (runs_here())
            return work();
        check_wait();
        std::packaged_task<std::invoke_result_t<Work&>()> task(std::ref(work));
        auto result = task.get_future();
        if (!post([&task] { task(); }))
            refuse();
        return result.get();
    }

private:
    void run();
    static void check_wait();
    [[noreturn]] static void refuse();

    std::mutex mutex_; // a hand-off: the queue of tasks only, held for a push or a pop
    std::condition_variable ready_;
    std::deque<std::function<void()>> tasks_;
    bool ending_ = false;
    const std::string name_;
    std::thread thread_;
};

} // namespace fulcrum::serve
