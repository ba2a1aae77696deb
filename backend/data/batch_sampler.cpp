#include "data/batch_sampler.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

namespace fulcrum::data {

BatchSampler::BatchSampler(Eigen::Index dataset_size, std::uint64_t seed)
    : dataset_size_(dataset_size)
    , rng_(seed)
    , permutation_(static_cast<std::size_t>(dataset_size))
{
    std::iota(permutation_.begin(), permutation_.end(), 0);
    reshuffle();
}

void BatchSampler::assign(std::vector<std::int64_t> indices)
{
    if (indices.empty())
        throw std::invalid_argument("a worker's data share cannot be empty");
    permutation_ = std::move(indices);
    reshuffle();
}

void BatchSampler::reshuffle()
{
    // Fisher-Yates with our own index draw: std::shuffle's use of the engine is unspecified.
    for (std::size_t i = permutation_.size(); i > 1; --i)
        std::swap(permutation_[i - 1], permutation_[uniform_index(rng_, i)]);
    cursor_ = 0;
}

std::span<const std::int64_t> BatchSampler::next(std::int32_t batch_size)
{
    batch_.clear();
    while (std::ssize(batch_) < batch_size) {
        if (cursor_ == permutation_.size())
            reshuffle();
        batch_.push_back(permutation_[cursor_++]);
    }
    drawn_ += batch_size;
    return batch_;
}

void BatchSampler::save_state(StateWriter& out) const
{
    out.put(rng_);
    out.put_indices(permutation_);
    out.put(static_cast<std::uint64_t>(cursor_));
    out.put(drawn_);
}

void BatchSampler::load_state(StateReader& in)
{
    in.get(rng_, "sampler stream");
    in.get_indices(permutation_, "sampler permutation");
    if (permutation_.empty())
        in.fail("sampler permutation", "is empty: a worker's pass holds at least one sample");
    if (!std::ranges::all_of(permutation_, [this](std::int64_t i) { return i >= 0 && i < dataset_size_; }))
        in.fail("sampler permutation", "holds a sample outside the training set of " + std::to_string(dataset_size_));
    cursor_ = static_cast<std::size_t>(in.get<std::uint64_t>("sampler cursor"));
    if (cursor_ > permutation_.size())
        in.fail("sampler cursor", "lies past the permutation's end");
    drawn_ = in.get<std::int64_t>("samples drawn");
}

void gather(const Dataset& dataset, std::span<const std::int64_t> indices, Eigen::MatrixXf& features,
    std::vector<std::int32_t>& labels)
{
    features.resize(dataset.dim(), static_cast<Eigen::Index>(indices.size()));
    labels.resize(indices.size());
    for (std::size_t j = 0; j < indices.size(); ++j) {
        features.col(static_cast<Eigen::Index>(j)) = dataset.features.col(indices[j]);
        labels[j] = dataset.labels[static_cast<std::size_t>(indices[j])];
    }
}

} // namespace fulcrum::data
