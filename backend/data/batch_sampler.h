#pragma once

#include "common/random.h"
#include "common/state_archive.h"
#include "data/dataset.h"

#include <cstdint>
#include <span>
#include <vector>

namespace fulcrum::data {

// A worker's own pass over the shared training set: a seeded permutation consumed in
// batches of whatever size the batch-size manager hands out this iteration, reshuffled
// when exhausted. Deterministic for a given seed and sequence of batch sizes.
class BatchSampler {
public:
    BatchSampler(Eigen::Index dataset_size, std::uint64_t seed);

    // Elastic PS: from now on draw only from `indices` (the worker's active data share), in
    // a fresh permutation from the same random stream. Throws std::invalid_argument if empty.
    void assign(std::vector<std::int64_t> indices);

    // Indices of the next `batch_size` samples (wrapping into a fresh permutation).
    std::span<const std::int64_t> next(std::int32_t batch_size);

    std::int64_t samples_drawn() const { return drawn_; }

    // A checkpoint: the stream, the permutation and where the pass stands.
    void save_state(StateWriter& out) const;
    void load_state(StateReader& in);

private:
    void reshuffle();

    std::int64_t dataset_size_;
    Rng rng_;
    std::vector<std::int64_t> permutation_;
    std::size_t cursor_ = 0;
    std::vector<std::int64_t> batch_;
    std::int64_t drawn_ = 0;
};

// Copies the given samples into `features` (dim x batch) and `labels`.
void gather(const Dataset& dataset, std::span<const std::int64_t> indices, Eigen::MatrixXf& features,
    std::vector<std::int32_t>& labels);

} // namespace fulcrum::data
