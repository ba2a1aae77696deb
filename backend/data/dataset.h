#pragma once

#include "common/eigen_core.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fulcrum::data {

// A labelled data set held column-wise: features.col(i) is sample i. Column-major samples
// let a batch be gathered with contiguous copies and fed to the models' GEMMs unchanged.
struct Dataset {
    std::string name;
    Eigen::MatrixXf features; // dim x size
    std::vector<std::int32_t> labels;
    int classes = 0;

    Eigen::Index size() const { return features.cols(); }
    Eigen::Index dim() const { return features.rows(); }
};

// Every worker reads the whole training set (the papers' shared-storage assumption); the
// test set is kept apart and used only for evaluation.
struct TrainTest {
    std::shared_ptr<const Dataset> train;
    std::shared_ptr<const Dataset> test;
};

} // namespace fulcrum::data
