#pragma once

#include "balance/federated_tuning.h"
#include "train/trainer.h"

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
//
// A Trainer like every other: its control mailbox is applied at the start of each round.
// A pause holds the round, an injected straggler's local steps take longer, an excluded
// client sits rounds out (the others' models are averaged without it) and a pinned one
// trains with the pinned batch size. What rounds cannot take is refused when asked: a sync
// model ("sync-model-not-switchable"), a batch-size policy (the tuning variant sizes the
// clients: "policy-not-applicable") and elastic resizes (refused as events). It keeps no
// checkpoint.
class FederatedTrainer : public Trainer {
public:
    FederatedTrainer(TrainerConfig config, FederatedConfig federated, TrainingObserver& observer);
    ~FederatedTrainer() override;
    TrainingResult run(const std::atomic<bool>* stop = nullptr) override;
    void resume_from_checkpoint(const std::string& state) override; // throws: it keeps none
    std::int64_t samples_trained() const override { return 0; }
    std::vector<std::int64_t> rows_recorded_through() const override { return {}; }
    JobControl& control() override;
    balance::BatchSizeManager& manager() override;
    const ps::ParameterServer& server() const;
    const TrainerConfig& config() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace fulcrum::train
