#include "train/job_state.h"

#include "model/evaluate.h"

#include <stdexcept>

namespace fulcrum::train {

namespace {

Eigen::VectorXf initial_parameters(const TrainerConfig& config)
{
    if (!config.prototype)
        throw std::invalid_argument("a job needs a model");
    Eigen::VectorXf params(config.prototype->parameter_count());
    config.prototype->initialize(params, config.seed);
    return params;
}

} // namespace

JobState::JobState(TrainerConfig c)
    : config(std::move(c))
    , server(initial_parameters(config), config.server_shards, config.optimizer, config.aggregation)
    , evaluator(config.prototype->clone())
    , run_start(std::chrono::steady_clock::now())
{
    if (config.workers.empty())
        throw std::invalid_argument("a job needs at least one worker");
    for (std::size_t i = 0; i < config.workers.size(); ++i)
        workers.push_back(std::make_unique<Worker>(static_cast<WorkerId>(i), config.workers[i], *config.prototype,
            i < config.worker_data.size() ? config.worker_data[i] : config.train, config.seed));
    model_bytes = config.comm_model_mb ? static_cast<std::int64_t>(*config.comm_model_mb * 1e6)
                                       : static_cast<std::int64_t>(sizeof(float)) * config.prototype->parameter_count();
}

double JobState::wall_seconds() const
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
}

std::vector<std::int32_t> JobState::batch_limits() const
{
    std::vector<std::int32_t> limits;
    for (const auto& w : workers)
        limits.push_back(w->performance().batch_limit());
    return limits;
}

EvaluationRecord JobState::evaluate(std::int64_t iteration, double time_s, double epoch, double train_loss)
{
    const Eigen::VectorXf params = server.parameters();
    const model::Evaluation e = model::evaluate(*evaluator, params, *config.test);
    EvaluationRecord record;
    record.job = config.job;
    record.iteration = iteration;
    record.time_s = time_s;
    record.wall_s = wall_seconds();
    record.epoch = epoch;
    record.train_loss = train_loss;
    record.test_loss = e.loss;
    record.test_accuracy = e.accuracy;
    return record;
}

void JobState::finish(TrainingResult& result, std::int64_t steps, std::int64_t samples, double now, double train_loss,
                      TrainingObserver& observer)
{
    result.iterations = steps;
    result.updates = steps;
    result.epochs = static_cast<double>(samples) / static_cast<double>(config.train->size());
    result.time_s = now;
    result.mean_iteration_s = steps > 0 ? now / static_cast<double>(steps) : 0;
    if (steps > 0 && result.final_evaluation.iteration != steps - 1) {
        result.final_evaluation = evaluate(steps - 1, now, result.epochs, train_loss);
        result.best_accuracy = std::max(result.best_accuracy, result.final_evaluation.test_accuracy);
        observer.on_evaluation(result.final_evaluation);
    }
    result.wall_s = wall_seconds();
}

EventRecord JobState::event(std::int64_t iteration, double time_s, std::string kind, std::string message) const
{
    EventRecord e;
    e.job = config.job;
    e.iteration = iteration;
    e.time_s = time_s;
    e.kind = std::move(kind);
    e.message = std::move(message);
    return e;
}

} // namespace fulcrum::train
