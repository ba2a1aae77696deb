#pragma once

#include <cmath>
#include <cstdint>

// The per-sample arithmetic of the loss heads. The same functions run in the CUDA kernels
// (one thread per sample) and in HostDenseOps, so the CPU tests check the kernels' math
// against the Eigen path on any machine.
#if defined(__CUDACC__)
#define FULCRUM_HOST_DEVICE __host__ __device__
#else
#define FULCRUM_HOST_DEVICE
#endif

namespace fulcrum::gpu {

// Softmax cross-entropy of one sample's scores (`classes` long, label y): returns its loss
// and, when `grad` is non-null, writes d(mean loss)/d(scores) with the mean over a batch
// of 1 / inv_batch samples. Shifted by the top score so that exp never overflows.
FULCRUM_HOST_DEVICE inline float softmax_cross_entropy_column(
    const float* scores, int classes, int y, float inv_batch, float* grad)
{
    float top = scores[0];
    for (int c = 1; c < classes; ++c)
        top = fmaxf(top, scores[c]);
    float sum = 0;
    for (int c = 0; c < classes; ++c)
        sum += expf(scores[c] - top);
    const float log_sum = logf(sum) + top;
    if (grad) {
        for (int c = 0; c < classes; ++c)
            grad[c] = expf(scores[c] - log_sum) * inv_batch;
        grad[y] -= inv_batch;
    }
    return log_sum - scores[y];
}

// Crammer-Singer multi-class hinge, max(0, 1 + max_{c != y} s_c - s_y), as above.
FULCRUM_HOST_DEVICE inline float multiclass_hinge_column(
    const float* scores, int classes, int y, float inv_batch, float* grad)
{
    int rival = -1;
    float rival_score = -INFINITY;
    for (int c = 0; c < classes; ++c)
        if (c != y && scores[c] > rival_score) {
            rival_score = scores[c];
            rival = c;
        }
    if (grad)
        for (int c = 0; c < classes; ++c)
            grad[c] = 0;
    const float margin = 1.0f + rival_score - scores[y];
    if (!(margin > 0))
        return 0;
    if (grad) {
        grad[rival] += inv_batch;
        grad[y] -= inv_batch;
    }
    return margin;
}

// 1 when the sample's top score (the first, on ties, as Eigen's maxCoeff) is its label.
FULCRUM_HOST_DEVICE inline float correct_column(const float* scores, int classes, int y)
{
    int best = 0;
    for (int c = 1; c < classes; ++c)
        if (scores[c] > scores[best])
            best = c;
    return best == y ? 1.0f : 0.0f;
}

} // namespace fulcrum::gpu
