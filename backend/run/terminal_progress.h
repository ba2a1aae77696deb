#pragma once

#include "common/progress_bar.h"
#include "run/run_scenario.h"

#include <cstdio>

namespace fulcrum::run {

// A training run's progress on the common ProgressBar: iteration, epoch, run clock and the
// latest test accuracy beside the bar.
class TerminalProgress {
public:
    explicit TerminalProgress(std::FILE* stream)
        : bar_(stream)
    {
    }
    void update(const Progress& progress);
    void status(const std::string& text) { bar_.status(text); }
    void finish() { bar_.finish(); }

private:
    ProgressBar bar_;
};

} // namespace fulcrum::run
