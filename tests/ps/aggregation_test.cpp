#include "data/batch_sampler.h"
#include "data/synthetic.h"
#include "model/model_factory.h"
#include "ps/parameter_server.h"

#include <gtest/gtest.h>

using namespace fulcrum;

TEST(KeyRanges, CoverEveryKeyOnceWithBalancedSizes)
{
    const auto ranges = ps::split_key_ranges(10, 3);
    ASSERT_EQ(ranges.size(), 3u);
    EXPECT_EQ(ranges[0], (ps::KeyRange { 0, 4 }));
    EXPECT_EQ(ranges[1], (ps::KeyRange { 4, 7 }));
    EXPECT_EQ(ranges[2], (ps::KeyRange { 7, 10 }));
    EXPECT_THROW(ps::split_key_ranges(2, 3), std::invalid_argument);
}

// The property eq. 7 exists for: with unequal batches, weighting each worker's mean
// gradient by its batch size gives exactly the mean gradient over all samples.
TEST(WeightedAggregation, EqualsTheGradientOfTheUnionBatch)
{
    const auto data = data::make_synthetic(
        { .train_size = 200, .test_size = 10, .dim = 8, .classes = 3, .separation = 2, .seed = 1 });
    auto model = model::make_softmax_regression(8, 3);
    model::Vector params(model->parameter_count());
    model->initialize(params, 1);
    params.setConstant(0.05f);

    const std::vector<std::int32_t> sizes { 89, 21, 12, 6 };
    std::vector<std::int64_t> all;
    std::vector<model::Vector> gradients;
    std::int64_t next = 0;
    for (auto size : sizes) {
        std::vector<std::int64_t> indices;
        for (int k = 0; k < size; ++k)
            indices.push_back(next++);
        all.insert(all.end(), indices.begin(), indices.end());
        Eigen::MatrixXf features;
        std::vector<std::int32_t> labels;
        data::gather(*data.train, indices, features, labels);
        gradients.emplace_back(params.size());
        model->loss_and_gradient(params, features, labels, gradients.back());
    }
    Eigen::MatrixXf features;
    std::vector<std::int32_t> labels;
    data::gather(*data.train, all, features, labels);
    model::Vector full(params.size());
    model->loss_and_gradient(params, features, labels, full);

    for (auto aggregation : { ps::Aggregation::Weighted, ps::Aggregation::Naive }) {
        // One SGD step with learning rate 1 and no momentum: the change is the aggregate.
        ps::ParameterServer server(params, 3, { .learning_rate = 1.0f, .momentum = 0, .weight_decay = 0 }, aggregation);
        std::vector<ps::GradientPush> pushes;
        for (std::size_t i = 0; i < sizes.size(); ++i)
            pushes.push_back({ static_cast<WorkerId>(i), sizes[i], gradients[i].data() });
        server.apply_barrier(pushes);
        const model::Vector aggregate = params - server.parameters();
        const double error = (aggregate - full).norm() / full.norm();
        if (aggregation == ps::Aggregation::Weighted)
            EXPECT_LT(error, 1e-5);
        else
            EXPECT_GT(error, 1e-2); // eq. 5 over-weights the 6-sample worker
    }
}

TEST(ParameterServer, MomentumAccumulatesVelocity)
{
    Eigen::VectorXf initial = Eigen::VectorXf::Zero(4);
    ps::ParameterServer server(
        initial, 2, { .learning_rate = 0.1f, .momentum = 0.5f, .weight_decay = 0 }, ps::Aggregation::Weighted);
    const Eigen::VectorXf gradient = Eigen::VectorXf::Ones(4);
    const ps::GradientPush push { 0, 10, gradient.data() };
    server.apply_barrier({ &push, 1 });
    server.apply_barrier({ &push, 1 });
    // v1 = 1, w1 = -0.1; v2 = 0.5 + 1 = 1.5, w2 = -0.1 - 0.15 = -0.25
    EXPECT_NEAR(server.parameters()(3), -0.25f, 1e-6);
    EXPECT_EQ(server.version(), 2);
}

TEST(ParameterServer, PullAssemblesEveryShard)
{
    Eigen::VectorXf initial = Eigen::VectorXf::LinSpaced(7, 0, 6);
    ps::ParameterServer server(initial, 3, {}, ps::Aggregation::Weighted);
    Eigen::VectorXf replica = Eigen::VectorXf::Zero(7);
    server.pull(replica);
    EXPECT_EQ(replica, initial);
}
