#include "train/federated_trainer.h"

#include <algorithm>
#include <stdexcept>

namespace fulcrum::train {

namespace {

TrainerConfig server_side(TrainerConfig config)
{
    // The server applies the weighted mean model difference as is: a unit step, no momentum.
    config.optimizer = ps::OptimizerSpec { 1.0f, 0.0f, 0.0f };
    config.aggregation = ps::Aggregation::Weighted;
    return config;
}

} // namespace

struct FederatedTrainer::Impl {
    Impl(TrainerConfig c, FederatedConfig f, TrainingObserver& o)
        : job(server_side(std::move(c)))
        , federated(f)
        , observer(o)
        , tuner(f.variant, static_cast<int>(job.workers.size()), f.batch_size, f.local_steps, f.learning_rate)
    {
        if (job.config.mode == ClockMode::Real)
            throw std::invalid_argument("federated runs use the virtual clock");
        if (job.config.elastic.enabled())
            throw std::invalid_argument("federated clients hold their own data; elastic resizing does not apply");
        if (job.config.worker_data.size() != job.workers.size())
            throw std::invalid_argument("every federated client needs its own data shard");
    }

    TrainingResult run(const std::atomic<bool>* stop)
    {
        const std::size_t n = job.workers.size();
        const std::string variant = balance::federated_variant_names()[static_cast<std::size_t>(federated.variant)];
        observer.on_event(job.event(0, 0, "job-started", std::to_string(n) + " federated clients, " + variant));
        TrainingResult result;
        double now = 0;
        std::int64_t samples = 0;
        std::vector<Eigen::VectorXf> deltas(n);
        std::vector<IterationRecord> rows(n);
        std::int64_t round = 0;
        for (; round < federated.rounds; ++round) {
            if (stop && stop->load(std::memory_order_relaxed)) {
                result.stopped = true;
                break;
            }
            const std::vector<balance::ClientPlan> plans = tuner.plan();
            const Eigen::VectorXf global = job.server.parameters();
            double round_end = now, train_loss = 0;
            std::vector<ps::GradientPush> pushes;
            std::int64_t data_total = 0;
            for (std::size_t i = 0; i < n; ++i) {
                Worker& client = *job.workers[i];
                const balance::ClientPlan& plan = plans[i];
                client.replica() = global;
                double compute = 0, loss = 0;
                for (int step = 0; step < plan.local_steps; ++step) {
                    loss += client.compute_gradient(plan.batch_size) / plan.local_steps;
                    client.replica() -= static_cast<float>(plan.learning_rate) * client.gradient();
                    compute += client.performance().compute(now + compute, plan.batch_size).duration_s;
                }
                const std::int64_t processed = static_cast<std::int64_t>(plan.batch_size) * plan.local_steps;
                tuner.observe(static_cast<int>(i), processed, compute);
                samples += processed;
                deltas[i] = global - client.replica();
                const auto shard = static_cast<std::int32_t>(job.config.worker_data[i]->size());
                pushes.push_back({ static_cast<WorkerId>(i), shard, deltas[i].data() });
                data_total += shard;

                IterationRecord& row = rows[i];
                row = IterationRecord {};
                row.job = job.config.job;
                row.worker = static_cast<WorkerId>(i);
                row.iteration = round;
                row.start_s = now;
                row.batch_size = plan.batch_size;
                row.compute_s = compute;
                row.comm_s = perf::communication_time(client.setup().network, job.model_bytes, round);
                row.end_s = now + row.compute_s + row.comm_s;
                row.speed = compute > 0 ? static_cast<double>(processed) / compute : 0;
                row.cpu_share = 1;
                row.memory_share = 1;
                row.loss = loss;
                row.decision = variant + " tau=" + std::to_string(plan.local_steps)
                    + " lr=" + std::to_string(plan.learning_rate);
                round_end = std::max(round_end, row.end_s);
            }
            for (std::size_t i = 0; i < n; ++i) {
                rows[i].wait_s = round_end - rows[i].end_s;
                train_loss
                    += rows[i].loss * static_cast<double>(pushes[i].batch_size) / static_cast<double>(data_total);
            }
            job.server.apply_barrier(pushes);
            now = round_end;
            const double epoch = static_cast<double>(samples) / static_cast<double>(job.config.train->size());
            if ((round + 1) % federated.eval_interval == 0 || round + 1 == federated.rounds) {
                result.final_evaluation = job.evaluate(round, now, epoch, train_loss);
                result.best_accuracy = std::max(result.best_accuracy, result.final_evaluation.test_accuracy);
                observer.on_evaluation(result.final_evaluation);
                if (job.config.target_accuracy && !result.target_time_s
                    && result.final_evaluation.test_accuracy >= *job.config.target_accuracy) {
                    result.target_time_s = now;
                    result.target_updates = round + 1;
                }
            }
            observer.on_iteration(rows);
        }
        job.finish(result, round, samples, now, 0, observer);
        observer.on_event(job.event(std::max<std::int64_t>(0, round - 1), now,
            result.stopped ? "job-stopped" : "job-finished", std::to_string(round) + " rounds"));
        return result;
    }

    JobState job;
    FederatedConfig federated;
    TrainingObserver& observer;
    balance::FederatedTuner tuner;
};

FederatedTrainer::FederatedTrainer(TrainerConfig config, FederatedConfig federated, TrainingObserver& observer)
    : impl_(std::make_unique<Impl>(std::move(config), federated, observer))
{
}

FederatedTrainer::~FederatedTrainer() = default;

TrainingResult FederatedTrainer::run(const std::atomic<bool>* stop)
{
    return impl_->run(stop);
}

} // namespace fulcrum::train
