#include "train/async_trainer.h"

#include "balance/rounding.h"
#include "engine/event_queue.h"
#include "engine/pacer.h"

#include <algorithm>
#include <deque>
#include <stdexcept>

namespace fulcrum::train {

struct AsyncTrainer::Impl {
    Impl(TrainerConfig c, TrainingObserver& o)
        : job(std::move(c))
        , config(job.config)
        , observer(o)
        , pacer(config.mode == ClockMode::Paced ? config.pace : 0.0)
    {
        const int n = static_cast<int>(job.workers.size());
        sync::validate(config.sync, n);
        if (config.elastic.enabled())
            throw std::invalid_argument("elastic resizing needs barriers: use sync bsp or backup, not " + config.sync.type);
        const std::string& type = config.sync.type;
        if (type == "asp")
            kind = Kind::Asp;
        else if (type == "ssp")
            kind = Kind::Ssp;
        else if (type == "elastic-bsp")
            kind = Kind::ElasticBsp;
        else
            throw std::invalid_argument("the asynchronous trainer runs asp, ssp and elastic-bsp, not " + type);
        if (config.mode == ClockMode::Real)
            throw std::invalid_argument(type + " runs in the virtual and paced modes");
        batch = balance::proportional_split(std::vector<double>(static_cast<std::size_t>(n), 1.0), config.total_batch);
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

    std::int64_t slowest_clock() const
    {
        std::int64_t slowest = state.front().clock;
        for (const auto& other : state)
            slowest = std::min(slowest, other.clock);
        return slowest;
    }

    // `slowest`: the least clock of all workers (SSP); starting a worker does not change it,
    // so one scan serves a whole pass over the workers.
    bool may_start(std::size_t i, std::int64_t slowest) const
    {
        const WorkerState& s = state[i];
        switch (kind) {
        case Kind::Ssp:
            return s.clock - slowest <= config.sync.staleness;
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
        row.compute_s = timing.duration_s;
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
        if (kind == Kind::ElasticBsp)
            return "elastic-bsp r=" + std::to_string(state[i].quota - superstep_start[i]);
        return sync::describe(config.sync);
    }

    void arrive(std::size_t i, std::int64_t pulled_version)
    {
        const double t = clock.now();
        WorkerState& s = state[i];
        s.busy = false;
        if (done)
            return;
        const ps::GradientPush push { static_cast<WorkerId>(i), batch[i], job.workers[i]->gradient().data() };
        const std::int64_t staleness = job.server.version() - pulled_version;
        max_staleness = std::max(max_staleness, staleness);
        job.server.apply_barrier(std::span<const ps::GradientPush>(&push, 1),
            static_cast<float>(batch[i]) / static_cast<float>(config.total_batch));
        ++updates;
        samples += batch[i];
        ++s.clock;
        s.intervals.push_back(t - s.row.start_s);
        while (static_cast<int>(s.intervals.size()) > config.sync.history)
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
    void maybe_close_superstep(double t)
    {
        for (const auto& s : state)
            if (s.busy || s.clock < s.quota)
                return;
        const std::vector<double> free_at(state.size(), t);
        std::vector<std::deque<double>> intervals;
        for (const auto& s : state)
            intervals.push_back(s.intervals);
        const sync::EndTimes ends = sync::predict_end_times(free_at, intervals, config.sync.range);
        const sync::BarrierWindow window = sync::choose_window(config.sync.algorithm, ends);
        ++supersteps;
        for (std::size_t i = 0; i < state.size(); ++i) {
            superstep_start[i] = state[i].clock;
            state[i].quota = state[i].clock + window.iterations[i];
        }
        for (std::size_t i = 0; i < state.size(); ++i)
            start(i, t);
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
    TrainingObserver& observer;
    Kind kind = Kind::Asp;
    engine::EventQueue clock;
    engine::Pacer pacer;
    std::vector<std::int32_t> batch;
    std::vector<WorkerState> state;
    std::vector<std::int64_t> superstep_start;
    TrainingResult result;
    const std::atomic<bool>* stop_flag = nullptr;
    std::int64_t updates = 0, samples = 0, max_staleness = 0, supersteps = 0;
    double now = 0, train_loss = 0;
    bool done = false;
};

AsyncTrainer::AsyncTrainer(TrainerConfig config, TrainingObserver& observer)
    : impl_(std::make_unique<Impl>(std::move(config), observer))
{
}

AsyncTrainer::~AsyncTrainer() = default;

TrainingResult AsyncTrainer::run(const std::atomic<bool>* stop) { return impl_->run(stop); }
const ps::ParameterServer& AsyncTrainer::server() const { return impl_->job.server; }

} // namespace fulcrum::train
