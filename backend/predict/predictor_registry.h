#pragma once

#include "predict/narx_predictor.h"

#include <memory>
#include <string>
#include <vector>

namespace fulcrum::predict {

struct PredictorSpec {
    std::string type = "ema"; // memoryless, ema, arima, narx
    double ema_alpha = 0.2;
    NarxOptions narx;
};

const std::vector<std::string>& predictor_names();
// Throws std::invalid_argument for an unknown type. `worker` seeds NARX per worker.
std::unique_ptr<SpeedPredictor> make_predictor(const PredictorSpec& spec, int worker);

} // namespace fulcrum::predict
