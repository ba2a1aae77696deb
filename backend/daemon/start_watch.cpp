#include "daemon/start_watch.h"

#include "common/error.h"
#include "common/file_text.h"

#include <array>
#include <atomic>
#include <csignal>
#include <cstring>
#include <sstream>
#include <string>
#include <unistd.h>

namespace fulcrum::daemon {

namespace {

// The open markers' descriptors, read by the signal handler: a fixed array of lock-free
// atomics is all a handler may touch.
struct Slot {
    std::atomic<int> fd { -1 };
    std::atomic<JobId> job { 0 };
    std::atomic<const StartWatch*> owner { nullptr }; // tests run several daemons at once
};
std::array<Slot, StartWatch::kWatched> g_open;

extern "C" void on_fatal_signal(int signal)
{
    static constexpr char kCrashed[] = "crashed\n";
    for (Slot& slot : g_open)
        if (const int fd = slot.fd.load(); fd >= 0) [[maybe_unused]]
            const auto written = ::write(fd, kCrashed, sizeof kCrashed - 1);
    std::signal(signal, SIG_DFL);
    std::raise(signal);
}

} // namespace

StartWatch::StartWatch(std::filesystem::path folder)
    : folder_(std::move(folder))
{
    std::error_code ec;
    std::filesystem::create_directories(folder_, ec);
}

std::filesystem::path StartWatch::file(JobId job) const
{
    return folder_ / ("job-" + std::to_string(job) + ".starting");
}

void StartWatch::starting(JobId job)
{
    const Record before = record(job);
    const std::string text = "starts " + std::to_string(before.starts + 1) + "\n" + (before.crashed ? "crashed\n" : "");
    const int fd = create_own_file(file(job)); // never a FIFO or a link left in its place
    if (fd < 0)
        return; // the watch is a safeguard: a job starts without it
    [[maybe_unused]] const auto written = ::write(fd, text.data(), text.size());
    for (Slot& slot : g_open) {
        int free = -1;
        if (slot.fd.compare_exchange_strong(free, fd)) {
            slot.job = job;
            slot.owner = this;
            return;
        }
    }
    ::close(fd);
}

void StartWatch::started(JobId job)
{
    for (Slot& slot : g_open)
        if (slot.owner.load() == this && slot.job.load() == job && slot.fd.load() >= 0) {
            slot.owner = nullptr;
            slot.job = 0;
            if (const int fd = slot.fd.exchange(-1); fd >= 0)
                ::close(fd);
        }
    forget(job);
}

StartWatch::Record StartWatch::record(JobId job) const
{
    Record r;
    std::istringstream in;
    try {
        in.str(read_file_text(file(job), 4096));
    } catch (const InputError&) {
        return r; // none, or not a marker this watch wrote
    }
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("starts ", 0) == 0)
            r.starts = std::atoi(line.c_str() + 7);
        else if (line == "crashed")
            r.crashed = true;
    }
    return r;
}

void StartWatch::forget(JobId job)
{
    std::error_code ec;
    std::filesystem::remove(file(job), ec);
}

void StartWatch::install_crash_handlers()
{
    for (const int signal : { SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL })
        std::signal(signal, on_fatal_signal);
}

} // namespace fulcrum::daemon
