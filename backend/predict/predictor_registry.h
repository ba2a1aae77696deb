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

// NARX warm start: none; peer (a worker still on EMA starts from the first other worker's
// trained network); pooled (one network trained on all workers' samples, then each worker's
// own); or file (a model file written by an earlier run, the text form of
// NarxNetwork::serialize, used by every worker from its first iteration).
enum class WarmStart { None, Peer, Pooled, File };
std::string_view to_string(WarmStart w);

struct PredictorSpec {
    std::string type = "ema"; // a name in the predictors' registry
    double ema_alpha = 0.2;
    NarxOptions narx;
    WarmStart warm_start = WarmStart::None;
    std::string warm_start_file;
};

// Reads a policy's "predictor" section into `spec` (its defaults stand for what is
// absent). Throws JsonFieldError.
void parse_predictor_spec(const JsonFields& section, PredictorSpec& spec);

// Reads a NARX model file. Throws std::invalid_argument naming the file and what is wrong.
NarxNetwork load_narx_model(const std::string& path);

std::vector<std::string> predictor_names();
// Every predictor with what it predicts from (list-capabilities).
std::vector<CatalogueEntry> predictor_catalogue();
// Throws std::invalid_argument for an unknown type. `worker` seeds NARX per worker.
std::unique_ptr<SpeedPredictor> make_predictor(const PredictorSpec& spec, int worker);
// Whether the predictor a spec names trains a network that workers can share (a warm start
// from a peer, a pool or a file applies to it). Throws std::invalid_argument for an unknown type.
bool trains_network(const PredictorSpec& spec);

} // namespace fulcrum::predict
