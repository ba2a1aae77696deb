#pragma once

#include "predict/ema_predictor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fulcrum::balance {

// Cross-silo FedAvg with LB-BSP (the journal extension, Sec. 6): each round every client
// runs τ local iterations of batch B with learning rate η. The extension tunes B from each
// client's EMA speed and keeps τ and η, so every client does the same number of model
// steps of the same size. The two variants it rejects are kept so the comparison can be
// run: tuning τ (clients drift apart by step count on non-i.i.d. data) and scaling η with
// B (the linear scaling rule, which over-steps small-batch clients' noisy gradients).
enum class FederatedVariant { FedAvg, TuneBatch, TuneSteps, ScaleLearningRate };
const std::vector<std::string>& federated_variant_names(); // fedavg, tune-batch, tune-steps, scale-lr
FederatedVariant parse_federated_variant(const std::string& name); // throws std::invalid_argument

struct ClientPlan {
    std::int32_t batch_size = 32;
    int local_steps = 10;
    double learning_rate = 0.05;
};

class FederatedTuner {
public:
    FederatedTuner(FederatedVariant variant, int clients, std::int32_t batch_size, int local_steps,
        double learning_rate, double ema_alpha = 0.2);

    // The plan for the next round; before any observation every client gets (B, τ, η).
    std::vector<ClientPlan> plan() const;
    // A client's last round: `samples` processed in `compute_s` seconds.
    void observe(int client, std::int64_t samples, double compute_s);
    FederatedVariant variant() const { return variant_; }

private:
    FederatedVariant variant_;
    std::int32_t batch_size_;
    int local_steps_;
    double learning_rate_;
    std::vector<predict::EmaPredictor> speeds_;
    std::vector<bool> seen_;
};

} // namespace fulcrum::balance
