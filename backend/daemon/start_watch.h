#pragma once

// Which jobs fulcrumd was starting when it died, so that a job that brings the daemon down
// as it starts is not started again at every restart (a crash loop under systemd's
// Restart=on-failure). A job's start runs from its thread's beginning until its trainer is
// built: loading its data, allocating its model and its workers' copies. Each start leaves
// DATA_DIR/jobs/job-N.starting counting the starts, removed once the trainer is built or the
// job ends (a short window, so that a kill -9 rarely falls in it); fulcrumd's fatal-signal handler (an abort, an
// uncaught exception, a segfault) writes "crashed" into every open one. Thread-safe.

#include "common/records.h"

#include <filesystem>

namespace fulcrum::daemon {

class StartWatch {
public:
    explicit StartWatch(std::filesystem::path folder); // DATA_DIR/jobs

    // Before the job's data is read: one more start counted, its marker kept open for
    // the crash handler (at most kWatched at once; more are counted, not watched).
    void starting(JobId job);
    // Its trainer was built, or it ended: the marker goes. Nothing for a job not starting.
    void started(JobId job);

    struct Record {
        int starts = 0; // starts that did not reach an iteration
        bool crashed = false; // fulcrumd died of a fatal signal during one of them
    };
    Record record(JobId job) const;
    void forget(JobId job); // its marker, after recovery decided

    // SIGSEGV, SIGABRT, SIGBUS, SIGFPE and SIGILL mark every open marker "crashed", then take
    // their default action (fulcrumd's main installs them; tests run in a child process).
    static void install_crash_handlers();
    static constexpr int kWatched = 256;

private:
    std::filesystem::path file(JobId job) const;
    std::filesystem::path folder_;
};

} // namespace fulcrum::daemon
