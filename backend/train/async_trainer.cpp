#include "train/async_trainer.h"

#include "balance/policy_registry.h"
#include "common/error.h"
#include "engine/event_queue.h"
#include "engine/pacer.h"

#include <algorithm>
#include <deque>
#include <stdexcept>

namespace fulcrum::train {

struct AsyncTrainer::Impl {
    Impl(TrainerConfig c, std::unique_ptr<balance::BatchSizeManager> m, TrainingObserver& o)
        : job(std::move(c))
        , config(job.config)
        , manager(std::move(m))
        , observer(o)
        , pacer(config.mode == ClockMode::Paced ? config.pace : 0.0)
    {
        const int n = static_cast<int>(job.workers.size());
        sync::validate(config.sync, n);
        if (config.elastic.enabled())
            throw std::invalid_argument("elastic resizing needs barriers: use sync bsp or backup, not " + sync::describe(config.sync));
        if (sync::closes_every_iteration(config.sync.type))
            throw std::invalid_argument("the asynchronous trainer runs asp, ssp and elastic-bsp, not " + sync::describe(config.sync));
        if (config.mode == ClockMode::Real)
            throw std::invalid_argument(sync::describe(config.sync) + " runs in the virtual and paced modes");
        if (!manager)
            manager = balance::make_manager({}, n, config.total_batch, job.batch_limits());
        if (manager->workers() != n)
            throw std::invalid_argument("the batch-size manager was made for a different number of workers");
        if (manager->policy().name() != "uniform")
            throw std::invalid_argument(sync::describe(config.sync) + " has no barrier to balance at; its policy must be uniform, not "
                + manager->policy().name());
        sync_model = config.sync;
        kind = kind_of(sync_model.type);
        slowdown.assign(static_cast<std::size_t>(n), 1.0);
        control = std::make_unique<JobControl>(*manager, n, sync_model, [](const sync::SyncSpec& spec) {
            if (sync::closes_every_iteration(spec.type))
                throw RefusedRequest("sync-model-not-switchable", "a running " + std::string("asp, ssp or elastic-bsp")
                    + " job switches among those three; " + sync::describe(spec)
                    + " needs the BSP trainer's barrier, so submit the job again with it");
        });
        control->accept_policies(false);
        const balance::Allocation start = manager->initial();
        batch = start.batch_sizes;
        decisions = start.decisions;
        state.resize(static_cast<std::size_t>(n));
        for (auto& s : state)
            s.quota = 1; // the first ElasticBSP superstep is one plain BSP iteration: nothing is known yet
    }

    struct WorkerState {
        std::int64_t clock = 0;      // iterations completed
        std::int64_t quota = 0;      // elastic-bsp: run until clock reaches this
        bool busy = false;
        bool row_open = false;       // a finished iteration whose wait is not known yet
        IterationRecord row;
        std::deque<double> intervals;
    };

    enum class Kind { Asp, Ssp, ElasticBsp };

    static Kind kind_of(sync::SyncType type)
    {
        switch (type) {
        case sync::SyncType::Ssp:
            return Kind::Ssp;
        case sync::SyncType::ElasticBsp:
            return Kind::ElasticBsp;
        case sync::SyncType::Asp:
        case sync::SyncType::Bsp:
        case sync::SyncType::Backup:
            break;
        }
        return Kind::Asp;
    }

    // A worker with no batch (excluded) starts nothing and holds no one back.
    bool active(std::size_t i) const { return batch[i] > 0; }

    // The least clock of the active workers (SSP's bound and a re-included worker's start).
    std::int64_t slowest_clock() const
    {
        std::optional<std::int64_t> slowest;
        for (std::size_t i = 0; i < state.size(); ++i)
            if (active(i))
                slowest = std::min(slowest.value_or(state[i].clock), state[i].clock);
        return slowest.value_or(0);
    }

    // `slowest`: the least clock of all workers (SSP); starting a worker does not change it,
    // so one scan serves a whole pass over the workers.
    bool may_start(std::size_t i, std::int64_t slowest) const
    {
        const WorkerState& s = state[i];
        if (!active(i))
            return false;
        switch (kind) {
        case Kind::Ssp:
            return s.clock - slowest <= sync_model.staleness;
        case Kind::ElasticBsp:
            return s.clock < s.quota;
        case Kind::Asp:
            break;
        }
        return true;
    }

    void close_row(std::size_t i, double started_next)
    {
        WorkerState& s = state[i];
        if (!s.row_open)
            return;
        s.row.wait_s = std::max(0.0, started_next - s.row.end_s);
        s.row_open = false;
        observer.on_iteration(std::span<const IterationRecord>(&s.row, 1));
    }

    void start(std::size_t i, double t)
    {
        WorkerState& s = state[i];
        close_row(i, t);
        Worker& worker = *job.workers[i];
        job.server.pull(worker.replica());
        const std::int64_t pulled_version = job.server.version();
        const double loss = worker.compute_gradient(batch[i]);
        const perf::ComputeTiming timing = worker.performance().compute(t, batch[i]);
        IterationRecord& row = s.row;
        row = IterationRecord {};
        row.job = config.job;
        row.worker = static_cast<WorkerId>(i);
        row.iteration = s.clock;
        row.start_s = t;
        row.batch_size = batch[i];
        row.compute_s = timing.duration_s * slowdown[i];
        row.comm_s = perf::communication_time(worker.setup().network, job.model_bytes, s.clock);
        row.cpu_share = timing.mean_share.cpu;
        row.memory_share = timing.mean_share.memory;
        row.speed = row.compute_s > 0 ? row.batch_size / row.compute_s : 0;
        row.loss = loss;
        row.decision = decision_tag(i);
        row.end_s = t + row.comm_s + row.compute_s;
        s.busy = true;
        clock.schedule(row.end_s, [this, i, pulled_version] { arrive(i, pulled_version); });
    }

    std::string decision_tag(std::size_t i) const
    {
        std::string tag = kind == Kind::ElasticBsp ? "elastic-bsp r=" + std::to_string(state[i].quota - superstep_start[i])
                                                  : sync::describe(sync_model);
        if (i < decisions.size() && decisions[i] != manager->policy().name())
            tag += "/" + decisions[i]; // pinned
        return tag;
    }

    void arrive(std::size_t i, std::int64_t pulled_version)
    {
        const double t = clock.now();
        WorkerState& s = state[i];
        s.busy = false;
        if (done)
            return;
        // The batch it was started with: an operator's change applies to its next one.
        const std::int32_t pushed = s.row.batch_size;
        const ps::GradientPush push { static_cast<WorkerId>(i), pushed, job.workers[i]->gradient().data() };
        const std::int64_t staleness = job.server.version() - pulled_version;
        max_staleness = std::max(max_staleness, staleness);
        job.server.apply_barrier(std::span<const ps::GradientPush>(&push, 1),
            static_cast<float>(pushed) / static_cast<float>(config.total_batch));
        ++updates;
        samples += pushed;
        ++s.clock;
        s.intervals.push_back(t - s.row.start_s);
        while (static_cast<int>(s.intervals.size()) > sync_model.history)
            s.intervals.pop_front();
        s.row_open = true;
        train_loss = updates == 1 ? s.row.loss : 0.98 * train_loss + 0.02 * s.row.loss;
        now = t;

        if (updates % config.eval_interval == 0 || updates == config.iterations) {
            const double epoch = static_cast<double>(samples) / static_cast<double>(config.train->size());
            result.final_evaluation = job.evaluate(updates - 1, t, epoch, train_loss);
            result.best_accuracy = std::max(result.best_accuracy, result.final_evaluation.test_accuracy);
            observer.on_evaluation(result.final_evaluation);
            if (config.target_accuracy && !result.target_time_s && result.final_evaluation.test_accuracy >= *config.target_accuracy) {
                result.target_time_s = t;
                result.target_updates = updates;
                done = true;
            }
        }
        if (updates >= config.iterations || (stop_flag && stop_flag->load(std::memory_order_relaxed))) {
            result.stopped = updates < config.iterations && !result.target_time_s;
            done = true;
        }
        if (config.mode == ClockMode::Paced)
            pacer.wait_until(t, stop_flag);
        if (done)
            return;
        apply_control(t);
        if (!active(i))
            close_row(i, t); // excluded: its last row need not wait for a next start

        if (kind == Kind::ElasticBsp) {
            if (may_start(i, 0))
                start(i, t);
            else
                maybe_close_superstep(t);
            return;
        }
        // ASP starts the worker again at once; SSP may also release workers waiting on this one.
        const std::int64_t slowest = kind == Kind::Ssp ? slowest_clock() : 0;
        for (std::size_t j = 0; j < state.size(); ++j) {
            const std::size_t w = (i + j) % state.size();
            if (!state[w].busy && may_start(w, slowest))
                start(w, t);
        }
    }

    // ElasticBSP: when every worker has run its r_i iterations, synchronize and choose the
    // next barrier from the predicted end times.
    // The window is chosen over the active workers; an excluded one sits the superstep out.
    void maybe_close_superstep(double t)
    {
        for (std::size_t i = 0; i < state.size(); ++i)
            if (state[i].busy || (active(i) && state[i].clock < state[i].quota))
                return;
        std::vector<std::size_t> running;
        std::vector<std::deque<double>> intervals;
        for (std::size_t i = 0; i < state.size(); ++i)
            if (active(i)) {
                running.push_back(i);
                intervals.push_back(state[i].intervals);
            }
        const std::vector<double> free_at(running.size(), t);
        const sync::EndTimes ends = sync::predict_end_times(free_at, intervals, sync_model.range);
        const sync::BarrierWindow window = sync::choose_window(sync_model.algorithm, ends);
        ++supersteps;
        for (std::size_t i = 0; i < state.size(); ++i) {
            superstep_start[i] = state[i].clock;
            state[i].quota = state[i].clock;
        }
        for (std::size_t r = 0; r < running.size(); ++r)
            state[running[r]].quota += window.iterations[r];
        for (const std::size_t i : running)
            start(i, t);
    }

    // The safe point between two events: the operator's requests take effect here.
    void apply_control(double t)
    {
        const std::int64_t at = std::max<std::int64_t>(0, updates - 1);
        if (const std::optional<std::string> by = control->pause_requested()) {
            EventRecord paused = job.event(at, t, "job-paused", "held after update " + std::to_string(updates));
            paused.actor = *by;
            observer.on_event(paused);
            const auto [held, resumed_by] = control->hold(stop_flag);
            EventRecord resumed = job.event(at, t, "job-resumed", "after " + std::to_string(held) + " s");
            resumed.actor = resumed_by;
            pacer.shift(held);
            observer.on_event(resumed);
        }
        for (const JobControl::Slowdown& d : control->take_slowdowns()) {
            double& factor = slowdown[static_cast<std::size_t>(d.worker)];
            if (factor == d.factor)
                continue;
            factor = d.factor;
            EventRecord e = job.event(at, t, d.factor == 1 ? "straggler-cleared" : "straggler-injected",
                d.factor == 1 ? "worker " + std::to_string(d.worker) + " runs at its own speed again"
                              : "worker " + std::to_string(d.worker) + "'s batches take " + std::to_string(d.factor) + "x longer");
            e.worker = d.worker;
            e.actor = d.actor;
            observer.on_event(e);
        }
        if (const std::optional<JobControl::SyncChange> change = control->take_sync_change()) {
            const std::string before = sync::describe(sync_model);
            sync_model = change->spec;
            const Kind was = kind;
            kind = kind_of(sync_model.type);
            if (kind == Kind::ElasticBsp && was != Kind::ElasticBsp) {
                // A superstep begins once the batches under way arrive.
                for (std::size_t i = 0; i < state.size(); ++i) {
                    superstep_start[i] = state[i].clock;
                    state[i].quota = state[i].clock + (state[i].busy ? 1 : 0);
                }
            }
            control->sync_in_effect(sync_model);
            EventRecord e = job.event(at, t, "sync-model-change", before + " -> " + sync::describe(sync_model));
            e.actor = change->actor;
            observer.on_event(e);
        }
        if (!manager->changes_due(t))
            return;
        std::vector<bool> was_active(state.size());
        for (std::size_t i = 0; i < state.size(); ++i)
            was_active[i] = active(i);
        const balance::Allocation allocation = manager->next({}, at, t);
        for (EventRecord e : manager->take_events()) {
            e.job = config.job;
            e.iteration = at;
            e.time_s = t;
            observer.on_event(e);
        }
        // A worker let back in joins the pack rather than holding SSP's bound at its old clock.
        const std::int64_t slowest = slowest_clock(); // of those active until now
        batch = allocation.batch_sizes;
        decisions = allocation.decisions;
        for (std::size_t i = 0; i < state.size(); ++i)
            if (active(i) && !was_active[i] && !state[i].busy) {
                state[i].clock = std::max(state[i].clock, slowest);
                state[i].quota = state[i].clock;
                superstep_start[i] = state[i].clock;
            }
    }

    TrainingResult run(const std::atomic<bool>* stop)
    {
        job.run_start = std::chrono::steady_clock::now();
        stop_flag = stop;
        superstep_start.assign(state.size(), 0);
        observer.on_event(job.event(0, 0, "job-started",
            std::to_string(state.size()) + " workers, " + config.prototype->name() + ", total batch "
                + std::to_string(config.total_batch) + ", sync " + sync::describe(config.sync)));
        for (std::size_t i = 0; i < state.size(); ++i)
            if (active(i))
                start(i, 0);
        while (!done && clock.step()) {
        }
        for (std::size_t i = 0; i < state.size(); ++i)
            close_row(i, state[i].row.end_s);

        job.finish(result, updates, samples, now, train_loss, observer);
        std::string summary = std::to_string(updates) + " updates, largest staleness " + std::to_string(max_staleness);
        if (kind == Kind::ElasticBsp)
            summary += ", " + std::to_string(supersteps) + " supersteps";
        observer.on_event(job.event(std::max<std::int64_t>(0, updates - 1), now,
            result.stopped ? "job-stopped" : "job-finished", summary));
        return result;
    }

    JobState job;
    const TrainerConfig& config;
    std::unique_ptr<balance::BatchSizeManager> manager;
    TrainingObserver& observer;
    std::unique_ptr<JobControl> control;
    sync::SyncSpec sync_model; // in effect
    Kind kind = Kind::Asp;
    engine::EventQueue clock;
    engine::Pacer pacer;
    std::vector<std::int32_t> batch;       // each worker's next batch; 0 while excluded
    std::vector<std::string> decisions;    // the manager's per-worker tags when an override applies
    std::vector<double> slowdown;          // injected stragglers in effect
    std::vector<WorkerState> state;
    std::vector<std::int64_t> superstep_start;
    TrainingResult result;
    const std::atomic<bool>* stop_flag = nullptr;
    std::int64_t updates = 0, samples = 0, max_staleness = 0, supersteps = 0;
    double now = 0, train_loss = 0;
    bool done = false;
};

AsyncTrainer::AsyncTrainer(TrainerConfig config, std::unique_ptr<balance::BatchSizeManager> manager, TrainingObserver& observer)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(manager), observer))
{
}

AsyncTrainer::AsyncTrainer(TrainerConfig config, TrainingObserver& observer)
    : AsyncTrainer(std::move(config), nullptr, observer)
{
}

AsyncTrainer::~AsyncTrainer() = default;

TrainingResult AsyncTrainer::run(const std::atomic<bool>* stop) { return impl_->run(stop); }

void AsyncTrainer::resume_from_checkpoint(const std::string& /*state*/)
{
    throw InputError("job " + std::to_string(impl_->config.job), "sync",
        sync::describe(impl_->sync_model) + " keeps no checkpoint yet; only bsp and backup jobs resume");
}

JobControl& AsyncTrainer::control() { return *impl_->control; }
balance::BatchSizeManager& AsyncTrainer::manager() { return *impl_->manager; }
const ps::ParameterServer& AsyncTrainer::server() const { return impl_->job.server; }
const TrainerConfig& AsyncTrainer::config() const { return impl_->config; }

} // namespace fulcrum::train
