#include "predict/ema_predictor.h"

#include <stdexcept>

namespace fulcrum::predict {

EmaPredictor::EmaPredictor(double alpha)
    : alpha_(alpha)
{
    if (!(alpha > 0 && alpha <= 1))
        throw std::invalid_argument("EMA alpha must be in (0, 1]");
}

void EmaPredictor::observe(const SpeedSample& sample)
{
    value_ = started_ ? alpha_ * sample.speed + (1 - alpha_) * value_ : sample.speed;
    started_ = true;
}

} // namespace fulcrum::predict
