#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace fulcrum {

// The one progress display of the command-line tools: on a terminal a bar redrawn in place
// at most ten times a second with the time left; elsewhere (CI logs, pipes) one plain line
// per tenth of the work, so logs stay short and readable.
class ProgressBar {
public:
    explicit ProgressBar(std::FILE* stream);
    // `fraction` (0 to 1) of the work done and what to say beside it ("it 30/200  acc 0.81").
    void update(double fraction, const std::string& detail);
    // A line of its own ("loading data..."); the time left is measured from here on.
    void status(const std::string& text);
    // Ends a drawn bar's line.
    void finish();

private:
    std::FILE* stream_;
    bool interactive_;
    bool drawn_ = false;
    int last_decile_ = -1;
    std::chrono::steady_clock::time_point start_, last_draw_;
};

} // namespace fulcrum
