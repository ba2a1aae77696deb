#include "serve/core_thread.h"

#include "common/error.h"
#include "log/log.h"
#include "serve/thread_role.h"

#include <atomic>
#include <cstdlib>

namespace fulcrum::serve {

CoreThread::CoreThread(std::string name, ThreadRole role)
    : name_(std::move(name))
    , thread_([this, role] {
        take_role(role);
        run();
    })
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
            log::error("internal error", { { "where", name_ }, { "reason", e.what() } });
        }
    }
}

void CoreThread::check_wait()
{
    if (IoPath::active())
        IoPath::breach(IoPath::Breach::WaitedForCore);
}

void CoreThread::refuse()
{
    throw RefusedRequest("shutting-down", "fulcrumd is shutting down");
}

} // namespace fulcrum::serve
