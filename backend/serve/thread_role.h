#pragma once

namespace fulcrum::serve {

// What one of fulcrumd's threads is for, said to the kernel: its name, as top -H, perf,
// gdb and /proc/PID/task/*/comm show it, and for the work that can wait a CPU priority
// below the process's. On a machine with fewer cores than runnable threads (2 cores, 20
// trainers, the clients' streams), an operator's command then takes a core ahead of a
// trainer's batch or a listing of a thousand run stores: Ray runs its workers below its
// control plane's priority for the same reason. Lowering a priority needs no privilege
// (raising one back would), so a thread a lowered thread starts keeps its priority and,
// until it takes a role of its own, its name.
enum class ThreadRole {
    io, // "fulcrum-io": a WebSocket I/O thread (reads frames, routes them, writes replies and streams)
    core, // "fulcrum-core": the cluster core's thread
    scheduler, // "fulcrum-sched": the elastic scheduler's rounds and a workload's arrivals
    replay, // "fulcrum-replay": the open replays' table and each replay's pacing
    job, // "fulcrum-job": a job's trainer thread, and the engine's and recorder's threads it starts
    disk, // "fulcrum-disk": the disk threads (list-runs, replay openings, a submission's fsync)
};

// The name a role's threads have (at most 15 characters, the kernel's limit).
const char* role_name(ThreadRole role);

// Names the calling thread after `role` and, when `niceness` > 0, sets its nice value to the
// process's (its first thread's) plus `niceness`, at most 19. Returns false when the kernel
// refused the priority (the name is set regardless): a priority changes no result, so the
// callers go on either way.
bool take_role(ThreadRole role, int niceness = 0);

} // namespace fulcrum::serve
