#include "worker_processes.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace fulcrum::bench {

namespace {

// After fork() in a threaded process only async-signal-safe calls are allowed until exec
// or _exit: sched_setaffinity, clock_gettime, nanosleep, open, dup2 and execv are.
void pin_this_process(int core)
{
    ::prctl(PR_SET_PDEATHSIG, SIGKILL); // never outlives the bench, whatever ends it
    if (core == kAnyCore)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    if (::sched_setaffinity(0, sizeof set, &set) != 0)
        ::_exit(127);
}

double now_s()
{
    timespec t {};
    ::clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

pid_t fork_or_exit(const char* what)
{
    const pid_t pid = ::fork();
    if (pid < 0) {
        std::perror(what);
        std::exit(1);
    }
    return pid;
}

} // namespace

pid_t spawn_worker(unsigned short port, JobId job, int slot, const std::string& token, int core)
{
    std::vector<std::string> args { FULCRUM_WORKER_BINARY, "--server", "127.0.0.1:" + std::to_string(port), "--job",
        std::to_string(job), "--worker", std::to_string(slot), "--token", token, "--name",
        "bench-" + std::to_string(slot) };
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = fork_or_exit("fulcrum-worker");
    if (pid == 0) {
        pin_this_process(core);
        const int quiet = ::open("/dev/null", O_WRONLY);
        if (quiet >= 0)
            ::dup2(quiet, 2);
        ::execv(FULCRUM_WORKER_BINARY, argv.data());
        ::_exit(127);
    }
    return pid;
}

pid_t spawn_competing_load(int core, double share)
{
    const pid_t pid = fork_or_exit("competing load");
    if (pid == 0) {
        pin_this_process(core);
        constexpr double kPeriod_s = 0.010;
        for (;;) {
            const double until = now_s() + share * kPeriod_s;
            while (now_s() < until) { }
            const timespec rest { 0, static_cast<long>((1 - share) * kPeriod_s * 1e9) };
            ::nanosleep(&rest, nullptr);
        }
    }
    return pid;
}

std::vector<int> allowed_cores()
{
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cores;
    if (::sched_getaffinity(0, sizeof set, &set) == 0)
        for (int core = 0; core < CPU_SETSIZE; ++core)
            if (CPU_ISSET(core, &set))
                cores.push_back(core);
    return cores;
}

void end_process(pid_t pid)
{
    ::kill(pid, SIGCONT);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
}

} // namespace fulcrum::bench
