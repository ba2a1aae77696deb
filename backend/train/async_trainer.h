#pragma once

#include "train/job_state.h"
#include "train/trainer.h"
#include "train/training_observer.h"

#include <atomic>
#include <memory>

namespace fulcrum::train {

// Parameter-server training without a barrier per iteration, on the virtual clock:
//   asp          every push is applied at once, the worker pulls and goes on;
//   ssp          the same, but a worker more than s iterations ahead of the slowest waits;
//   elastic-bsp  workers run freely within a superstep, the superstep ends at a barrier whose
//                place is chosen from each worker's next R predicted end times (ZipLine or
//                another barrier-window algorithm), worker i running r_i iterations.
// Gradients are real and really stale: a worker's gradient is computed on the parameters
// it pulled and applied when its push arrives, after whatever others pushed meanwhile.
// Each push moves the model by its share of the total batch (x_i / X of the learning rate).
// `iterations` in the config counts server updates (pushes).
//
// Operators steer it as any job, through its JobControl, between two events of the clock:
// pins and exclusions size each worker's next batches (a batch under way is applied as it
// was computed; an excluded worker starts no more and holds no one back), injected
// stragglers compute slower, a pause holds the clock, and the sync model switches among
// asp, ssp and elastic-bsp (a worker's clock carries over; elastic-bsp starts a superstep
// once the batches under way arrive). A switch to bsp or backup is refused: they need the
// BSP trainer's barrier.
class AsyncTrainer final : public Trainer {
public:
    // `manager` may be null: a uniform policy's is made. Its policy must be uniform.
    AsyncTrainer(TrainerConfig config, std::unique_ptr<balance::BatchSizeManager> manager, TrainingObserver& observer);
    AsyncTrainer(TrainerConfig config, TrainingObserver& observer);
    ~AsyncTrainer() override;

    TrainingResult run(const std::atomic<bool>* stop = nullptr) override;
    // These sync models keep no checkpoint yet: throws InputError.
    void resume_from_checkpoint(const std::string& state) override;
    std::int64_t samples_trained() const override { return 0; }
    JobControl& control() override;
    balance::BatchSizeManager& manager() override;
    const ps::ParameterServer& server() const override;
    const TrainerConfig& config() const override;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace fulcrum::train
