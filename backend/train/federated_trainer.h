#pragma once

#include "balance/federated_tuning.h"
#include "train/job_state.h"
#include "train/training_observer.h"

#include <atomic>
#include <memory>

namespace fulcrum::train {

struct FederatedConfig {
    balance::FederatedVariant variant = balance::FederatedVariant::TuneBatch;
    std::int32_t batch_size = 32; // B
    int local_steps = 10; // τ
    double learning_rate = 0.05; // η, the clients' local SGD step
    std::int64_t rounds = 50;
    std::int64_t eval_interval = 1; // rounds
};

// Cross-silo federated averaging on the virtual clock. Each client (a worker with its own
// data shard in TrainerConfig::worker_data) starts a round from the global model, runs its
// planned local SGD steps, and sends its model back; the server averages the models
// weighted by the clients' data sizes (FedAvg) by applying the averaged model difference
// through the parameter server with a unit step. One IterationRecord per client per round.
class FederatedTrainer {
public:
    FederatedTrainer(TrainerConfig config, FederatedConfig federated, TrainingObserver& observer);
    ~FederatedTrainer();
    TrainingResult run(const std::atomic<bool>* stop = nullptr);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace fulcrum::train
