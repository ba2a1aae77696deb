#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fulcrum::sched {

// A DNN model as the scheduler sees it: per-iteration forward and backward time on one GPU,
// the gradient size every all-reduce moves, and the GPU memory a worker needs.
struct ModelTemplate {
    std::string name;
    double model_bytes = 0;
    double memory_gb = 0;
    int batch_size = 0;
    double forward_s = 0;
    double backward_s = 0;
};

// A data-parallel training job (Wang et al. Sec. III): each iteration is a DAG of a forward
// and a backward task on each of its GPUs, then one all-reduce that waits for every backward.
struct JobSpec {
    int id = 0;
    std::string name;
    ModelTemplate model;
    int gpus = 1;
    std::int64_t iterations = 1;
    double arrival_s = 0;

    double compute_per_iteration_s() const { return model.forward_s + model.backward_s; }
};

// A job refused at submission, and why (e.g. more GPUs than the cluster has).
struct RejectedJob {
    JobSpec job;
    std::string reason;
};

} // namespace fulcrum::sched
