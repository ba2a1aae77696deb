#pragma once

namespace fulcrum::perf {

// Real mode: what the operating system says about this machine right now.
// Share of physical memory available (MemAvailable / MemTotal from /proc/meminfo), or 1
// where /proc is unreadable.
double memory_available_share();

// CPU seconds consumed by the calling thread so far.
double thread_cpu_seconds();

} // namespace fulcrum::perf
