#pragma once

#include "common/records.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fulcrum::balance {

// What a worker reported at the barrier that just closed.
struct WorkerObservation {
    WorkerId worker = 0;
    std::int32_t batch_size = 0;
    double compute_s = 0;
    double comm_s = 0;
    double cpu_share = 0;
    double memory_share = 0;
};

// The batch-size manager's answer for the next iteration, one entry per worker.
struct Allocation {
    std::vector<std::int32_t> batch_sizes;
    std::vector<std::optional<double>> predicted_speeds;
    std::string decision; // short tag recorded with every row, e.g. "uniform" or "fixed"
};

// A batch-size policy of the LB-BSP BatchSizeManager: called at every barrier with the
// workers' last observations, returns the next sizes. The sizes always sum to the job's
// total batch X.
class BatchSizePolicy {
public:
    virtual ~BatchSizePolicy() = default;
    virtual std::string name() const = 0;
    virtual Allocation initial(int workers, std::int32_t total_batch) = 0;
    virtual Allocation next(const std::vector<WorkerObservation>& observations, std::int32_t total_batch) = 0;
};

} // namespace fulcrum::balance
