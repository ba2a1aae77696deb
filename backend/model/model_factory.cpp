#include "model/model_factory.h"

#include "common/registry.h"
#include "model/dense_network.h"

#include <stdexcept>

namespace fulcrum::model {

std::unique_ptr<Model> make_softmax_regression(Eigen::Index input_dim, int classes)
{
    return std::make_unique<DenseNetwork>("softmax-" + std::to_string(input_dim) + "-" + std::to_string(classes),
        std::vector<Eigen::Index> { input_dim, classes }, LossHead::SoftmaxCrossEntropy);
}

std::unique_ptr<Model> make_linear_svm(Eigen::Index input_dim, int classes)
{
    return std::make_unique<DenseNetwork>("svm-" + std::to_string(input_dim) + "-" + std::to_string(classes),
        std::vector<Eigen::Index> { input_dim, classes }, LossHead::MulticlassHinge);
}

std::unique_ptr<Model> make_mlp(Eigen::Index input_dim, const std::vector<Eigen::Index>& hidden, int classes)
{
    std::vector<Eigen::Index> sizes { input_dim };
    std::string name = "mlp-" + std::to_string(input_dim);
    for (Eigen::Index width : hidden) {
        sizes.push_back(width);
        name += "-" + std::to_string(width);
    }
    sizes.push_back(classes);
    name += "-" + std::to_string(classes);
    return std::make_unique<DenseNetwork>(std::move(name), std::move(sizes), LossHead::SoftmaxCrossEntropy);
}

namespace {

struct ModelEntry {
    KindInfo kind;
    bool has_hidden_layers;
    std::unique_ptr<Model> (*make)(const ModelSpec& spec, Eigen::Index input_dim, int classes);
};

constexpr ModelEntry kModels[] = {
    { { "softmax", "multinomial logistic regression" }, false,
        [](const ModelSpec&, Eigen::Index input_dim, int classes) {
            return make_softmax_regression(input_dim, classes);
        } },
    { { "svm", "a multi-class linear SVM (Crammer-Singer hinge loss)" }, false,
        [](const ModelSpec&, Eigen::Index input_dim, int classes) { return make_linear_svm(input_dim, classes); } },
    { { "mlp", "a multi-layer perceptron: ReLU hidden layers, softmax cross-entropy output", false, {}, {}, "hidden" },
        true,
        [](const ModelSpec& spec, Eigen::Index input_dim, int classes) {
            return make_mlp(input_dim, spec.hidden, classes);
        } },
};

constexpr Registry<ModelEntry> kRegistry { "model type", kModels };

} // namespace

std::vector<std::string> model_types()
{
    return kRegistry.names();
}

std::vector<CatalogueEntry> model_catalogue()
{
    return kRegistry.catalogue();
}

bool has_hidden_layers(const std::string& type)
{
    return kRegistry.entry(type).has_hidden_layers;
}

std::vector<Eigen::Index> layer_sizes(const ModelSpec& spec, Eigen::Index input_dim, int classes)
{
    std::vector<Eigen::Index> sizes { input_dim };
    if (has_hidden_layers(spec.type))
        sizes.insert(sizes.end(), spec.hidden.begin(), spec.hidden.end());
    sizes.push_back(classes);
    return sizes;
}

double parameter_count(const std::vector<Eigen::Index>& layers)
{
    double count = 0; // in double: a hostile spec's count overflows no integer
    for (std::size_t i = 1; i < layers.size(); ++i)
        count += (static_cast<double>(layers[i - 1]) + 1) * static_cast<double>(layers[i]);
    return count;
}

std::unique_ptr<Model> make_model(const ModelSpec& spec, Eigen::Index input_dim, int classes)
{
    return kRegistry.entry(spec.type).make(spec, input_dim, classes);
}

} // namespace fulcrum::model
