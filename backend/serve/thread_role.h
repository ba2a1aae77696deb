#pragma once

namespace fulcrum::serve {

// What one of fulcrumd's threads is for, said to the kernel: its name, as top -H, perf,
// gdb and /proc/PID/task/*/comm show it, and a CPU priority below the process's for the
// work that can wait. On a machine with fewer cores than runnable threads (2 cores, 20
// trainers, the clients' streams), an operator's command then takes a core ahead of a
// trainer's batch or a listing of a thousand run stores: Ray runs its workers at a lower
// priority than its control plane for the same reason, RocksDB its compactions. Lowering
// a priority needs no privilege (raising one back would), so a thread a lowered thread
// starts keeps its priority and, until it takes a role of its own, its name.
enum class ThreadRole {
    io, // "fulcrum-io": a WebSocket I/O thread (reads frames, routes them, writes replies and streams)
    core, // "fulcrum-core": the cluster core's thread, or another serve::CoreThread
    job, // "fulcrum-job": a job's trainer thread, and the engine's and recorder's threads it starts
    replay, // "fulcrum-replay": an open replay's pacing thread
    disk, // "fulcrum-disk": the disk threads (list-runs, replay openings, a submission's fsync)
};

// The name a role's threads have.
const char* role_name(ThreadRole role);

// Names the calling thread after `role` and, when `niceness` > 0, sets its nice value to the
// process's (its first thread's) plus `niceness`, at most 19. Returns false when the kernel
// refused the priority (the name is set regardless): a priority changes no result.
bool take_role(ThreadRole role, int niceness = 0);

// The niceness the disk threads and replays take: background work, below the jobs.
inline constexpr int kDiskNiceness = 10;

} // namespace fulcrum::serve
