#include "daemon/core_lock.h"

#include <cstdio>
#include <cstdlib>

namespace fulcrum::daemon {

namespace {

thread_local int io_path_depth = 0;
std::atomic<std::uint64_t> io_path_locks { 0 };

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

void CoreMutex::check()
{
    if (!IoPath::active())
        return;
    io_path_locks.fetch_add(1, std::memory_order_relaxed);
#ifndef NDEBUG
    std::fputs("fulcrumd: the job queue's lock was taken on a WebSocket read or write path\n", stderr);
    std::abort();
#endif
}

void CoreMutex::lock()
{
    check();
    mutex_.lock();
}

bool CoreMutex::try_lock()
{
    check();
    return mutex_.try_lock();
}

std::uint64_t CoreMutex::taken_on_io_path()
{
    return io_path_locks.load(std::memory_order_relaxed);
}

} // namespace fulcrum::daemon
