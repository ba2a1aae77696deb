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

private:
    double alpha_;
    double value_ = 0;
    bool started_ = false;
};

} // namespace fulcrum::predict
