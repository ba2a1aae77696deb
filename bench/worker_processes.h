#pragma once

// fulcrum-worker processes and competing CPU load for the straggler benches: each process
// may be pinned to one core (set in the child before exec, so every thread it starts
// inherits it), and its stderr goes to /dev/null.

#include "common/records.h"

#include <string>
#include <sys/types.h>
#include <vector>

namespace fulcrum::bench {

inline constexpr int kAnyCore = -1;

// A fulcrum-worker for `slot` of `job`, on loopback `port`. Exits the bench when the
// process cannot be started.
pid_t spawn_worker(unsigned short port, JobId job, int slot, const std::string& token, int core = kAnyCore);

// A process that keeps `core` busy for `share` of each 10 ms (DLRover's fault experiments
// put a 90 % load on one core): it spins, then sleeps the rest.
pid_t spawn_competing_load(int core, double share);

// The cores this process may run on (its affinity mask), in order.
std::vector<int> allowed_cores();

// SIGCONT then SIGKILL, and reaps it.
void end_process(pid_t pid);

} // namespace fulcrum::bench
