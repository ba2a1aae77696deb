#include "common/random.h"
#include "model/dense_network.h"
#include "model/model_factory.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace fulcrum;

namespace {

struct Case {
    const char* name;
    std::unique_ptr<model::Model> (*make)();
};

std::unique_ptr<model::Model> softmax()
{
    return model::make_softmax_regression(6, 4);
}
std::unique_ptr<model::Model> svm()
{
    return model::make_linear_svm(6, 4);
}
std::unique_ptr<model::Model> mlp()
{
    return model::make_mlp(6, { 5, 4 }, 4);
}

class GradientCheck : public ::testing::TestWithParam<Case> { };

// Central differences in double precision of the float loss: each coordinate's analytic
// derivative must match the numerical one. Kinks (ReLU, hinge) are stepped over rarely
// with a small step; a handful of mismatches would still fail the 98 % bar.
TEST_P(GradientCheck, AnalyticGradientMatchesFiniteDifferences)
{
    auto model = GetParam().make();
    Rng rng(11);
    model::Vector params(model->parameter_count());
    model->initialize(params, 3);
    for (Eigen::Index i = 0; i < params.size(); ++i)
        params(i) += 0.1f * static_cast<float>(standard_normal(rng)); // biases off zero too
    Eigen::MatrixXf features(6, 8);
    for (Eigen::Index i = 0; i < features.size(); ++i)
        features.data()[i] = static_cast<float>(standard_normal(rng));
    const std::vector<std::int32_t> labels { 0, 1, 2, 3, 3, 2, 1, 0 };

    model::Vector gradient(params.size());
    model->loss_and_gradient(params, features, labels, gradient);
    model::Vector scratch(params.size());
    const float step = 1e-3f;
    int matching = 0;
    for (Eigen::Index i = 0; i < params.size(); ++i) {
        model::Vector plus = params, minus = params;
        plus(i) += step;
        minus(i) -= step;
        const double numeric = (model->loss_and_gradient(plus, features, labels, scratch)
                                   - model->loss_and_gradient(minus, features, labels, scratch))
            / (2.0 * step);
        const double analytic = gradient(i);
        if (std::abs(numeric - analytic) <= 2e-3 + 2e-2 * std::abs(analytic))
            ++matching;
    }
    EXPECT_GE(matching, static_cast<int>(0.98 * static_cast<double>(params.size())))
        << GetParam().name << ": " << matching << " of " << params.size() << " coordinates match";
}

INSTANTIATE_TEST_SUITE_P(Models, GradientCheck,
    ::testing::Values(Case { "softmax", softmax }, Case { "svm", svm }, Case { "mlp", mlp }),
    [](const ::testing::TestParamInfo<Case>& p) { return std::string(p.param.name); });

} // namespace

TEST(DenseNetwork, ParameterCountOfMlp784x256x128x10)
{
    const auto model = model::make_mlp(784, { 256, 128 }, 10);
    EXPECT_EQ(model->parameter_count(), 784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10);
    EXPECT_EQ(model->name(), "mlp-784-256-128-10");
}

TEST(DenseNetwork, SoftmaxLossOfZeroParametersIsLogOfClassCount)
{
    auto model = model::make_softmax_regression(3, 5);
    model::Vector params = model::Vector::Zero(model->parameter_count()), gradient(params.size());
    Eigen::MatrixXf features = Eigen::MatrixXf::Ones(3, 4);
    const std::vector<std::int32_t> labels { 0, 1, 2, 3 };
    EXPECT_NEAR(model->loss_and_gradient(params, features, labels, gradient), std::log(5.0), 1e-5);
}

TEST(DenseNetwork, HingeLossIsZeroWhenMarginsAreMet)
{
    auto model = model::make_linear_svm(2, 2);
    // W = [[2,0],[0,2]], b = 0: sample (1,0) of class 0 scores (2, 0): margin 2 > 1.
    model::Vector params(6);
    params << 2, 0, 0, 2, 0, 0;
    Eigen::MatrixXf features(2, 1);
    features << 1, 0;
    model::Vector gradient(6);
    const std::vector<std::int32_t> labels { 0 };
    EXPECT_EQ(model->loss_and_gradient(params, features, labels, gradient), 0.0);
    EXPECT_EQ(gradient.norm(), 0.0f);
}

TEST(ModelFactory, UnknownTypeIsRefused)
{
    EXPECT_THROW(model::make_model({ .type = "transformer", .hidden = {} }, 4, 2), std::invalid_argument);
}

// Eigen blocks products by the cache sizes it reads off the CPU, and the blocking changes
// the rounding (32 KiB L1 on AMD EPYC, 48 KiB on recent Xeons). A network pins them, so the
// same seed trains the same model on every machine.
TEST(DenseNetwork, PinsTheProductBlockingWhateverTheCpusCaches)
{
    const auto net = model::make_mlp(8, { 16 }, 3);
    EXPECT_EQ(Eigen::l1CacheSize(), 48 * 1024);
    EXPECT_EQ(Eigen::l2CacheSize(), 2 * 1024 * 1024);
    EXPECT_EQ(Eigen::l3CacheSize(), 32 * 1024 * 1024);
}
