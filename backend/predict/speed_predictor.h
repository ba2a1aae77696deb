#pragma once

#include "common/state_archive.h"

#include <memory>
#include <string>

namespace fulcrum::predict {

// What a worker reports for one iteration k: its measured speed v^k (samples per second)
// and the CPU and memory shares c^k, m^k it had when the iteration started.
struct SpeedSample {
    double speed = 0;
    double cpu = 1;
    double memory = 1;
};

// The resource state at the start of the iteration being predicted (c^{k+1}, m^{k+1}):
// known at the barrier, before the worker computes.
struct ResourceState {
    double cpu = 1;
    double memory = 1;
};

// One worker's speed predictor (LB-BSP Sec. 4.1): observe each iteration's speed, predict
// the next. One instance per worker; not thread-safe.
class SpeedPredictor {
public:
    virtual ~SpeedPredictor() = default;
    virtual std::string name() const = 0;
    virtual void observe(const SpeedSample& sample) = 0;
    // Meaningful after at least one observation.
    virtual double predict(const ResourceState& next) = 0;
    // A checkpoint of what it learned, so a resumed job predicts exactly as before.
    virtual void save_state(StateWriter& out) const = 0;
    virtual void load_state(StateReader& in) = 0;
};

} // namespace fulcrum::predict
