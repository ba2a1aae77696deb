#pragma once

#include "common/named_values.h"
#include "model/model.h"

#include <vector>

namespace fulcrum::model {

struct ModelSpec {
    std::string type = "mlp"; // a name in the models' registry: "softmax", "svm" or "mlp"
    std::vector<Eigen::Index> hidden = { 256, 128 }; // MLP hidden layer widths
};

// Multinomial logistic regression.
std::unique_ptr<Model> make_softmax_regression(Eigen::Index input_dim, int classes);
// Multi-class linear SVM, Crammer-Singer hinge loss (L2 regularisation comes from the optimizer's weight decay).
std::unique_ptr<Model> make_linear_svm(Eigen::Index input_dim, int classes);
// Multi-layer perceptron with ReLU hidden layers and a softmax cross-entropy output.
std::unique_ptr<Model> make_mlp(Eigen::Index input_dim, const std::vector<Eigen::Index>& hidden, int classes);

// The widths of the layers the model a scenario names has, input first and classes last,
// and its parameter count (weights and biases), known without allocating it: fulcrumd's
// admission estimates a job's memory from them. Throws std::invalid_argument for an
// unknown type.
std::vector<Eigen::Index> layer_sizes(const ModelSpec& spec, Eigen::Index input_dim, int classes);
double parameter_count(const std::vector<Eigen::Index>& layers);

// Builds the model a scenario names; throws std::invalid_argument for an unknown type.
std::unique_ptr<Model> make_model(const ModelSpec& spec, Eigen::Index input_dim, int classes);

std::vector<std::string> model_types();
std::vector<CatalogueEntry> model_catalogue(); // list-capabilities
// Whether the type takes model.hidden; throws std::invalid_argument for an unknown type.
bool has_hidden_layers(const std::string& type);

} // namespace fulcrum::model
