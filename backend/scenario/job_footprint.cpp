#include "scenario/job_footprint.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace fulcrum::scenario {

namespace {

constexpr double kFloat = 4; // parameters, gradients, activations and features are floats
// Fashion-MNIST as Debian's dataset-fashion-mnist ships it: 60,000 + 10,000 images of 784
// pixels, held as floats, and their labels.
constexpr double kFashionSamples = 70'000, kFashionDim = 784;
constexpr double kEvaluationChunk = 1000; // model::evaluate's default
// Measured per job beyond its tensors (fulcrumd's VmRSS with a softmax job of two workers
// on synthetic data, bench/admission.sh): SQLite's page cache, the recorder's queues and
// the stacks its threads touch.
constexpr double kPerJob = 4.0 * (1 << 20);
constexpr double kPerWorker = 64.0 * (1 << 10); // its records, predictor and link state
constexpr double kPerRank = 16.0 * (1 << 10); // an external rank: its reports only
// Each thread's stack as glibc reserves it under the default `ulimit -s` (8 MiB): address
// space, which an RLIMIT_AS (ulimit -v) budget is made of; 200 jobs' threads reserved 4.8 GB.
constexpr double kThreadStack = 8.0 * (1 << 20);

} // namespace

std::string bytes_text(double bytes)
{
    const char* units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
    int unit = 0;
    while (bytes >= 1024 && unit < 5) {
        bytes /= 1024;
        ++unit;
    }
    char text[32];
    std::snprintf(text, sizeof text, bytes < 10 && unit > 0 ? "%.1f %s" : "%.0f %s", bytes, units[unit]);
    return text;
}

std::string JobFootprint::dominant_field() const
{
    const double parameters_part = model_bytes + replica_bytes;
    const double largest = std::max({ parameters_part, worker_bytes - replica_bytes, data_bytes });
    if (largest == data_bytes)
        return "data";
    if (largest == parameters_part)
        return hidden_layers ? "model.hidden" : "model";
    return "workers";
}

std::string JobFootprint::describe() const
{
    char params[32];
    std::snprintf(params, sizeof params, "%.3g", parameters);
    return bytes_text(own_bytes() + data_bytes) + " (" + params + " parameters: the servers' copies "
        + bytes_text(model_bytes) + ", the workers' " + bytes_text(worker_bytes) + "; the data set "
        + bytes_text(data_bytes) + ", shared with the jobs that read it too)";
}

JobFootprint estimate_footprint(const Scenario& s, int hardware_threads)
{
    JobFootprint f;
    f.job_bytes = kPerJob;
    const auto workers = static_cast<double>(s.workers.size());
    if (s.external) { // the model and the data live in the framework's processes
        f.worker_bytes = workers * kPerRank;
        f.threads = 2; // the job's and its recorder's
        f.job_bytes += f.threads * kThreadStack;
        return f;
    }
    double dim = kFashionDim, samples = kFashionSamples;
    int classes = 10;
    if (s.data.source == "synthetic") {
        dim = static_cast<double>(s.data.dim);
        samples = static_cast<double>(s.data.train_size + s.data.test_size);
        classes = s.data.classes;
        f.data_key = "synthetic:" + std::to_string(s.data.train_size) + "+" + std::to_string(s.data.test_size) + "x"
            + std::to_string(s.data.dim) + "/" + std::to_string(s.data.classes) + "@" + std::to_string(s.seed);
    } else {
        f.data_key = "fashion-mnist:" + s.data.path;
    }
    f.data_bytes = samples * (dim + 1) * kFloat; // features and an int32 label each

    std::vector<Eigen::Index> layers;
    try {
        layers = model::layer_sizes(s.model, static_cast<Eigen::Index>(dim), classes);
    } catch (const std::invalid_argument&) {
        layers = { static_cast<Eigen::Index>(dim), classes }; // the parser refused it already
    }
    f.parameters = model::parameter_count(layers);
    f.hidden_layers = layers.size() > 2;
    const double widths = std::accumulate(
        layers.begin() + 1, layers.end(), 0.0, [](double sum, Eigen::Index w) { return sum + static_cast<double>(w); });
    const double copy = f.parameters * kFloat;
    // Parameters, aggregate and (with momentum) its velocity; the evaluator's activations.
    f.model_bytes = copy * (s.optimizer.momentum > 0 ? 3 : 2) + kEvaluationChunk * widths * kFloat * 2;
    const double batch = s.total_batch; // a worker's batch may grow to the whole of it
    int local = 0;
    for (const WorkerSpec& w : s.workers) {
        f.worker_bytes += 2 * copy + kPerWorker; // replica and gradient (a remote one's frames)
        f.replica_bytes += 2 * copy;
        if (!w.remote) {
            f.worker_bytes += batch * (dim + 2 * widths) * kFloat; // the gathered batch, activations, deltas
            ++local;
        }
    }
    // The job's thread, its recorder's writer, and its compute threads: one per local worker
    // when each runs on its own (real mode, free-running sync models), else the pool the
    // scenario asks for.
    const bool own_threads = s.mode == Mode::Real || !sync::closes_every_iteration(s.sync.type);
    const int pool = s.threads > 0 ? s.threads : std::max(1, hardware_threads);
    f.threads = 2 + (own_threads ? local : std::min(pool, std::max(1, static_cast<int>(workers))));
    f.job_bytes += f.threads * kThreadStack;
    return f;
}

} // namespace fulcrum::scenario
