#pragma once

#include "train/trainer.h"

#include <memory>

namespace fulcrum::train {

// A job that starts without a barrier per iteration (asp, ssp, elastic-bsp) on the virtual
// clock, its policy uniform. The FreeRunningEngine runs it; a set-sync-model may hand it to
// the barrier engine and back (JobTrainer). `iterations` in the config counts server
// updates (pushes).
class AsyncTrainer final : public JobTrainer {
public:
    // `manager` may be null: a uniform policy's is made. Throws std::invalid_argument unless
    // the config's sync model is asp, ssp or elastic-bsp.
    AsyncTrainer(TrainerConfig config, std::unique_ptr<balance::BatchSizeManager> manager, TrainingObserver& observer);
    AsyncTrainer(TrainerConfig config, TrainingObserver& observer);
};

} // namespace fulcrum::train
