#include "data/batch_sampler.h"
#include "data/synthetic.h"
#include "model/evaluate.h"
#include "model/model_factory.h"

#include <algorithm>
#include <gtest/gtest.h>

using namespace fulcrum;

namespace {

// Plain single-process SGD on the synthetic clusters: every model must learn them.
double train_and_evaluate(model::Model& model, const data::TrainTest& data, int steps, float learning_rate)
{
    model::Vector params(model.parameter_count()), gradient(model.parameter_count());
    model.initialize(params, 1);
    data::BatchSampler sampler(data.train->size(), 5);
    Eigen::MatrixXf features;
    std::vector<std::int32_t> labels;
    for (int k = 0; k < steps; ++k) {
        data::gather(*data.train, sampler.next(32), features, labels);
        model.loss_and_gradient(params, features, labels, gradient);
        params -= learning_rate * gradient;
    }
    return model::evaluate(model, params, *data.test).accuracy;
}

} // namespace

TEST(Training, EveryModelLearnsSeparableClusters)
{
    const auto data = data::make_synthetic(
        { .train_size = 2000, .test_size = 500, .dim = 16, .classes = 4, .separation = 3, .seed = 2 });
    for (auto make : { +[] { return model::make_softmax_regression(16, 4); },
             +[] { return model::make_linear_svm(16, 4); }, +[] { return model::make_mlp(16, { 32 }, 4); } }) {
        auto model = make();
        const double accuracy = train_and_evaluate(*model, data, 300, 0.1f);
        EXPECT_GT(accuracy, 0.85) << model->name();
    }
}

TEST(Evaluate, UntrainedModelIsNearChance)
{
    const auto data = data::make_synthetic(
        { .train_size = 100, .test_size = 2000, .dim = 16, .classes = 4, .separation = 3, .seed = 2 });
    auto model = model::make_softmax_regression(16, 4);
    model::Vector params = model::Vector::Zero(model->parameter_count());
    const auto e = model::evaluate(*model, params, *data.test, 300);
    EXPECT_NEAR(e.loss, std::log(4.0), 1e-4);
    EXPECT_LT(e.accuracy, 0.4);
}

TEST(ModelRegistry, EveryCatalogueTypeIsBuiltAndOnlyALayeredOneTakesHiddenLayers)
{
    for (const CatalogueEntry& t : model::model_catalogue()) {
        model::ModelSpec spec;
        spec.type = t.name;
        spec.hidden = { 8 };
        const auto m = model::make_model(spec, 16, 4);
        const bool hidden = std::find(t.fields.begin(), t.fields.end(), "hidden") != t.fields.end();
        EXPECT_EQ(model::has_hidden_layers(t.name), hidden) << t.name;
        EXPECT_EQ(model::layer_sizes(spec, 16, 4).size(), hidden ? 3u : 2u) << t.name;
        EXPECT_EQ(static_cast<double>(m->parameter_count()), model::parameter_count(model::layer_sizes(spec, 16, 4)))
            << t.name;
    }
    model::ModelSpec bad;
    bad.type = "cnn";
    EXPECT_THROW(model::make_model(bad, 16, 4), std::invalid_argument);
    EXPECT_THROW(model::has_hidden_layers("cnn"), std::invalid_argument);
}
