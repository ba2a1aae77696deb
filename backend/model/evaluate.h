#pragma once

#include "data/dataset.h"
#include "model/model.h"

namespace fulcrum::model {

struct Evaluation {
    double loss = 0;
    double accuracy = 0;
};

// Loss and accuracy of `params` over a whole data set, in chunks to bound memory.
Evaluation evaluate(Model& model, ParamsView params, const data::Dataset& dataset, Eigen::Index chunk = 1000);

} // namespace fulcrum::model
