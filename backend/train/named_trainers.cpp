#include "train/async_trainer.h"
#include "train/bsp_trainer.h"

#include <stdexcept>

namespace fulcrum::train {

namespace {

TrainerConfig with_barriers(TrainerConfig config)
{
    if (!sync::closes_every_iteration(config.sync.type))
        throw std::invalid_argument("the BSP trainer starts bsp and backup jobs; " + sync::describe(config.sync)
            + " starts in the asynchronous trainer");
    return config;
}

TrainerConfig without_barriers(TrainerConfig config)
{
    if (sync::closes_every_iteration(config.sync.type))
        throw std::invalid_argument(
            "the asynchronous trainer starts asp, ssp and elastic-bsp jobs, not " + sync::describe(config.sync));
    return config;
}

std::unique_ptr<balance::BatchSizeManager> manager_for(
    const TrainerConfig& config, std::unique_ptr<balance::BatchSizePolicy> policy)
{
    if (!policy)
        return nullptr;
    std::vector<std::int32_t> limits;
    for (const auto& w : config.workers)
        limits.push_back(w.gpu ? w.gpu->batch_limit() : 0);
    return std::make_unique<balance::BatchSizeManager>(
        std::move(policy), static_cast<int>(config.workers.size()), config.total_batch, std::move(limits));
}

} // namespace

BspTrainer::BspTrainer(
    const TrainerConfig& config, std::unique_ptr<balance::BatchSizePolicy> policy, TrainingObserver& observer)
    : JobTrainer(with_barriers(config), manager_for(config, std::move(policy)), observer)
{
}

BspTrainer::BspTrainer(
    TrainerConfig config, std::unique_ptr<balance::BatchSizeManager> manager, TrainingObserver& observer)
    : JobTrainer(with_barriers(std::move(config)), std::move(manager), observer)
{
}

AsyncTrainer::AsyncTrainer(
    TrainerConfig config, std::unique_ptr<balance::BatchSizeManager> manager, TrainingObserver& observer)
    : JobTrainer(without_barriers(std::move(config)), std::move(manager), observer)
{
}

AsyncTrainer::AsyncTrainer(TrainerConfig config, TrainingObserver& observer)
    : AsyncTrainer(std::move(config), nullptr, observer)
{
}

} // namespace fulcrum::train
