#pragma once

#include "perf/resource_timeline.h"

#include <cstdint>

namespace fulcrum::perf {

struct ComputeTiming {
    double duration_s = 0;
    ResourceShare mean_share; // time-averaged over the computation
    double device_memory = 0; // GPU memory in use as a share of the device (0 for CPU workers)
};

// How long a worker takes to compute a batch in the virtual modes. CPU and GPU workers
// differ in shape (LB-BSP Sec. 4 and 5), the trainer sees only this.
class PerformanceModel {
public:
    virtual ~PerformanceModel() = default;
    virtual ComputeTiming compute(double start_s, std::int32_t batch_size) = 0;
    // The resource state a worker reports at a barrier, before it computes.
    virtual ResourceShare share_at(double t) = 0;
    // The largest batch that fits in memory (x_o), 0 for no limit.
    virtual std::int32_t batch_limit() const { return 0; }
    virtual double device_memory(std::int32_t /*batch_size*/) const { return 0; }
    // A checkpoint: the random streams and generated load that decide the next batch times.
    virtual void save_state(StateWriter& out) const = 0;
    virtual void load_state(StateReader& in) = 0;
};

} // namespace fulcrum::perf
