#pragma once

#include "balance/batch_size_manager.h"
#include "train/job_control.h"
#include "train/job_state.h"
#include "train/training_observer.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

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
    // After resume_from_checkpoint(): per worker, the last iteration whose row the job handed
    // over before the checkpoint, when that is not the checkpoint's own iteration for every
    // worker (the free-running models, whose workers' clocks differ); else empty.
    virtual std::vector<std::int64_t> rows_recorded_through() const = 0;

    // Operator and system requests, from any thread.
    virtual JobControl& control() = 0;
    // The job's BatchSizeManager. Its policy() only between safe points: before or after
    // run(), or on the trainer's thread (an observer's callback).
    virtual balance::BatchSizeManager& manager() = 0;
};

class JobCore;
class BarrierEngine;
class FreeRunningEngine;

// The trainer of one job, whatever its sync model: the job's state (JobCore) and the two
// engines that run the sync models on it, BarrierEngine (bsp, backup) and FreeRunningEngine
// (asp, ssp, elastic-bsp). A set-sync-model that crosses from one family to the other ends
// the running engine's segment at its safe point and the other engine goes on from the same
// progress: parameters, optimizer state, samplers, clocks, pins and exclusions carry over.
// What cannot carry is refused when asked ("sync-model-not-switchable" for an elastic job
// or real mode, "policy-not-applicable" while a policy other than uniform is in effect).
class JobTrainer : public Trainer {
public:
    // `manager` may be null (a uniform policy's is made). Throws std::invalid_argument for a
    // configuration no engine can run.
    JobTrainer(TrainerConfig config, std::unique_ptr<balance::BatchSizeManager> manager, TrainingObserver& observer);
    ~JobTrainer() override;

    TrainingResult run(const std::atomic<bool>* stop = nullptr) override;
    // The checkpoint names the engine that took it; the job goes on in that one.
    void resume_from_checkpoint(const std::string& state) override;
    std::int64_t samples_trained() const override;
    std::vector<std::int64_t> rows_recorded_through() const override;
    JobControl& control() override;
    balance::BatchSizeManager& manager() override;
    const ps::ParameterServer& server() const;
    const TrainerConfig& config() const;

private:
    std::unique_ptr<JobCore> core_;
    std::unique_ptr<BarrierEngine> barrier_;
    std::unique_ptr<FreeRunningEngine> free_running_;
    bool resumed_ = false;
    bool resumed_free_running_ = false;
};

// A job's trainer for `config.sync`. Throws std::invalid_argument for a configuration the
// trainer cannot run.
std::unique_ptr<Trainer> make_trainer(
    TrainerConfig config, std::unique_ptr<balance::BatchSizeManager> manager, TrainingObserver& observer);

} // namespace fulcrum::train
