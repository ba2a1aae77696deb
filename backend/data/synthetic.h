#pragma once

#include "data/dataset.h"

#include <cstdint>

namespace fulcrum::data {

struct SyntheticSpec {
    Eigen::Index train_size = 2000;
    Eigen::Index test_size = 500;
    Eigen::Index dim = 32;
    int classes = 4;
    float separation = 3.0f; // distance scale of the class centres relative to unit noise
    std::uint64_t seed = 1;
};

// Gaussian class clusters: a small, learnable stand-in for unit tests and for machines
// without the real data set. Never the default for a scenario.
TrainTest make_synthetic(const SyntheticSpec& spec);

} // namespace fulcrum::data
