#include "train/federated_trainer.h"

#include "common/error.h"
#include "train/job_core.h"

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
        : core(server_side(std::move(c)), nullptr, o)
        , job(core.job())
        , federated(f)
        , observer(o)
        , tuner(f.variant, static_cast<int>(job.workers.size()), f.batch_size, f.local_steps, f.learning_rate)
    {
        core.replace_control(std::make_unique<JobControl>(
            core.manager(), static_cast<int>(job.workers.size()), core.sync_model(), [](const sync::SyncSpec& spec) {
                throw RefusedRequest("sync-model-not-switchable",
                    "a federated job trains in rounds of local steps; " + sync::describe(spec) + " does not apply");
            }));
        core.control().refuse_policies(
            "a federated job's clients are sized by its tuning variant, not by a batch-size policy");
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
        observer.on_event(job.event(0, 0, EventKind::JobStarted, std::to_string(n) + " federated clients, " + variant));
        TrainingResult result;
        double now = 0;
        std::int64_t samples = 0;
        std::vector<Eigen::VectorXf> deltas(n);
        std::vector<IterationRecord> rows;
        std::int64_t round = 0;
        for (; round < federated.rounds; ++round) {
            if (core.stop_requested(stop)) {
                result.stopped = true;
                break;
            }
            // The round's safe point: the operator's requests since the last round.
            core.hold_if_paused(round, now, stop, "before round " + std::to_string(round));
            if (core.stop_requested(stop)) {
                result.stopped = true;
                break;
            }
            core.record_notes(round, now);
            refuse_resizes(round, now);
            core.apply_slowdowns(round, now);
            const balance::Allocation allocation
                = round == 0 ? core.manager().initial() : core.manager().next({}, round - 1, now);
            core.forward_manager_events(round, now);
            std::vector<balance::ClientPlan> plans = tuner.plan();
            const Eigen::VectorXf global = job.server.parameters();
            double round_end = now, train_loss = 0;
            std::vector<ps::GradientPush> pushes;
            rows.clear();
            std::int64_t data_total = 0;
            for (std::size_t i = 0; i < n; ++i) {
                if (allocation.batch_sizes[i] == 0)
                    continue; // excluded: sits the round out
                Worker& client = *job.workers[i];
                balance::ClientPlan& plan = plans[i];
                if (const auto pinned = core.manager().state(static_cast<WorkerId>(i)).pinned)
                    plan.batch_size = *pinned;
                client.replica() = global;
                double compute = 0, loss = 0;
                for (int step = 0; step < plan.local_steps; ++step) {
                    loss += client.compute_gradient(plan.batch_size) / plan.local_steps;
                    client.replica() -= static_cast<float>(plan.learning_rate) * client.gradient();
                    compute
                        += client.performance().compute(now + compute, plan.batch_size).duration_s * core.slowdown(i);
                }
                const std::int64_t processed = static_cast<std::int64_t>(plan.batch_size) * plan.local_steps;
                tuner.observe(static_cast<int>(i), processed, compute);
                samples += processed;
                deltas[i] = global - client.replica();
                const auto shard = static_cast<std::int32_t>(job.config.worker_data[i]->size());
                pushes.push_back({ static_cast<WorkerId>(i), shard, deltas[i].data() });
                data_total += shard;

                IterationRecord& row = rows.emplace_back();
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
            for (std::size_t r = 0; r < rows.size(); ++r) {
                rows[r].wait_s = round_end - rows[r].end_s;
                train_loss
                    += rows[r].loss * static_cast<double>(pushes[r].batch_size) / static_cast<double>(data_total);
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
        core.record_notes(std::max<std::int64_t>(0, round - 1), now); // asked for after its last round
        observer.on_event(job.event(std::max<std::int64_t>(0, round - 1), now,
            result.stopped ? EventKind::JobStopped : EventKind::JobFinished, std::to_string(round) + " rounds"));
        return result;
    }

    // Rounds have no Elastic PS: each request is refused as an event.
    void refuse_resizes(std::int64_t round, double now)
    {
        for (const ResizeRequest& request : core.control().take<ResizeRequest>()) {
            JobEvent e = job.event(round, now, EventKind::ResizeRefused,
                std::string(action_name(request.action))
                    + " refused (not-elastic): a federated job's clients hold their own data; it does not resize");
            e.actor = request.actor;
            e.answers = request.ticket;
            observer.on_event(e);
        }
    }

    JobCore core;
    JobState& job;
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

void FederatedTrainer::resume_from_checkpoint(const std::string&)
{
    throw InputError("checkpoint", "format", "a federated job keeps no checkpoint");
}

JobControl& FederatedTrainer::control()
{
    return impl_->core.control();
}

balance::BatchSizeManager& FederatedTrainer::manager()
{
    return impl_->core.manager();
}

const ps::ParameterServer& FederatedTrainer::server() const
{
    return impl_->job.server;
}

const TrainerConfig& FederatedTrainer::config() const
{
    return impl_->job.config;
}

} // namespace fulcrum::train
