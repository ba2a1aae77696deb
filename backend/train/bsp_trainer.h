#pragma once

#include "balance/batch_size_policy.h"
#include "common/records.h"
#include "ps/parameter_server.h"
#include "train/worker.h"

#include <atomic>
#include <memory>
#include <span>

namespace fulcrum::train {

enum class ClockMode { Virtual, Paced, Real };

struct TrainerConfig {
    JobId job = 0;
    std::shared_ptr<const data::Dataset> train;
    std::shared_ptr<const data::Dataset> test;
    std::shared_ptr<const model::Model> prototype;
    std::vector<WorkerSetup> workers;
    std::int32_t total_batch = 128;
    ps::OptimizerSpec optimizer;
    ps::Aggregation aggregation = ps::Aggregation::Weighted;
    int server_shards = 1;
    std::int64_t iterations = 100;
    std::int64_t eval_interval = 100;
    ClockMode mode = ClockMode::Virtual;
    double pace = 10.0;  // paced mode: virtual seconds per wall second
    std::uint64_t seed = 1;
    int threads = 0;     // compute threads for the virtual modes; 0 = hardware concurrency
};

// Receives everything a run produces, as it happens. The recorder, the progress bar and
// (later) the stream server are observers; the trainer knows none of them.
class TrainingObserver {
public:
    virtual ~TrainingObserver() = default;
    virtual void on_iteration(std::span<const IterationRecord> rows) = 0;
    virtual void on_evaluation(const EvaluationRecord& evaluation) = 0;
    virtual void on_event(const EventRecord& event) = 0;
};

struct TrainingResult {
    std::int64_t iterations = 0;
    double epochs = 0;
    double time_s = 0;           // run clock at the end
    double wall_s = 0;
    double mean_iteration_s = 0; // on the run clock
    EvaluationRecord final_evaluation;
    double best_accuracy = 0;
    bool stopped = false;        // ended early by a stop request
};

// Bulk-synchronous parameter-server training of one job. Each iteration: the batch-size
// policy sizes every worker's batch, workers pull, compute real gradients in parallel and
// push, the server aggregates at the barrier and steps. Only the clock differs by mode:
// virtual and paced take batch times from the workers' performance models (discrete-event
// clock), real measures them on the worker threads.
class BspTrainer {
public:
    BspTrainer(TrainerConfig config, std::unique_ptr<balance::BatchSizePolicy> policy, TrainingObserver& observer);
    ~BspTrainer();

    TrainingResult run(const std::atomic<bool>* stop = nullptr);

    const ps::ParameterServer& server() const;
    const TrainerConfig& config() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace fulcrum::train
