#pragma once

#include "data/dataset.h"

#include <filesystem>

namespace fulcrum::data {

// Where Debian's dataset-fashion-mnist package puts the four IDX files.
inline const std::filesystem::path kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// Loads the 60,000 training and 10,000 test images (28x28, 10 classes). Pixels are scaled
// to [0, 1] and then standardised with the training set's mean and standard deviation
// (the test set uses the training statistics). A missing directory or file throws an
// InputError that names the Debian package to install.
TrainTest load_fashion_mnist(const std::filesystem::path& dir = kFashionMnistDir);

// Images and labels from one IDX pair, scaled to [0, 1], not standardised.
Dataset load_idx_pair(
    const std::filesystem::path& images, const std::filesystem::path& labels, int classes, std::string name);

// Subtracts mean and divides by std (both taken from `reference`) in place.
void standardise(Dataset& dataset, float mean, float stddev);
std::pair<float, float> pixel_mean_std(const Dataset& dataset);

} // namespace fulcrum::data
