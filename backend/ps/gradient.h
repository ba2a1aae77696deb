#pragma once

#include "common/records.h"

#include <cstdint>

namespace fulcrum::ps {

// How a server combines the workers' gradients at a barrier.
enum class Aggregation {
    // LB-BSP eq. 7: g = sum_i |B_i| g_i / X. Every sample counts equally however the
    // batch was split, which is what makes unequal batch sizes safe.
    Weighted,
    // LB-BSP eq. 5: g = (1/n) sum_i g_i. Over-weights the samples of small batches; kept
    // for comparison only.
    Naive,
};

// One worker's push: the mean gradient over its batch (a full-length vector; each shard
// reads its own key range) and the batch size it was computed on.
struct GradientPush {
    WorkerId worker = 0;
    std::int32_t batch_size = 0;
    const float* gradient = nullptr;
};

struct OptimizerSpec {
    float learning_rate = 0.05f;
    float momentum = 0.0f; // classical (heavy-ball) momentum
    float weight_decay = 0.0f; // L2 penalty added to the gradient
};

} // namespace fulcrum::ps
