#include "train/bsp_trainer.h"

#include "engine/event_queue.h"
#include "engine/pacer.h"
#include "model/evaluate.h"
#include "perf/proc_stats.h"

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <algorithm>
#include <chrono>
#include <latch>
#include <stdexcept>
#include <thread>

namespace fulcrum::train {

namespace {

using SteadyClock = std::chrono::steady_clock;

double seconds_between(SteadyClock::time_point a, SteadyClock::time_point b)
{
    return std::chrono::duration<double>(b - a).count();
}

// What one worker's task measured on its thread (used as the clock in real mode).
struct Measured {
    double loss = 0;
    double pull_start = 0, pull_end = 0, compute_end = 0; // wall seconds since the run started
    double cpu_seconds = 0;
};

} // namespace

struct BspTrainer::Impl {
    Impl(TrainerConfig c, std::unique_ptr<balance::BatchSizePolicy> p, TrainingObserver& o)
        : config(std::move(c))
        , policy(std::move(p))
        , observer(o)
        , server(initial_parameters(config), config.server_shards, config.optimizer, config.aggregation)
        , evaluator(config.prototype->clone())
        , pool(static_cast<std::size_t>(pool_size(config)))
        , pacer(config.mode == ClockMode::Paced ? config.pace : 0.0)
    {
        if (config.workers.empty())
            throw std::invalid_argument("a job needs at least one worker");
        for (std::size_t i = 0; i < config.workers.size(); ++i)
            workers.push_back(std::make_unique<Worker>(static_cast<WorkerId>(i), config.workers[i], *config.prototype,
                config.train, config.seed));
        model_bytes = static_cast<std::int64_t>(sizeof(float)) * config.prototype->parameter_count();
    }

    ~Impl() { pool.join(); }

    static Eigen::VectorXf initial_parameters(const TrainerConfig& config)
    {
        Eigen::VectorXf params(config.prototype->parameter_count());
        config.prototype->initialize(params, config.seed);
        return params;
    }

    static int pool_size(const TrainerConfig& config)
    {
        const int workers = static_cast<int>(config.workers.size());
        // Real mode: one thread per worker, all computing at once as real workers would.
        if (config.mode == ClockMode::Real)
            return std::max(1, workers);
        const int threads = config.threads > 0 ? config.threads : static_cast<int>(std::thread::hardware_concurrency());
        return std::clamp(threads, 1, std::max(1, workers));
    }

    // Pull and compute on every worker in parallel; returns when all are done.
    std::vector<Measured> compute_all(const std::vector<std::int32_t>& sizes)
    {
        std::vector<Measured> measured(workers.size());
        std::latch done(static_cast<std::ptrdiff_t>(workers.size()));
        for (std::size_t i = 0; i < workers.size(); ++i)
            boost::asio::post(pool, [&, i] {
                Worker& worker = *workers[i];
                Measured& m = measured[i];
                m.pull_start = seconds_between(run_start, SteadyClock::now());
                server.pull(worker.replica());
                m.pull_end = seconds_between(run_start, SteadyClock::now());
                const double cpu_before = perf::thread_cpu_seconds();
                m.loss = worker.compute_gradient(sizes[i]);
                m.cpu_seconds = perf::thread_cpu_seconds() - cpu_before;
                m.compute_end = seconds_between(run_start, SteadyClock::now());
                done.count_down();
            });
        done.wait();
        return measured;
    }

    // Virtual clock: batch times from the performance models, arrivals through the event queue.
    double time_iteration_virtual(std::vector<IterationRecord>& rows)
    {
        const double barrier_open = clock.now();
        double barrier_close = barrier_open;
        std::size_t arrived = 0;
        for (std::size_t i = 0; i < workers.size(); ++i) {
            IterationRecord& row = rows[i];
            const perf::ComputeTiming timing = workers[i]->performance().compute(barrier_open, row.batch_size);
            row.start_s = barrier_open;
            row.compute_s = timing.duration_s;
            row.comm_s = perf::communication_time(workers[i]->setup().network, model_bytes);
            row.cpu_share = timing.mean_share.cpu;
            row.memory_share = timing.mean_share.memory;
            row.end_s = barrier_open + row.comm_s + row.compute_s;
            clock.schedule(row.end_s, [&, end = row.end_s] {
                ++arrived;
                barrier_close = end; // the queue runs arrivals in time order: the last one closes the barrier
            });
        }
        clock.run();
        if (arrived != workers.size())
            throw std::logic_error("barrier closed before every worker arrived");
        return barrier_close;
    }

    double time_iteration_real(std::vector<IterationRecord>& rows, const std::vector<Measured>& measured, double dispatched)
    {
        const double memory = perf::memory_available_share();
        double barrier_close = dispatched;
        for (std::size_t i = 0; i < workers.size(); ++i) {
            IterationRecord& row = rows[i];
            const Measured& m = measured[i];
            row.start_s = dispatched;
            row.comm_s = m.pull_end - m.pull_start;
            row.compute_s = m.compute_end - m.pull_end;
            row.end_s = m.compute_end;
            row.cpu_share = row.compute_s > 0 ? std::min(1.0, m.cpu_seconds / row.compute_s) : 1.0;
            row.memory_share = memory;
            barrier_close = std::max(barrier_close, row.end_s);
        }
        return barrier_close;
    }

    EvaluationRecord evaluate(std::int64_t iteration, double time_s, double epoch, double train_loss)
    {
        const Eigen::VectorXf params = server.parameters();
        const model::Evaluation e = model::evaluate(*evaluator, params, *config.test);
        EvaluationRecord record;
        record.job = config.job;
        record.iteration = iteration;
        record.time_s = time_s;
        record.wall_s = seconds_between(run_start, SteadyClock::now());
        record.epoch = epoch;
        record.train_loss = train_loss;
        record.test_loss = e.loss;
        record.test_accuracy = e.accuracy;
        return record;
    }

    EventRecord event(std::int64_t iteration, double time_s, std::string kind, std::string message) const
    {
        EventRecord e;
        e.job = config.job;
        e.iteration = iteration;
        e.time_s = time_s;
        e.kind = std::move(kind);
        e.message = std::move(message);
        return e;
    }

    TrainingResult run(const std::atomic<bool>* stop)
    {
        run_start = SteadyClock::now();
        TrainingResult result;
        const std::size_t n = workers.size();
        std::vector<balance::WorkerObservation> observations(n);
        std::vector<IterationRecord> rows(n);
        std::vector<ps::GradientPush> pushes(n);
        std::int64_t samples = 0;
        double now = 0, train_loss = 0;
        observer.on_event(event(0, 0, "job-started",
            std::to_string(n) + " workers, " + config.prototype->name() + ", total batch " + std::to_string(config.total_batch)
                + ", policy " + policy->name()));

        std::int64_t k = 0;
        for (; k < config.iterations; ++k) {
            if (stop && stop->load(std::memory_order_relaxed)) {
                result.stopped = true;
                break;
            }
            balance::Allocation allocation = k == 0 ? policy->initial(static_cast<int>(n), config.total_batch)
                                                    : policy->next(observations, config.total_batch);
            if (allocation.batch_sizes.size() != n)
                throw std::logic_error("policy " + policy->name() + " returned the wrong number of batch sizes");

            const double dispatched = config.mode == ClockMode::Real ? seconds_between(run_start, SteadyClock::now()) : now;
            const std::vector<Measured> measured = compute_all(allocation.batch_sizes);

            for (std::size_t i = 0; i < n; ++i) {
                IterationRecord& row = rows[i];
                row = IterationRecord {};
                row.job = config.job;
                row.worker = static_cast<WorkerId>(i);
                row.iteration = k;
                row.batch_size = allocation.batch_sizes[i];
                row.loss = measured[i].loss;
                row.predicted_speed = allocation.predicted_speeds.empty() ? std::nullopt : allocation.predicted_speeds[i];
                row.decision = allocation.decision;
            }
            const double barrier = config.mode == ClockMode::Real ? time_iteration_real(rows, measured, dispatched)
                                                                  : time_iteration_virtual(rows);
            train_loss = 0;
            for (std::size_t i = 0; i < n; ++i) {
                IterationRecord& row = rows[i];
                row.wait_s = barrier - row.end_s;
                row.speed = row.compute_s > 0 ? row.batch_size / row.compute_s : 0;
                observations[i] = { row.worker, row.batch_size, row.compute_s, row.comm_s, row.cpu_share, row.memory_share };
                pushes[i] = { row.worker, row.batch_size, workers[i]->gradient().data() };
                train_loss += row.loss * row.batch_size / config.total_batch;
                samples += row.batch_size;
            }
            server.apply_barrier(pushes);
            now = barrier;

            const double epoch = static_cast<double>(samples) / static_cast<double>(config.train->size());
            if ((k + 1) % config.eval_interval == 0 || k + 1 == config.iterations) {
                result.final_evaluation = evaluate(k, now, epoch, train_loss);
                result.best_accuracy = std::max(result.best_accuracy, result.final_evaluation.test_accuracy);
                observer.on_evaluation(result.final_evaluation);
            }
            // After the evaluation, so whoever shows progress shows this iteration's accuracy.
            observer.on_iteration(rows);
            if (config.mode == ClockMode::Paced)
                pacer.wait_until(now, stop);
        }

        result.iterations = k;
        result.epochs = static_cast<double>(samples) / static_cast<double>(config.train->size());
        result.time_s = now;
        result.mean_iteration_s = k > 0 ? now / static_cast<double>(k) : 0;
        if (k > 0 && result.final_evaluation.iteration != k - 1) {
            // Stopped between evaluations: evaluate what was trained so it is not lost.
            result.final_evaluation = evaluate(k - 1, now, result.epochs, train_loss);
            result.best_accuracy = std::max(result.best_accuracy, result.final_evaluation.test_accuracy);
            observer.on_evaluation(result.final_evaluation);
        }
        result.wall_s = seconds_between(run_start, SteadyClock::now());
        observer.on_event(event(std::max<std::int64_t>(0, k - 1), now, result.stopped ? "job-stopped" : "job-finished",
            std::to_string(k) + " iterations"));
        return result;
    }

    TrainerConfig config;
    std::unique_ptr<balance::BatchSizePolicy> policy;
    TrainingObserver& observer;
    ps::ParameterServer server;
    std::unique_ptr<model::Model> evaluator;
    std::vector<std::unique_ptr<Worker>> workers;
    std::int64_t model_bytes = 0;
    boost::asio::thread_pool pool;
    engine::EventQueue clock;
    engine::Pacer pacer;
    SteadyClock::time_point run_start;
};

BspTrainer::BspTrainer(TrainerConfig config, std::unique_ptr<balance::BatchSizePolicy> policy, TrainingObserver& observer)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(policy), observer))
{
}

BspTrainer::~BspTrainer() = default;

TrainingResult BspTrainer::run(const std::atomic<bool>* stop) { return impl_->run(stop); }
const ps::ParameterServer& BspTrainer::server() const { return impl_->server; }
const TrainerConfig& BspTrainer::config() const { return impl_->config; }

} // namespace fulcrum::train
