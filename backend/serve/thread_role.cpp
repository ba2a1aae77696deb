#include "serve/thread_role.h"

#include <algorithm>
#include <cerrno>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

namespace fulcrum::serve {

const char* role_name(ThreadRole role)
{
    switch (role) {
    case ThreadRole::io:
        return "fulcrum-io";
    case ThreadRole::core:
        return "fulcrum-core";
    case ThreadRole::scheduler:
        return "fulcrum-sched";
    case ThreadRole::job:
        return "fulcrum-job";
    case ThreadRole::replay:
        return "fulcrum-replay";
    case ThreadRole::disk:
        return "fulcrum-disk";
    }
    return "fulcrum";
}

bool take_role(ThreadRole role, int niceness)
{
    pthread_setname_np(pthread_self(), role_name(role)); // 15 characters at most: each fits
    if (niceness <= 0)
        return true;
    // On Linux a nice value is each thread's own: setpriority(2) with the thread's id sets
    // it for that thread only. The process's first thread keeps what fulcrumd started with.
    errno = 0;
    const int base = getpriority(PRIO_PROCESS, static_cast<id_t>(getpid()));
    if (errno != 0)
        return false;
    const int wanted = std::min(19, base + niceness);
    return setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), wanted) == 0;
}

} // namespace fulcrum::serve
