#pragma once

#include "common/named_values.h"
#include "predict/narx_predictor.h"

#include <memory>
#include <string>
#include <vector>

namespace fulcrum {
class JsonFields;
}

namespace fulcrum::predict {

struct PredictorSpec {
    std::string type = "ema"; // memoryless, ema, arima, narx
    double ema_alpha = 0.2;
    NarxOptions narx;
    // NARX warm start: "none"; "peer" (a worker still on EMA starts from the first other
    // worker's trained network); or a model file written by an earlier run (text form of
    // NarxNetwork::serialize), used by every worker from its first iteration.
    std::string warm_start = "none";
    std::string warm_start_file;
};

// Reads a policy's "predictor" section into `spec` (its defaults stand for what is
// absent). Throws JsonFieldError.
void parse_predictor_spec(const JsonFields& section, PredictorSpec& spec);

// Reads a NARX model file. Throws std::invalid_argument naming the file and what is wrong.
NarxNetwork load_narx_model(const std::string& path);

const std::vector<std::string>& predictor_names();
// Every predictor with what it predicts from (list-capabilities).
std::vector<CatalogueEntry> predictor_catalogue();
// Throws std::invalid_argument for an unknown type. `worker` seeds NARX per worker.
std::unique_ptr<SpeedPredictor> make_predictor(const PredictorSpec& spec, int worker);

} // namespace fulcrum::predict
