#include "train/bsp_trainer.h"

#include "balance/policy_registry.h"
#include "engine/event_queue.h"
#include "engine/pacer.h"
#include "common/state_archive.h"
#include "perf/proc_stats.h"

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <algorithm>
#include <latch>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace fulcrum::train {

namespace {

// What one worker's task measured on its thread (used as the clock in real mode).
struct Measured {
    double loss = 0;
    double pull_start = 0, pull_end = 0, compute_end = 0; // wall seconds since the run started
    double cpu_seconds = 0;
    std::optional<double> memory_share; // a remote worker's, measured on its host
    bool lost = false;                  // a remote worker that disconnected: no gradient
};

int pool_size(const TrainerConfig& config)
{
    const int workers = static_cast<int>(config.workers.size());
    // Real mode: one thread per worker, all computing at once as real workers would.
    if (config.mode == ClockMode::Real)
        return std::max(1, workers);
    const int threads = config.threads > 0 ? config.threads : static_cast<int>(std::thread::hardware_concurrency());
    return std::clamp(threads, 1, std::max(1, workers));
}

} // namespace

struct BspTrainer::Impl {
    Impl(TrainerConfig c, std::unique_ptr<balance::BatchSizePolicy> policy, std::unique_ptr<balance::BatchSizeManager> m,
         TrainingObserver& o)
        : job(std::move(c))
        , config(job.config)
        , manager(std::move(m))
        , observer(o)
        , pool(static_cast<std::size_t>(pool_size(config)))
        , pacer(config.mode == ClockMode::Paced ? config.pace : 0.0)
    {
        if (!manager && policy)
            manager = std::make_unique<balance::BatchSizeManager>(std::move(policy), static_cast<int>(job.workers.size()),
                config.total_batch, job.batch_limits());
        if (!manager)
            manager = balance::make_manager({}, static_cast<int>(job.workers.size()), config.total_batch, job.batch_limits());
        if (manager->workers() != static_cast<int>(job.workers.size()))
            throw std::invalid_argument("the batch-size manager was made for a different number of workers");
        sync::validate(config.sync, static_cast<int>(job.workers.size()));
        if (!sync::closes_every_iteration(config.sync.type))
            throw std::invalid_argument("the BSP trainer runs bsp and backup; " + sync::describe(config.sync)
                + " needs the asynchronous trainer");
        if (config.elastic.enabled())
            manager->start_with_members(job.members);
        if (config.remote && config.mode != ClockMode::Real)
            throw std::invalid_argument("remote workers compute on their own clocks: they need the real mode");
        sync_model = config.sync;
        slowdown.assign(job.workers.size(), 1.0);
        control = std::make_unique<JobControl>(*manager, static_cast<int>(job.workers.size()), sync_model, [](const sync::SyncSpec& spec) {
            if (!sync::closes_every_iteration(spec.type))
                throw RefusedRequest("sync-model-not-switchable", "a running BSP job switches between bsp and backup(k) only; "
                    + sync::describe(spec) + " runs in the asynchronous trainer, so submit the job again with that sync model");
        });
        scheduled = config.elastic.resizes;
        std::stable_sort(scheduled.begin(), scheduled.end(),
            [](const ScheduledResize& a, const ScheduledResize& b) { return a.before_iteration < b.before_iteration; });
    }

    // Elastic PS changes due before iteration k: the scheduled ones, then the requested ones.
    // The previous barrier has applied every gradient it took and no worker is computing, so
    // nothing is in flight while servers and data move.
    void apply_resizes(std::int64_t k, double now)
    {
        std::vector<ResizeRequest> due;
        while (next_scheduled < scheduled.size() && scheduled[next_scheduled].before_iteration <= k)
            due.push_back(scheduled[next_scheduled++].request);
        for (ResizeRequest& request : control->take_resizes())
            due.push_back(std::move(request));
        for (const ResizeRequest& request : due) {
            EventRecord e = job.event(k, now, "resize-refused", "");
            e.actor = request.actor;
            try {
                const ResizeRequest r = job.resolved(request);
                const int slot = *r.target;
                if (r.action == ResizeAction::RemoveWorker)
                    manager->leave(slot); // refuses to leave only excluded workers behind
                ResizeOutcome outcome;
                try {
                    outcome = job.resize(r);
                } catch (...) {
                    if (r.action == ResizeAction::RemoveWorker)
                        manager->join(slot);
                    throw;
                }
                if (r.action == ResizeAction::AddWorker)
                    manager->join(slot);
                e.kind = std::string(action_name(r.action));
                e.message = outcome.describe();
                if (r.action == ResizeAction::AddWorker || r.action == ResizeAction::RemoveWorker)
                    e.worker = slot;
            } catch (const RefusedRequest& error) { // ResizeError, or the manager's OverrideError
                e.message = std::string(action_name(request.action)) + " refused (" + error.code() + "): " + error.what();
            }
            observer.on_event(e);
        }
    }

    ~Impl() { pool.join(); }

    // Between iterations: nothing is in flight, so a paused job holds no gradient.
    void hold_while_paused(std::int64_t k, double now, const std::atomic<bool>* stop)
    {
        const std::optional<std::string> by = control->pause_requested();
        if (!by)
            return;
        EventRecord paused_event = job.event(k, now, "job-paused", "held before iteration " + std::to_string(k));
        paused_event.actor = *by;
        observer.on_event(paused_event);
        const auto [held, resumed_by] = control->hold(stop);
        EventRecord resumed = job.event(k, now, "job-resumed", "after " + std::to_string(held) + " s");
        resumed.actor = resumed_by;
        pacer.shift(held);
        observer.on_event(resumed);
    }

    // Injected stragglers due before iteration k; each change is an event.
    void apply_slowdowns(std::int64_t k, double now)
    {
        for (const JobControl::Slowdown& d : control->take_slowdowns()) {
            auto& factor = slowdown[static_cast<std::size_t>(d.worker)];
            if (factor == d.factor)
                continue;
            factor = d.factor;
            EventRecord e = job.event(k, now, d.factor == 1 ? "straggler-cleared" : "straggler-injected",
                d.factor == 1 ? "worker " + std::to_string(d.worker) + " runs at its own speed again"
                              : "worker " + std::to_string(d.worker) + "'s batches take " + std::to_string(d.factor) + "x longer");
            e.worker = d.worker;
            e.actor = d.actor;
            observer.on_event(e);
        }
    }

    // An operator's set-sync-model, applied before iteration k: BSP and backup(k) differ only
    // in how many arrivals close the barrier, so the switch needs nothing else.
    void apply_sync_change(std::int64_t k, double now)
    {
        const std::optional<JobControl::SyncChange> change = control->take_sync_change();
        if (!change)
            return;
        const std::string before = sync::describe(sync_model);
        sync_model = change->spec;
        control->sync_in_effect(sync_model);
        EventRecord e = job.event(k, now, "sync-model-change", before + " -> " + sync::describe(sync_model));
        e.actor = change->actor;
        observer.on_event(e);
    }

    int backups() const { return sync_model.type == sync::SyncType::Backup ? sync_model.backups : 0; }

    // A remote slot's batch: the parameters go to its process, the gradient comes back into
    // the worker's buffer. The round trip less the worker's own compute time is its
    // communication.
    void compute_remote(std::size_t i, std::int64_t k, std::int32_t batch_size, Measured& m)
    {
        Worker& worker = *job.workers[i];
        m.pull_start = job.wall_seconds();
        job.server.pull(worker.replica());
        model::Vector& gradient = worker.gradient_buffer();
        const auto result = config.remote->compute(static_cast<WorkerId>(i), k,
            std::span<const float>(worker.replica().data(), static_cast<std::size_t>(worker.replica().size())), batch_size,
            std::span<float>(gradient.data(), static_cast<std::size_t>(gradient.size())));
        m.compute_end = job.wall_seconds();
        if (!result) {
            m.lost = true;
            m.pull_end = m.compute_end;
            return;
        }
        m.loss = result->loss;
        m.pull_end = std::max(m.pull_start, m.compute_end - result->compute_s);
        m.cpu_seconds = result->cpu_share * result->compute_s;
        m.memory_share = result->memory_share;
    }

    // Pull and compute on every participating worker in parallel; returns when all are done.
    std::vector<Measured> compute_all(const std::vector<std::size_t>& active, const std::vector<std::int32_t>& sizes, std::int64_t k)
    {
        std::vector<Measured> measured(job.workers.size());
        std::latch done(static_cast<std::ptrdiff_t>(active.size()));
        for (const std::size_t i : active)
            boost::asio::post(pool, [&, i] {
                Worker& worker = *job.workers[i];
                Measured& m = measured[i];
                if (config.remote && config.remote->is_remote(static_cast<WorkerId>(i))) {
                    compute_remote(i, k, sizes[i], m);
                    done.count_down();
                    return;
                }
                m.pull_start = job.wall_seconds();
                job.server.pull(worker.replica());
                m.pull_end = job.wall_seconds();
                const double cpu_before = perf::thread_cpu_seconds();
                m.loss = worker.compute_gradient(sizes[i]);
                m.cpu_seconds = perf::thread_cpu_seconds() - cpu_before;
                m.compute_end = job.wall_seconds();
                if (config.mode == ClockMode::Real && slowdown[i] > 1) { // an injected straggler idles for the extra time
                    std::this_thread::sleep_for(std::chrono::duration<double>((slowdown[i] - 1) * (m.compute_end - m.pull_end)));
                    m.compute_end = job.wall_seconds();
                }
                done.count_down();
            });
        done.wait();
        return measured;
    }

    // Virtual clock: batch times from the performance models, arrivals through the event
    // queue. Returns the barrier time: the arrival of the `needed`-th worker.
    double time_iteration_virtual(std::vector<IterationRecord>& rows, std::int64_t k, std::size_t needed)
    {
        const double barrier_open = clock.now();
        double barrier_close = barrier_open;
        std::size_t arrived = 0;
        for (IterationRecord& row : rows) {
            Worker& worker = *job.workers[static_cast<std::size_t>(row.worker)];
            const perf::ComputeTiming timing = worker.performance().compute(barrier_open, row.batch_size);
            row.start_s = barrier_open;
            row.compute_s = timing.duration_s * slowdown[static_cast<std::size_t>(row.worker)];
            row.comm_s = perf::communication_time(worker.setup().network, job.model_bytes, k);
            row.cpu_share = timing.mean_share.cpu;
            row.memory_share = timing.mean_share.memory;
            row.end_s = barrier_open + row.comm_s + row.compute_s;
            device_memory[static_cast<std::size_t>(row.worker)] = timing.device_memory;
            clock.schedule(row.end_s, [&, end = row.end_s] {
                if (++arrived == needed)
                    barrier_close = end; // the queue runs arrivals in time order
            });
        }
        clock.run();
        if (arrived != rows.size())
            throw std::logic_error("barrier closed before every worker arrived");
        return barrier_close;
    }

    double time_iteration_real(std::vector<IterationRecord>& rows, const std::vector<Measured>& measured, double dispatched,
                               std::size_t needed)
    {
        const double memory = perf::memory_available_share();
        std::vector<double> ends;
        for (IterationRecord& row : rows) {
            const Measured& m = measured[static_cast<std::size_t>(row.worker)];
            row.start_s = dispatched;
            row.comm_s = m.pull_end - m.pull_start;
            row.compute_s = m.compute_end - m.pull_end;
            row.end_s = m.compute_end;
            row.cpu_share = row.compute_s > 0 ? std::min(1.0, m.cpu_seconds / row.compute_s) : 1.0;
            row.memory_share = m.memory_share.value_or(memory);
            if (!m.lost)
                ends.push_back(row.end_s);
        }
        std::sort(ends.begin(), ends.end());
        return ends.empty() ? dispatched : ends[std::min(needed, ends.size()) - 1];
    }

    // A remote worker that disconnected is excluded from the next barrier on (its share
    // goes to the others) and the loss becomes an event; training goes on.
    void drop_lost_worker(WorkerId worker, std::int64_t k, double now)
    {
        EventRecord e = job.event(k, now, "worker-lost",
            "worker " + std::to_string(worker) + " disconnected during iteration " + std::to_string(k)
                + ": dropped from this barrier; its share goes to the others");
        e.worker = worker;
        observer.on_event(e);
        try {
            manager->exclude(worker, std::nullopt, "system: worker lost");
        } catch (const RefusedRequest&) {
            // already excluded (lost again before the exclusion applied), or the last worker
        }
    }

    // What the loop carries from one barrier to the next, besides the objects' own state.
    struct LoopState {
        std::int64_t next = 0; // the iteration to run next
        double now = 0;
        std::int64_t samples = 0;
        double train_loss = 0;
        TrainingResult result;
        std::vector<balance::WorkerObservation> observations;
    };

    static constexpr std::string_view kCheckpointFormat = "fulcrum bsp checkpoint 1";

    // The whole state between two barriers, or nothing when the policy keeps no checkpoint.
    std::optional<std::string> checkpoint(const LoopState& loop) const
    {
        StateWriter out;
        out.put(kCheckpointFormat);
        out.put(loop.next);
        out.put(loop.now);
        out.put(loop.samples);
        out.put(loop.train_loss);
        const EvaluationRecord& e = loop.result.final_evaluation;
        out.put(e.iteration);
        for (const double v : { e.time_s, e.wall_s, e.epoch, e.train_loss, e.test_loss, e.test_accuracy })
            out.put(v);
        out.put(loop.result.best_accuracy);
        out.put(loop.result.target_time_s);
        out.put(loop.result.target_updates);
        out.put(static_cast<std::uint64_t>(loop.observations.size()));
        for (const balance::WorkerObservation& o : loop.observations) {
            out.put(o.worker);
            out.put(o.batch_size);
            for (const double v : { o.compute_s, o.comm_s, o.cpu_share, o.memory_share, o.next_cpu_share, o.next_memory_share, o.device_memory })
                out.put(v);
            out.put(o.batch_limit);
        }
        out.put(device_memory);
        out.put(slowdown);
        out.put(std::string(sync::to_string(sync_model.type)));
        for (const int v : { sync_model.staleness, sync_model.backups, sync_model.range, sync_model.history })
            out.put(v);
        out.put(sync_model.algorithm);
        out.put(static_cast<std::uint64_t>(next_scheduled));
        out.put(clock.now());
        if (!manager->save_state(out))
            return std::nullopt;
        job.save_state(out);
        return out.take();
    }

    void resume(const std::string& state, LoopState& loop)
    {
        StateReader in(state, "job " + std::to_string(config.job) + "'s checkpoint");
        if (in.get_string("format") != kCheckpointFormat)
            in.fail("format", "is not a BSP trainer checkpoint of this Fulcrum");
        loop.next = in.get<std::int64_t>("next iteration");
        loop.now = in.get<double>("run clock");
        loop.samples = in.get<std::int64_t>("samples");
        loop.train_loss = in.get<double>("train loss");
        EvaluationRecord& e = loop.result.final_evaluation;
        e.job = config.job;
        e.iteration = in.get<std::int64_t>("last evaluation");
        for (double* v : { &e.time_s, &e.wall_s, &e.epoch, &e.train_loss, &e.test_loss, &e.test_accuracy })
            *v = in.get<double>("last evaluation");
        loop.result.best_accuracy = in.get<double>("best accuracy");
        in.get(loop.result.target_time_s, "target time");
        in.get(loop.result.target_updates, "target updates");
        loop.observations.resize(in.array_size("observations", 1));
        for (balance::WorkerObservation& o : loop.observations) {
            o.worker = in.get<WorkerId>("observation");
            o.batch_size = in.get<std::int32_t>("observation");
            for (double* v : { &o.compute_s, &o.comm_s, &o.cpu_share, &o.memory_share, &o.next_cpu_share, &o.next_memory_share, &o.device_memory })
                *v = in.get<double>("observation");
            o.batch_limit = in.get<std::int32_t>("observation");
        }
        in.get(device_memory, "device memory");
        in.get(slowdown, "stragglers");
        if (device_memory.size() != job.workers.size() || slowdown.size() != job.workers.size())
            in.fail("stragglers", "name another number of workers than this job's");
        control->slowdowns_in_effect(slowdown);
        const std::optional<sync::SyncType> type = sync::parse_sync_type(in.get_string("sync model"));
        if (!type || !sync::closes_every_iteration(*type))
            in.fail("sync model", "is not bsp or backup");
        sync_model.type = *type;
        for (int* v : { &sync_model.staleness, &sync_model.backups, &sync_model.range, &sync_model.history })
            *v = in.get<int>("sync model");
        sync_model.algorithm = in.get_string("sync model");
        control->sync_in_effect(sync_model);
        next_scheduled = static_cast<std::size_t>(in.get<std::uint64_t>("scheduled resizes"));
        if (next_scheduled > scheduled.size())
            in.fail("scheduled resizes", "count more than the scenario has");
        clock.restore(in.get<double>("virtual clock"));
        manager->load_state(in);
        job.load_state(in);
        if (!in.at_end())
            in.fail("end", "the checkpoint holds more than this trainer reads");
        if (loop.next < 0 || loop.next > config.iterations)
            in.fail("next iteration", "lies outside the job's " + std::to_string(config.iterations) + " iterations");
    }

    // After iteration loop.next - 1: every `checkpoint_every` barriers, every
    // `checkpoint_seconds` of wall time, or because the run stops (`forced`).
    void maybe_checkpoint(const LoopState& loop, bool forced)
    {
        if (checkpoints_off || (config.checkpoint_every <= 0 && config.checkpoint_seconds <= 0) || loop.next == 0
            || loop.next == last_checkpoint)
            return;
        const bool by_count = config.checkpoint_every > 0 && loop.next % config.checkpoint_every == 0;
        const bool by_time = config.checkpoint_seconds > 0
            && std::chrono::duration<double>(std::chrono::steady_clock::now() - last_checkpoint_at).count() >= config.checkpoint_seconds;
        if (!forced && !by_count && !by_time)
            return;
        std::optional<std::string> state = checkpoint(loop);
        if (!state) {
            checkpoints_off = true;
            observer.on_event(job.event(loop.next - 1, loop.now, "checkpoints-off",
                "policy " + manager->policy().name() + " keeps no checkpoint: this job cannot be resumed after a crash"));
            return;
        }
        observer.on_checkpoint(loop.next - 1, loop.now, std::move(*state));
        last_checkpoint = loop.next;
        last_checkpoint_at = std::chrono::steady_clock::now();
    }

    void forward_events(std::int64_t iteration, double now)
    {
        for (EventRecord e : manager->take_events()) {
            e.job = config.job;
            e.iteration = iteration;
            e.time_s = now;
            observer.on_event(e);
        }
    }

    TrainingResult run(const std::atomic<bool>* stop)
    {
        const std::size_t n = job.workers.size();
        if (!resumed_loop) { // a resumed job's wall clock and device memory come from its checkpoint
            job.run_start = std::chrono::steady_clock::now();
            device_memory.assign(n, 0.0);
        }
        last_checkpoint_at = std::chrono::steady_clock::now();
        LoopState loop;
        TrainingResult& result = loop.result;
        std::vector<balance::WorkerObservation>& observations = loop.observations;
        std::int64_t& samples = loop.samples;
        double& now = loop.now;
        double& train_loss = loop.train_loss;
        std::vector<IterationRecord> rows;
        std::vector<ps::GradientPush> pushes;
        const std::vector<std::int32_t> limits = job.batch_limits();
        if (resumed_loop) {
            loop = std::move(*resumed_loop);
            resumed_loop.reset();
            last_checkpoint = loop.next;
            pacer.start_at(loop.now);
            observer.on_event(job.event(std::max<std::int64_t>(0, loop.next - 1), now, "checkpoint-resumed",
                "resumed from checkpoint at iteration " + std::to_string(loop.next - 1) + ": iterations go on from "
                    + std::to_string(loop.next) + ", policy " + manager->policy().name() + ", sync " + sync::describe(sync_model)));
        } else {
            observer.on_event(job.event(0, 0, "job-started",
                std::to_string(n) + " workers, " + config.prototype->name() + ", total batch " + std::to_string(config.total_batch)
                    + ", policy " + manager->policy().name() + ", sync " + sync::describe(config.sync)));
        }

        std::int64_t k = loop.next;
        const auto stopping = [&] {
            if (!(stop && stop->load(std::memory_order_relaxed)))
                return false;
            result.stopped = true;
            loop.next = k;
            maybe_checkpoint(loop, true); // a clean stop leaves a checkpoint to resume from
            return true;
        };
        for (; k < config.iterations; ++k) {
            if (stopping())
                break;
            hold_while_paused(k, now, stop);
            if (stopping())
                break;
            apply_resizes(k, now);
            apply_slowdowns(k, now);
            apply_sync_change(k, now);
            const int backups = this->backups();
            const balance::Allocation allocation = k == 0 ? manager->initial() : manager->next(observations, k - 1, now);
            forward_events(k, now);
            if (allocation.batch_sizes.size() != n)
                throw std::logic_error("the batch-size manager returned the wrong number of batch sizes");

            std::vector<std::size_t> active;
            for (std::size_t i = 0; i < n; ++i)
                if (allocation.batch_sizes[i] > 0)
                    active.push_back(i);
            const std::size_t needed = std::max<std::size_t>(1, active.size() > static_cast<std::size_t>(backups)
                    ? active.size() - static_cast<std::size_t>(backups) : 1);

            const double dispatched = config.mode == ClockMode::Real ? job.wall_seconds() : now;
            const std::vector<Measured> measured = compute_all(active, allocation.batch_sizes, k);

            rows.assign(active.size(), IterationRecord {});
            for (std::size_t r = 0; r < active.size(); ++r) {
                const std::size_t i = active[r];
                IterationRecord& row = rows[r];
                row.job = config.job;
                row.worker = static_cast<WorkerId>(i);
                row.iteration = k;
                row.batch_size = allocation.batch_sizes[i];
                row.loss = measured[i].loss;
                row.predicted_speed = i < allocation.predicted_speeds.size() ? allocation.predicted_speeds[i] : std::nullopt;
                row.decision = allocation.decisions.empty() ? allocation.decision : allocation.decisions[i];
            }
            const double barrier = config.mode == ClockMode::Real ? time_iteration_real(rows, measured, dispatched, needed)
                                                                  : time_iteration_virtual(rows, k, needed);
            train_loss = 0;
            observations.clear();
            pushes.clear();
            std::int64_t used = 0;
            std::vector<WorkerId> lost;
            for (IterationRecord& row : rows) {
                const auto i = static_cast<std::size_t>(row.worker);
                if (measured[i].lost) {
                    // Dropped from this barrier; excluded below, so its share goes to the others.
                    row.end_s = barrier;
                    row.compute_s = 0;
                    row.wait_s = 0;
                    row.speed = 0;
                    row.decision = "dropped: disconnected";
                    lost.push_back(row.worker);
                    continue;
                }
                row.speed = row.compute_s > 0 ? row.batch_size / row.compute_s : 0;
                balance::WorkerObservation o { row.worker, row.batch_size, row.compute_s, row.comm_s, row.cpu_share, row.memory_share };
                const perf::ResourceShare next = config.mode == ClockMode::Real
                    ? perf::ResourceShare { row.cpu_share, row.memory_share }
                    : job.workers[i]->performance().share_at(barrier);
                o.next_cpu_share = next.cpu;
                o.next_memory_share = next.memory;
                o.device_memory = device_memory[i];
                o.batch_limit = limits[i];
                observations.push_back(o);
                if (row.end_s <= barrier && used < static_cast<std::int64_t>(needed)) {
                    row.wait_s = barrier - row.end_s;
                    pushes.push_back({ row.worker, row.batch_size, job.workers[i]->gradient().data() });
                    used += 1;
                    samples += row.batch_size;
                    train_loss += row.loss * row.batch_size;
                } else {
                    // A backup worker's late gradient: cut off at the barrier and dropped.
                    row.end_s = barrier;
                    row.wait_s = 0;
                    row.decision = "dropped";
                }
            }
            std::int64_t pushed_samples = 0;
            for (const auto& p : pushes)
                pushed_samples += p.batch_size;
            train_loss /= static_cast<double>(std::max<std::int64_t>(1, pushed_samples));
            if (!lost.empty() && pushes.empty())
                throw std::runtime_error("every worker of iteration " + std::to_string(k) + " disconnected; the job cannot go on");
            for (const WorkerId w : lost)
                drop_lost_worker(w, k, barrier);
            observer.on_barrier(k, pushes);
            job.server.apply_barrier(pushes);
            now = barrier;

            const double epoch = static_cast<double>(samples) / static_cast<double>(config.train->size());
            if ((k + 1) % config.eval_interval == 0 || k + 1 == config.iterations) {
                result.final_evaluation = job.evaluate(k, now, epoch, train_loss);
                result.best_accuracy = std::max(result.best_accuracy, result.final_evaluation.test_accuracy);
                observer.on_evaluation(result.final_evaluation);
                if (config.target_accuracy && !result.target_time_s
                    && result.final_evaluation.test_accuracy >= *config.target_accuracy) {
                    result.target_time_s = now;
                    result.target_updates = k + 1;
                }
            }
            // After the evaluation, so whoever shows progress shows this iteration's accuracy.
            observer.on_iteration(rows);
            loop.next = k + 1;
            maybe_checkpoint(loop, false);
            if (config.mode == ClockMode::Paced)
                pacer.wait_until(now, stop);
            if (result.target_time_s) {
                ++k;
                break;
            }
        }

        job.finish(result, k, samples, now, train_loss, observer);
        observer.on_event(job.event(std::max<std::int64_t>(0, k - 1), now, result.stopped ? "job-stopped" : "job-finished",
            std::to_string(k) + " iterations"));
        return result;
    }

    JobState job;
    const TrainerConfig& config;
    std::unique_ptr<balance::BatchSizeManager> manager;
    TrainingObserver& observer;
    boost::asio::thread_pool pool;
    engine::EventQueue clock;
    engine::Pacer pacer;
    std::vector<double> device_memory;
    std::vector<ScheduledResize> scheduled;
    std::size_t next_scheduled = 0;
    std::unique_ptr<JobControl> control;
    sync::SyncSpec sync_model;                 // in effect; the training thread's
    std::vector<double> slowdown;              // per worker, in effect; the training thread's
    std::optional<LoopState> resumed_loop;     // from resume_from_checkpoint(), for run()
    bool checkpoints_off = false;              // the policy keeps none (said once, as an event)
    std::int64_t last_checkpoint = 0;          // the `next` of the last checkpoint taken
    std::chrono::steady_clock::time_point last_checkpoint_at;
};

BspTrainer::BspTrainer(TrainerConfig config, std::unique_ptr<balance::BatchSizePolicy> policy, TrainingObserver& observer)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(policy), nullptr, observer))
{
}

BspTrainer::BspTrainer(TrainerConfig config, std::unique_ptr<balance::BatchSizeManager> manager, TrainingObserver& observer)
    : impl_(std::make_unique<Impl>(std::move(config), nullptr, std::move(manager), observer))
{
}

BspTrainer::~BspTrainer() = default;

TrainingResult BspTrainer::run(const std::atomic<bool>* stop) { return impl_->run(stop); }

void BspTrainer::resume_from_checkpoint(const std::string& state)
{
    Impl::LoopState loop;
    impl_->resume(state, loop);
    impl_->resumed_loop = std::move(loop);
}
std::int64_t BspTrainer::samples_trained() const { return impl_->resumed_loop ? impl_->resumed_loop->samples : 0; }
const ps::ParameterServer& BspTrainer::server() const { return impl_->job.server; }
const TrainerConfig& BspTrainer::config() const { return impl_->config; }
balance::BatchSizeManager& BspTrainer::manager() { return *impl_->manager; }

JobControl& BspTrainer::control() { return *impl_->control; }

} // namespace fulcrum::train
