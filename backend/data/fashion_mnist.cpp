#include "data/fashion_mnist.h"

#include "common/error.h"
#include "data/idx_reader.h"

#include <cmath>

namespace fulcrum::data {

Dataset load_idx_pair(
    const std::filesystem::path& images, const std::filesystem::path& labels, int classes, std::string name)
{
    const IdxArray image_array = read_idx(images);
    const IdxArray label_array = read_idx(labels);
    if (image_array.dims.size() != 3)
        throw InputError(images.string(), "dimensions", "expected 3 (count, rows, columns)");
    if (label_array.dims.size() != 1)
        throw InputError(labels.string(), "dimensions", "expected 1 (count)");
    if (image_array.dims[0] != label_array.dims[0])
        throw InputError(labels.string(), "count",
            "has " + std::to_string(label_array.dims[0]) + " labels for " + std::to_string(image_array.dims[0])
                + " images");

    const Eigen::Index n = image_array.dims[0];
    const Eigen::Index dim = Eigen::Index(image_array.dims[1]) * image_array.dims[2];
    Dataset dataset;
    dataset.name = std::move(name);
    dataset.classes = classes;
    dataset.features = Eigen::Map<const Eigen::Matrix<std::uint8_t, Eigen::Dynamic, Eigen::Dynamic>>(
                           image_array.values.data(), dim, n)
                           .cast<float>()
        / 255.0f;
    dataset.labels.reserve(static_cast<std::size_t>(n));
    for (Eigen::Index i = 0; i < n; ++i) {
        const int label = label_array.values[static_cast<std::size_t>(i)];
        if (label >= classes)
            throw InputError(labels.string(), "label " + std::to_string(i),
                "is " + std::to_string(label) + ", expected 0.." + std::to_string(classes - 1));
        dataset.labels.push_back(label);
    }
    return dataset;
}

std::pair<float, float> pixel_mean_std(const Dataset& dataset)
{
    const double mean = dataset.features.cast<double>().mean();
    const double var = (dataset.features.cast<double>().array() - mean).square().mean();
    return { static_cast<float>(mean), static_cast<float>(std::sqrt(var)) };
}

void standardise(Dataset& dataset, float mean, float stddev)
{
    dataset.features.array() = (dataset.features.array() - mean) / (stddev > 0 ? stddev : 1.0f);
}

TrainTest load_fashion_mnist(const std::filesystem::path& dir)
{
    constexpr const char* kHint = "Fashion-MNIST not found; install it with: apt-get install dataset-fashion-mnist";
    if (!std::filesystem::is_directory(dir))
        throw InputError(dir.string(), "", kHint);
    const auto file = [&](const char* name) {
        auto path = dir / name;
        if (!std::filesystem::exists(path))
            throw InputError(path.string(), "", kHint);
        return path;
    };
    auto train = std::make_shared<Dataset>(load_idx_pair(
        file("train-images-idx3-ubyte.gz"), file("train-labels-idx1-ubyte.gz"), 10, "fashion-mnist/train"));
    auto test = std::make_shared<Dataset>(
        load_idx_pair(file("t10k-images-idx3-ubyte.gz"), file("t10k-labels-idx1-ubyte.gz"), 10, "fashion-mnist/test"));
    const auto [mean, stddev] = pixel_mean_std(*train);
    standardise(*train, mean, stddev);
    standardise(*test, mean, stddev);
    return { std::move(train), std::move(test) };
}

} // namespace fulcrum::data
