#include "perf/proc_stats.h"

#include <ctime>
#include <fstream>
#include <string>

namespace fulcrum::perf {

double memory_available_share()
{
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    double value = 0, total = 0, available = 0;
    std::string unit;
    while (meminfo >> key >> value >> unit) {
        if (key == "MemTotal:")
            total = value;
        else if (key == "MemAvailable:")
            available = value;
    }
    return total > 0 ? available / total : 1.0;
}

double thread_cpu_seconds()
{
    timespec ts {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

} // namespace fulcrum::perf
