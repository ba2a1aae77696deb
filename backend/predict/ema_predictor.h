#pragma once

#include "predict/speed_predictor.h"

namespace fulcrum::predict {

// Exponential moving average: s = alpha * v + (1 - alpha) * s, started at the first speed.
class EmaPredictor final : public SpeedPredictor {
public:
    explicit EmaPredictor(double alpha = 0.2);
    std::string name() const override { return "ema"; }
    void observe(const SpeedSample& sample) override;
    double predict(const ResourceState&) override { return value_; }
    double value() const { return value_; }
    void save_state(StateWriter& out) const override
    {
        out.put(value_);
        out.put(started_);
    }
    void load_state(StateReader& in) override
    {
        value_ = in.get<double>("EMA");
        started_ = in.get_bool("EMA started");
    }

private:
    double alpha_;
    double value_ = 0;
    bool started_ = false;
};

} // namespace fulcrum::predict
