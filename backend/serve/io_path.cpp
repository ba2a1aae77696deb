#include "serve/io_path.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace fulcrum::serve {

namespace {

thread_local int io_path_depth = 0;
std::atomic<std::uint64_t> waits_for_core { 0 };
std::atomic<std::uint64_t> state_locks { 0 };

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

void IoPath::breach(Breach what)
{
    (what == Breach::WaitedForCore ? waits_for_core : state_locks).fetch_add(1, std::memory_order_relaxed);
#ifndef NDEBUG
    std::fputs(what == Breach::WaitedForCore ? "fulcrumd: a WebSocket frame handler waited for the cluster core\n"
                                             : "fulcrumd: a WebSocket frame handler took a state lock\n",
        stderr);
    std::abort();
#endif
}

std::uint64_t IoPath::breaches(Breach what)
{
    return (what == Breach::WaitedForCore ? waits_for_core : state_locks).load(std::memory_order_relaxed);
}

} // namespace fulcrum::serve
