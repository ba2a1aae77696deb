#pragma once

#include "balance/batch_size_manager.h"
#include "train/job_control.h"
#include "train/job_state.h"
#include "train/training_observer.h"

#include <atomic>
#include <memory>
#include <string>

namespace fulcrum::train {

// What the run layer and fulcrumd know of a job's trainer, whatever its sync model: run it,
// resume it from a checkpoint, and steer it through its control mailbox.
class Trainer {
public:
    virtual ~Trainer() = default;

    virtual TrainingResult run(const std::atomic<bool>* stop = nullptr) = 0;
    // Before run(): go on from a checkpoint this job wrote (TrainingObserver::on_checkpoint).
    // Throws InputError naming the part of a checkpoint that is damaged or another job's, or
    // saying that this trainer keeps none; the trainer is then fit only to be dropped.
    virtual void resume_from_checkpoint(const std::string& state) = 0;
    // After resume_from_checkpoint(): the samples trained on before the checkpoint (else 0).
    virtual std::int64_t samples_trained() const = 0;

    // Operator and system requests, from any thread.
    virtual JobControl& control() = 0;
    // The job's BatchSizeManager. Its policy() only between safe points: before or after
    // run(), or on the trainer's thread (an observer's callback).
    virtual balance::BatchSizeManager& manager() = 0;
    virtual const ps::ParameterServer& server() const = 0;
    virtual const TrainerConfig& config() const = 0;
};

// The trainer for `config.sync`: BspTrainer for bsp and backup, AsyncTrainer for asp, ssp
// and elastic-bsp. `manager` may be null (a uniform policy's is made). Throws
// std::invalid_argument for a configuration the trainer cannot run.
std::unique_ptr<Trainer> make_trainer(TrainerConfig config, std::unique_ptr<balance::BatchSizeManager> manager,
                                      TrainingObserver& observer);

} // namespace fulcrum::train
