#include "model/evaluate.h"

#include <vector>

namespace fulcrum::model {

Evaluation evaluate(Model& model, ParamsView params, const data::Dataset& dataset, Eigen::Index chunk)
{
    Evaluation result;
    Eigen::MatrixXf scores;
    std::int64_t correct = 0;
    for (Eigen::Index begin = 0; begin < dataset.size(); begin += chunk) {
        const Eigen::Index count = std::min(chunk, dataset.size() - begin);
        const Eigen::MatrixXf features = dataset.features.middleCols(begin, count);
        const std::span<const std::int32_t> labels(dataset.labels.data() + begin, static_cast<std::size_t>(count));
        model.scores(params, features, scores);
        result.loss += model.loss_from_scores(scores, labels) * static_cast<double>(count);
        for (Eigen::Index j = 0; j < count; ++j) {
            Eigen::Index predicted = 0;
            scores.col(j).maxCoeff(&predicted);
            correct += predicted == labels[static_cast<std::size_t>(j)];
        }
    }
    const auto n = static_cast<double>(dataset.size());
    result.loss /= n;
    result.accuracy = static_cast<double>(correct) / n;
    return result;
}

} // namespace fulcrum::model
