#pragma once

#include "common/random.h"
#include "data/dataset.h"
#include "gpu/dense_pass.h"
#include "gpu/resident_step.h"
#include "model/dense_network.h"
#include "model/model_factory.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <memory>
#include <random>
#include <span>
#include <vector>

namespace fulcrum::gpu::testing {

// The three models of the papers, small enough to check coordinate by coordinate.
struct ModelCase {
    const char* name;
    std::unique_ptr<model::Model> (*make)();
};
inline std::vector<ModelCase> model_cases()
{
    return {
        { "softmax", [] { return model::make_softmax_regression(12, 5); } },
        { "svm", [] { return model::make_linear_svm(12, 5); } },
        { "mlp",
            [] {
                return model::make_mlp(12, { 16, 8 }, 5);
            } },
    };
}

inline NetworkShape shape_of(const model::Model& m)
{
    const auto& network = dynamic_cast<const model::DenseNetwork&>(m);
    return { { network.layer_sizes().begin(), network.layer_sizes().end() }, network.head() };
}

inline std::span<float> view(model::Vector& v)
{
    return { v.data(), static_cast<std::size_t>(v.size()) };
}

// A training step for model `m` over `set`, resident in `ops`' memory.
inline gpu::ResidentStep step_on(std::unique_ptr<gpu::DenseOps> ops, const model::Model& m, const data::Dataset& set)
{
    return gpu::ResidentStep(std::move(ops), shape_of(m),
        { set.features.data(), static_cast<std::size_t>(set.features.size()) }, set.labels);
}

// A labelled data set of `samples` Gaussian points in `dim` dimensions.
inline data::Dataset random_dataset(Eigen::Index dim, Eigen::Index samples, int classes, std::uint64_t seed)
{
    Rng rng(seed);
    data::Dataset d;
    d.name = "random";
    d.classes = classes;
    d.features.resize(dim, samples);
    for (Eigen::Index i = 0; i < d.features.size(); ++i)
        d.features.data()[i] = static_cast<float>(standard_normal(rng));
    for (Eigen::Index j = 0; j < samples; ++j)
        d.labels.push_back(static_cast<std::int32_t>(rng() % static_cast<std::uint64_t>(classes)));
    return d;
}

// Every coordinate within `relative` of the reference, relative to the reference's largest
// magnitude (a gradient's small coordinates are noise-level in float).
inline void expect_close(const float* got, const float* want, std::size_t n, double relative, const char* what)
{
    double scale = 0;
    for (std::size_t i = 0; i < n; ++i)
        scale = std::max(scale, static_cast<double>(std::abs(want[i])));
    ASSERT_GT(scale, 0) << what << " is all zeros";
    std::size_t worst = 0;
    double worst_error = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double error = std::abs(static_cast<double>(got[i]) - want[i]) / scale;
        if (error > worst_error) {
            worst_error = error;
            worst = i;
        }
    }
    EXPECT_LE(worst_error, relative) << what << ": coordinate " << worst << " is " << got[worst] << ", expected "
                                     << want[worst];
}

// `batch` sample indices drawn at random from a set of `set_size`.
inline std::vector<std::int64_t> random_samples(Rng& rng, int batch, std::int64_t set_size)
{
    std::uniform_int_distribution<std::int64_t> pick(0, set_size - 1);
    std::vector<std::int64_t> samples(static_cast<std::size_t>(batch));
    for (auto& s : samples)
        s = pick(rng);
    return samples;
}

// A device step's loss and gradient (into `got`) against the host reference's (into `want`)
// on the same parameters and samples.
inline void expect_step_matches(gpu::ResidentStep& device, gpu::ResidentStep& host, model::Vector& params,
    std::span<const std::int64_t> samples, model::Vector& got, model::Vector& want)
{
    const double want_loss = host.loss_and_gradient(view(params), samples, view(want));
    EXPECT_NEAR(device.loss_and_gradient(view(params), samples, view(got)), want_loss, 1e-4 * std::max(1.0, want_loss));
    expect_close(got.data(), want.data(), static_cast<std::size_t>(got.size()), 1e-4, "gradient");
}

} // namespace fulcrum::gpu::testing
