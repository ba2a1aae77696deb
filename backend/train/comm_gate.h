#pragma once

#include "common/records.h"

#include <atomic>
#include <functional>
#include <optional>
#include <vector>

namespace fulcrum::train {

// One barrier iteration's pushes and pulls as fulcrumd's communication scheduler sees them
// (daemon/link_schedule.h): the job's run-clock time, the bytes each worker moves, and each
// taking part worker's communication time alone on its link.
struct CommTransfer {
    double now = 0;
    double bytes = 0;
    std::vector<WorkerId> workers;
    std::vector<double> alone_s;
};
struct CommGrant {
    double wait_s = 0; // held for the links
    std::vector<double> stretch; // per worker of the transfer: eq. 5's T(k) / T(1)
};

// Asked before the transfer starts; answers nothing where no scheduler decides.
using CommGate = std::function<std::optional<CommGrant>(const CommTransfer&, const std::atomic<bool>*)>;

} // namespace fulcrum::train
