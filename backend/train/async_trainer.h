#pragma once

#include "train/job_state.h"
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
class AsyncTrainer {
public:
    AsyncTrainer(TrainerConfig config, TrainingObserver& observer);
    ~AsyncTrainer();

    TrainingResult run(const std::atomic<bool>* stop = nullptr);
    const ps::ParameterServer& server() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace fulcrum::train
