#include "serve/task_threads.h"

#include "serve/thread_role.h"

#include <algorithm>

namespace fulcrum::serve {

TaskThreads::TaskThreads(int threads, int niceness)
{
    for (int i = 0; i < std::max(1, threads); ++i)
        threads_.emplace_back([this, niceness] {
            take_role(ThreadRole::disk, niceness);
            run();
        });
}

TaskThreads::~TaskThreads()
{
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        tasks_.clear();
    }
    ready_.notify_all();
    for (std::thread& t : threads_)
        t.join();
}

void TaskThreads::post(std::function<void()> task)
{
    {
        std::lock_guard lock(mutex_);
        if (stopping_)
            return;
        tasks_.push_back(std::move(task));
    }
    ready_.notify_one();
}

void TaskThreads::run()
{
    for (;;) {
        std::function<void()> task;
        {
            std::unique_lock lock(mutex_);
            ready_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
            if (stopping_)
                return;
            task = std::move(tasks_.front());
            tasks_.pop_front();
        }
        task(); // a task catches its own errors: it answers its request either way
    }
}

} // namespace fulcrum::serve
