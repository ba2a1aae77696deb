#include "data/synthetic.h"

#include "common/random.h"

namespace fulcrum::data {

namespace {
std::shared_ptr<Dataset> draw(const Eigen::MatrixXf& centres, Eigen::Index n, Rng& rng, std::string name)
{
    auto dataset = std::make_shared<Dataset>();
    dataset->name = std::move(name);
    dataset->classes = static_cast<int>(centres.cols());
    dataset->features.resize(centres.rows(), n);
    dataset->labels.resize(static_cast<std::size_t>(n));
    for (Eigen::Index i = 0; i < n; ++i) {
        const auto label = static_cast<std::int32_t>(uniform_index(rng, static_cast<std::uint64_t>(centres.cols())));
        dataset->labels[static_cast<std::size_t>(i)] = label;
        for (Eigen::Index d = 0; d < centres.rows(); ++d)
            dataset->features(d, i) = centres(d, label) + static_cast<float>(standard_normal(rng));
    }
    return dataset;
}
} // namespace

TrainTest make_synthetic(const SyntheticSpec& spec)
{
    Rng rng = make_rng(spec.seed, Stream::Data);
    Eigen::MatrixXf centres(spec.dim, spec.classes);
    for (Eigen::Index c = 0; c < centres.cols(); ++c)
        for (Eigen::Index d = 0; d < centres.rows(); ++d)
            centres(d, c)
                = spec.separation * static_cast<float>(standard_normal(rng)) / std::sqrt(float(spec.dim)) * 2.0f;
    return { draw(centres, spec.train_size, rng, "synthetic/train"),
        draw(centres, spec.test_size, rng, "synthetic/test") };
}

} // namespace fulcrum::data
