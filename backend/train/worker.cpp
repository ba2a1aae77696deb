#include "train/worker.h"

namespace fulcrum::train {

Worker::Worker(WorkerId id, const WorkerSetup& setup, const model::Model& prototype,
    std::shared_ptr<const data::Dataset> train, std::uint64_t seed)
    : id_(id)
    , setup_(setup)
    , model_(prototype.clone())
    , train_(std::move(train))
    , sampler_(train_->size(), derive_seed(seed, Stream::Sampling, static_cast<std::uint64_t>(id)))
    , performance_(
          perf::make_performance_model(setup, derive_seed(seed, Stream::Resources, static_cast<std::uint64_t>(id)),
              derive_seed(seed, Stream::Noise, static_cast<std::uint64_t>(id))))
    , replica_(model::Vector::Zero(prototype.parameter_count()))
    , gradient_(model::Vector::Zero(prototype.parameter_count()))
{
}

double Worker::compute_gradient(std::int32_t batch_size)
{
    data::gather(*train_, sampler_.next(batch_size), features_, labels_);
    return model_->loss_and_gradient(replica_, features_, labels_, gradient_);
}

} // namespace fulcrum::train
