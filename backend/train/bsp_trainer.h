#pragma once

#include "balance/batch_size_manager.h"
#include "train/trainer.h"

#include <memory>

namespace fulcrum::train {

// A job that starts with a barrier every iteration (bsp or backup): LB-BSP and the models it
// is compared with. The BarrierEngine runs it; a set-sync-model may hand it to the
// free-running engine and back (JobTrainer).
class BspTrainer final : public JobTrainer {
public:
    // Throws std::invalid_argument unless the config's sync model is bsp or backup.
    BspTrainer(
        const TrainerConfig& config, std::unique_ptr<balance::BatchSizePolicy> policy, TrainingObserver& observer);
    // `manager` may be null: a uniform policy's manager is made.
    BspTrainer(TrainerConfig config, std::unique_ptr<balance::BatchSizeManager> manager, TrainingObserver& observer);
};

} // namespace fulcrum::train
