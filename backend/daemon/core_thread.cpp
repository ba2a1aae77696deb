#include "daemon/core_thread.h"

#include "common/error.h"
#include "log/log.h"

#include <atomic>
#include <cstdlib>

namespace fulcrum::daemon {

namespace {

thread_local int io_path_depth = 0;
std::atomic<std::uint64_t> io_path_waits { 0 };

} // namespace

IoPath::IoPath()
{
    ++io_path_depth;
}

IoPath::~IoPath()
{
    --io_path_depth;
}

bool IoPath::active()
{
    return io_path_depth > 0;
}

CoreThread::CoreThread()
    : thread_([this] { run(); })
{
}

CoreThread::~CoreThread()
{
    {
        std::lock_guard lock(mutex_);
        ending_ = true;
    }
    ready_.notify_all();
    thread_.join();
}

bool CoreThread::post(std::function<void()> task)
{
    {
        std::lock_guard lock(mutex_);
        if (ending_)
            return false;
        tasks_.push_back(std::move(task));
    }
    ready_.notify_one();
    return true;
}

void CoreThread::run()
{
    for (;;) {
        std::function<void()> task;
        {
            std::unique_lock lock(mutex_);
            ready_.wait(lock, [this] { return ending_ || !tasks_.empty(); });
            if (tasks_.empty())
                return; // ending, and nothing left: a call() waiting on a task always gets it run
            task = std::move(tasks_.front());
            tasks_.pop_front();
        }
        try {
            task(); // a call()'s errors go back to its caller
        } catch (const std::exception& e) { // a posted task answers its own; this one did not
            log::error("internal error", { { "where", "the cluster core's thread" }, { "reason", e.what() } });
        }
    }
}

void CoreThread::check_wait()
{
    if (!IoPath::active())
        return;
    io_path_waits.fetch_add(1, std::memory_order_relaxed);
#ifndef NDEBUG
    std::fputs("fulcrumd: a WebSocket frame handler waited for the cluster core\n", stderr);
    std::abort();
#endif
}

void CoreThread::refuse()
{
    throw RefusedRequest("shutting-down", "fulcrumd is shutting down");
}

std::uint64_t CoreThread::waited_on_io_path()
{
    return io_path_waits.load(std::memory_order_relaxed);
}

} // namespace fulcrum::daemon
