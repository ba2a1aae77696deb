#pragma once

#include "predict/speed_predictor.h"

namespace fulcrum::predict {

// The next speed is the last one (the paper's "memoryless" baseline).
class MemorylessPredictor final : public SpeedPredictor {
public:
    std::string name() const override { return "memoryless"; }
    void observe(const SpeedSample& sample) override { last_ = sample.speed; }
    double predict(const ResourceState&) override { return last_; }
    void save_state(StateWriter& out) const override { out.put(last_); }
    void load_state(StateReader& in) override { last_ = in.get<double>("last speed"); }

private:
    double last_ = 0;
};

} // namespace fulcrum::predict
