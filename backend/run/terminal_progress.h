#pragma once

#include "run/run_scenario.h"

#include <chrono>
#include <cstdio>

namespace fulcrum::run {

// A progress bar on a terminal (redrawn in place at most ten times a second), or one plain
// line per tenth of the run when the stream is not a terminal (CI logs, pipes).
class TerminalProgress {
public:
    explicit TerminalProgress(std::FILE* stream);
    void update(const Progress& progress);
    void status(const std::string& text);
    void finish();

private:
    std::FILE* stream_;
    bool interactive_;
    bool drawn_ = false;
    int last_decile_ = -1;
    std::chrono::steady_clock::time_point start_, last_draw_;
};

} // namespace fulcrum::run
