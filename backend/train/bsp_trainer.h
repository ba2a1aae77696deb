#pragma once

#include "balance/batch_size_manager.h"
#include "train/job_state.h"
#include "train/trainer.h"
#include "train/training_observer.h"

#include <atomic>
#include <memory>

namespace fulcrum::train {

// Bulk-synchronous parameter-server training of one job. Each iteration: the
// BatchSizeManager sizes every worker's batch, workers pull, compute real gradients in
// parallel and push, the server aggregates at the barrier and steps. Only the clock differs
// by mode: virtual and paced take batch times from the workers' performance models
// (discrete-event clock), real measures them on the worker threads. With backup workers
// (sync type "backup") the barrier closes at the (n - k)-th arrival and the stragglers'
// gradients are dropped.
class BspTrainer final : public Trainer {
public:
    BspTrainer(TrainerConfig config, std::unique_ptr<balance::BatchSizePolicy> policy, TrainingObserver& observer);
    // `manager` may be null: a uniform policy's manager is made.
    BspTrainer(TrainerConfig config, std::unique_ptr<balance::BatchSizeManager> manager, TrainingObserver& observer);
    ~BspTrainer() override;

    TrainingResult run(const std::atomic<bool>* stop = nullptr) override;
    // Bit for bit on the virtual clock: the resumed run goes on as the uninterrupted one would.
    void resume_from_checkpoint(const std::string& state) override;
    std::int64_t samples_trained() const override;

    // Its safe point is the barrier. set_sync_model switches between bsp and backup(k):
    // they differ only in how many arrivals close the barrier. A paused job holds before its
    // next iteration, paced mode resuming its clock where it stopped. An injected straggler
    // computes `slowdown` times longer on the virtual clock; in real mode its thread idles
    // for the extra time. Resizes (Elastic PS) are made between iterations.
    JobControl& control() override;
    balance::BatchSizeManager& manager() override;
    const ps::ParameterServer& server() const override;
    const TrainerConfig& config() const override;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace fulcrum::train
