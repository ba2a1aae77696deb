#include "train/trainer.h"

#include "train/async_trainer.h"
#include "train/bsp_trainer.h"

namespace fulcrum::train {

std::unique_ptr<Trainer> make_trainer(TrainerConfig config, std::unique_ptr<balance::BatchSizeManager> manager,
                                      TrainingObserver& observer)
{
    if (sync::closes_every_iteration(config.sync.type))
        return std::make_unique<BspTrainer>(std::move(config), std::move(manager), observer);
    return std::make_unique<AsyncTrainer>(std::move(config), std::move(manager), observer);
}

} // namespace fulcrum::train
