#include "train/free_running_engine.h"

#include "perf/network_model.h"
#include "perf/proc_stats.h"
#include "train/checkpoint_schedule.h"
#include "train/modelled_timing.h"
#include "train/stall_watch.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace fulcrum::train {

struct FreeRunningEngine::Impl : EngineRefs {
    explicit Impl(JobCore& c);

    // How the batches are computed and timed: the event clock of the virtual and paced
    // modes, or the workers' own threads in real mode. The rules of the sync models (who
    // may start, what an arrival does) are the engine's and the same under both.
    struct Clock {
        virtual ~Clock() = default;
        virtual double now() const = 0;
        // Worker i has pulled and its row is open at `t`: compute its batch and bring its
        // arrival (arrive()) in the clock's time.
        virtual void begin_batch(std::size_t i, double t) = 0;
        // After an arrival at `t` (paced mode waits for the wall clock there).
        virtual void after_arrival(double t) = 0;
        // Arrivals until training ends or a switch to a barrier model is ready.
        virtual void run_until_done() = 0;
        // Whether a batch under way can be held by a checkpoint (computed when it started).
        virtual bool holds_batches_under_way() const = 0;
        // Resumed from a checkpoint: its batches under way (in the order they started) arrive
        // again, or, where none could be held, the workers start afresh.
        virtual void resume_batches(const std::vector<std::size_t>& under_way) = 0;
    };
    struct ModelledClock;
    struct ThreadedClock;

    struct WorkerState {
        std::int64_t clock = 0; // iterations completed
        std::int64_t quota = 0; // elastic-bsp: run until clock reaches this
        bool busy = false;
        bool row_open = false; // a finished iteration whose wait is not known yet
        IterationRecord row;
        std::deque<double> intervals;
        std::int64_t pulled_version = 0; // busy: the server version its gradient was computed on
        std::uint64_t started = 0; // busy: its start's place in the order of starts
        std::int64_t recorded_through = -1; // the iteration of its last row handed over
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

    // The least clock of the active workers but `except` (SSP's bound and a re-included
    // worker's start).
    std::int64_t slowest_clock(std::size_t except = static_cast<std::size_t>(-1)) const
    {
        std::optional<std::int64_t> slowest;
        for (std::size_t i = 0; i < state.size(); ++i)
            if (active(i) && i != except)
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
            return s.clock - slowest <= core.sync_model().staleness;
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
        s.recorded_through = s.row.iteration;
        const std::span<const IterationRecord> row(&s.row, 1);
        if (config.mode != ClockMode::Real)
            stalls.judge(row); // the modelled batch's times are final
        stalls.observe(row);
        observer.on_iteration(row);
    }

    double now() const { return timing->now(); }

    // Worker i pulls and starts a batch at `t`. On the virtual clock it computes at once and
    // its arrival is scheduled; in real mode its own thread computes (work()) and arrives.
    void start(std::size_t i, double t)
    {
        WorkerState& s = state[i];
        close_row(i, t);
        Worker& worker = *job.workers[i];
        job.server.pull(worker.replica());
        s.pulled_version = job.server.version();
        IterationRecord& row = s.row;
        row = IterationRecord {};
        row.job = config.job;
        row.worker = static_cast<WorkerId>(i);
        row.iteration = s.clock;
        row.start_s = t;
        row.batch_size = batch[i];
        row.decision = decision_tag(i);
        s.busy = true;
        s.started = starts++;
        stalls.begin_batch(i, row.iteration, t, row.batch_size, row.predicted_speed);
        timing->begin_batch(i, t);
    }

    std::string decision_tag(std::size_t i) const
    {
        std::string tag = kind == Kind::ElasticBsp
            ? "elastic-bsp r=" + std::to_string(state[i].quota - superstep_start[i])
            : sync::describe(core.sync_model());
        if (i < decisions.size() && decisions[i] != manager.policy().name())
            tag += "/" + decisions[i]; // pinned
        return tag;
    }

    void arrive(std::size_t i, std::int64_t pulled_version)
    {
        const double t = now();
        WorkerState& s = state[i];
        s.busy = false;
        if (progress.done)
            return;
        // The batch it was started with: an operator's change applies to its next one.
        const std::int32_t pushed = s.row.batch_size;
        const ps::GradientPush push { static_cast<WorkerId>(i), pushed, job.workers[i]->gradient().data() };
        const std::int64_t staleness = job.server.version() - pulled_version;
        progress.max_staleness = std::max(progress.max_staleness, staleness);
        job.server.apply_barrier(std::span<const ps::GradientPush>(&push, 1),
            static_cast<float>(pushed) / static_cast<float>(config.total_batch));
        const std::int64_t updates = ++progress.updates;
        progress.samples += pushed;
        ++s.clock;
        s.intervals.push_back(t - s.row.start_s);
        while (static_cast<int>(s.intervals.size()) > core.sync_model().history)
            s.intervals.pop_front();
        s.row_open = true;
        double& train_loss = progress.train_loss;
        train_loss = updates == 1 ? s.row.loss : 0.98 * train_loss + 0.02 * s.row.loss;
        progress.now = t;
        TrainingResult& result = progress.result;

        if (updates % config.eval_interval == 0 || updates == config.iterations) {
            const double epoch = static_cast<double>(progress.samples) / static_cast<double>(config.train->size());
            result.final_evaluation = job.evaluate(updates - 1, t, epoch, train_loss);
            result.best_accuracy = std::max(result.best_accuracy, result.final_evaluation.test_accuracy);
            observer.on_evaluation(result.final_evaluation);
            if (config.target_accuracy && !result.target_time_s
                && result.final_evaluation.test_accuracy >= *config.target_accuracy) {
                result.target_time_s = t;
                result.target_updates = updates;
                progress.done = true;
            }
        }
        if (updates >= config.iterations)
            progress.done = true;
        timing->after_arrival(t);
        if (progress.done)
            return;
        // A stop request ends training after this event's starts, with a checkpoint of the
        // state between two events to resume from.
        const bool stopping = core.stop_requested(stop_flag);
        if (!stopping)
            apply_control(t);
        if (!active(i) || draining)
            close_row(i, t); // excluded, or the segment ends: its last row need not wait for a next start
        if (draining) {
            switch_ready = std::none_of(state.begin(), state.end(), [](const WorkerState& w) { return w.busy; });
            return;
        }
        restart(i, t);
        maybe_checkpoint(stopping);
        if (stopping) {
            result.stopped = true;
            progress.done = true;
            progress.checkpointed_at_stop = checkpoints.on() && checkpoints.taken_at(progress.updates);
        }
    }

    // After worker i's push: who starts next.
    void restart(std::size_t i, double t)
    {
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
        const sync::EndTimes ends = sync::predict_end_times(free_at, intervals, core.sync_model().range);
        const sync::BarrierWindow window = sync::choose_window(core.sync_model().algorithm, ends);
        ++progress.supersteps;
        for (std::size_t i = 0; i < state.size(); ++i) {
            superstep_start[i] = state[i].clock;
            state[i].quota = state[i].clock;
        }
        for (std::size_t r = 0; r < running.size(); ++r)
            state[running[r]].quota += window.iterations[r];
        for (const std::size_t i : running)
            start(i, t);
    }

    // Format 2 holds random streams as words and permutations as 4-byte indices (as the bsp
    // checkpoint's format 3); the objects read both.
    static constexpr std::string_view kCheckpointFormat = "fulcrum free-running checkpoint 2";
    static constexpr std::string_view kCheckpointFormat1 = "fulcrum free-running checkpoint 1";

    // Between two events: the progress, every worker's clock, its open row and the batch
    // under way with the gradient it computed and the server version it pulled, in the order
    // the batches started (ties on the clock arrive in that order), and the objects' own
    // state. Nothing when the policy keeps no checkpoint.
    std::optional<std::string> checkpoint() const
    {
        StateWriter out;
        out.put(kCheckpointFormat);
        save_progress(out, progress);
        core.save_sync(out);
        save_totals(out, progress);
        out.put(batch);
        out.put(decisions);
        out.put(superstep_start);
        out.put(starts);
        for (std::size_t i = 0; i < state.size(); ++i) {
            const WorkerState& w = state[i];
            // Real mode cannot hold a batch being computed on another thread: it is left out,
            // and a resumed job starts it again.
            const bool busy = w.busy && timing->holds_batches_under_way();
            for (const std::int64_t v : { w.clock, w.quota, w.pulled_version, w.recorded_through })
                out.put(v);
            out.put(w.started);
            out.put(busy);
            out.put(w.row_open);
            out.put(std::vector<double>(w.intervals.begin(), w.intervals.end()));
            const IterationRecord& r = w.row;
            out.put(r.iteration);
            out.put(r.batch_size);
            for (const double v :
                { r.start_s, r.end_s, r.compute_s, r.comm_s, r.wait_s, r.cpu_share, r.memory_share, r.speed, r.loss })
                out.put(v);
            out.put(r.predicted_speed);
            out.put(r.decision);
            if (busy) {
                const model::Vector& g = job.workers[i]->gradient();
                out.put_array(g.data(), static_cast<std::size_t>(g.size()));
            }
        }
        out.put(clock.now());
        if (!manager.save_state(out))
            return std::nullopt;
        job.save_state(out);
        return out.take();
    }

    void resume(StateReader& in)
    {
        load_progress(in, progress, config.job);
        core.load_sync(in);
        if (sync::closes_every_iteration(core.sync_model().type))
            in.fail("sync model", "is bsp or backup, which this engine does not run");
        load_totals(in, progress);
        const std::size_t n = job.workers.size();
        in.get(batch, "batch sizes");
        in.get(decisions, "decisions");
        in.get(superstep_start, "superstep starts");
        if (batch.size() != n || superstep_start.size() != n || (!decisions.empty() && decisions.size() != n))
            in.fail("batch sizes", "name another number of workers than this job's");
        starts = in.get<std::uint64_t>("starts");
        state.clear();
        state.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            WorkerState& w = state[i];
            for (std::int64_t* v : { &w.clock, &w.quota, &w.pulled_version, &w.recorded_through })
                *v = in.get<std::int64_t>("worker clock");
            w.started = in.get<std::uint64_t>("worker clock");
            w.busy = in.get_bool("worker clock");
            w.row_open = in.get_bool("worker clock");
            std::vector<double> intervals;
            in.get(intervals, "worker intervals");
            w.intervals.assign(intervals.begin(), intervals.end());
            IterationRecord& r = w.row;
            r.job = config.job;
            r.worker = static_cast<WorkerId>(i);
            r.iteration = in.get<std::int64_t>("worker row");
            r.batch_size = in.get<std::int32_t>("worker row");
            for (double* v : { &r.start_s, &r.end_s, &r.compute_s, &r.comm_s, &r.wait_s, &r.cpu_share, &r.memory_share,
                     &r.speed, &r.loss })
                *v = in.get<double>("worker row");
            in.get(r.predicted_speed, "worker row");
            r.decision = in.get_string("worker row");
            if (w.busy) {
                model::Vector& g = job.workers[i]->gradient_buffer();
                in.get_array(g.data(), static_cast<std::size_t>(g.size()), "worker gradient");
            }
        }
        clock.restore(in.get<double>("virtual clock"));
        manager.load_state(in);
        job.load_state(in);
        if (!in.at_end())
            in.fail("end", "the checkpoint holds more than this trainer reads");
        if (progress.updates < 1 || progress.updates > config.iterations)
            in.fail("updates", "lie outside the job's " + std::to_string(config.iterations) + " updates");
        resumed = true;
        checkpoints.resumed_at(progress.updates);
    }

    // After an event, every `checkpoint_every` updates, every `checkpoint_seconds` of wall
    // time, or because the run stops (`forced`).
    void maybe_checkpoint(bool forced)
    {
        if (checkpoints.due(progress.updates, forced))
            checkpoints.take(checkpoint(), progress.updates, progress.updates - 1, progress.now);
    }

    // The last iteration of each worker whose row was handed over before the checkpoint
    // this engine resumed from (rows past it are recorded again).
    std::vector<std::int64_t> recorded_through() const
    {
        std::vector<std::int64_t> through;
        for (const WorkerState& w : state)
            through.push_back(w.recorded_through);
        return through;
    }

    // The safe point between two events: the operator's requests take effect here.
    void apply_control(double t)
    {
        const std::int64_t at = std::max<std::int64_t>(0, progress.updates - 1);
        core.request_scheduled(progress.updates, t);
        core.hold_if_paused(at, t, stop_flag, "after update " + std::to_string(progress.updates));
        core.apply_slowdowns(at, t);
        if (core.switch_sync_model(at, t)) {
            const Kind was = kind;
            if (sync::closes_every_iteration(core.sync_model().type)) {
                draining = true; // the barrier engine goes on once the batches under way arrive
            } else {
                kind = kind_of(core.sync_model().type);
                if (kind == Kind::ElasticBsp && was != Kind::ElasticBsp) {
                    // A superstep begins once the batches under way arrive.
                    for (std::size_t i = 0; i < state.size(); ++i) {
                        superstep_start[i] = state[i].clock;
                        state[i].quota = state[i].clock + (state[i].busy ? 1 : 0);
                    }
                }
            }
        }
        apply_manager_changes(at, t);
    }

    // The operator's (and the policies') pins, exclusions and resizes take effect.
    void apply_manager_changes(std::int64_t at, double t)
    {
        if (!manager.changes_due(t))
            return;
        std::vector<bool> was_active(state.size());
        for (std::size_t i = 0; i < state.size(); ++i)
            was_active[i] = active(i);
        const balance::Allocation allocation = manager.next({}, at, t);
        core.forward_manager_events(at, t);
        // A worker let back in joins the pack rather than holding SSP's bound at its old clock.
        const std::int64_t slowest = slowest_clock(); // of those active until now
        batch = allocation.batch_sizes;
        decisions = allocation.decisions;
        for (std::size_t i = 0; i < state.size(); ++i)
            if (active(i) && !was_active[i]) {
                // Back after sitting out: its exclusion's reserved give-up is a past batch's.
                job.release->keep(static_cast<WorkerId>(i));
                if (!state[i].busy)
                    join_pack(i, slowest);
            }
    }

    void join_pack(std::size_t i, std::int64_t slowest)
    {
        state[i].clock = std::max(state[i].clock, slowest);
        state[i].quota = state[i].clock;
        superstep_start[i] = state[i].clock;
    }

    void drop_lost(std::size_t i, const RemoteLoss& loss, double t)
    {
        WorkerState& s = state[i];
        s.busy = false;
        s.row.decision = loss.decision();
        s.row_open = true;
        close_row(i, t);
        const auto worker = static_cast<WorkerId>(i);
        if (loss.lost()) { // an excluded one's exclusion is the operator's, applied at the next safe point
            core.emit(std::max<std::int64_t>(0, progress.updates - 1), t, EventKind::WorkerLost,
                "worker " + std::to_string(worker) + " " + loss.describe() + " during its iteration "
                    + std::to_string(s.row.iteration) + ": its batch is dropped; its share goes to the others",
                EventActor::system(), worker);
            try { // the manager's: its batch is lost already, none to give up (a rejoin includes it)
                manager.exclude(worker, std::nullopt, EventActor::system("worker lost"));
            } catch (const RefusedRequest&) {
                // already excluded, or the last active worker (then no one is left to go on)
            }
        } else { // given up at an exclusion or removal: in effect now, or lifted while the batch ran
            apply_manager_changes(std::max<std::int64_t>(0, progress.updates - 1), t);
        }
        if (loss.lost() || manager.state(worker).idle())
            batch[i] = 0; // starts nothing until the exclusion is lifted (a rejoin includes it)
        else // included again: it goes on at the pack's clock
            join_pack(i, slowest_clock(i));
        if (draining)
            switch_ready = std::none_of(state.begin(), state.end(), [](const WorkerState& w) { return w.busy; });
    }

    // A batch that brings nothing back (lost, or given up at an exclusion): dropped, and
    // whoever waited on it may go on.
    void drop_and_go_on(std::size_t i, const RemoteLoss& loss, double t)
    {
        drop_lost(i, loss, t);
        if (!draining && !progress.done)
            restart(i, t);
        // A drain for a switch to a barrier model whose last batch this was is ready, not stuck.
        if (!progress.done && !switch_ready
            && std::none_of(state.begin(), state.end(), [](const WorkerState& w) { return w.busy; }))
            throw std::runtime_error("every worker of the job is lost or waits on one that is; it cannot go on");
    }

    bool run(const std::atomic<bool>* stop)
    {
        stop_flag = stop;
        draining = false;
        switch_ready = false;
        progress.free_running_ran = true;
        kind = kind_of(core.sync_model().type);
        const std::size_t n = job.workers.size();
        checkpoints.start(std::nullopt);
        if (resumed) {
            // The batches under way arrive again in the order they started.
            resumed = false;
            std::vector<std::size_t> busy;
            for (std::size_t i = 0; i < n; ++i)
                if (state[i].busy)
                    busy.push_back(i);
            std::sort(busy.begin(), busy.end(),
                [&](std::size_t a, std::size_t b) { return state[a].started < state[b].started; });
            timing->resume_batches(busy);
        } else {
            state.clear();
            state.resize(n);
            for (auto& s : state) {
                s.clock = progress.next;
                s.quota = progress.next
                    + 1; // the first ElasticBSP superstep is one plain BSP iteration: nothing is known yet
                s.recorded_through = progress.next - 1;
            }
            superstep_start.assign(n, progress.next);
            const double t = now();
            // At the job's start the policy's first sizes; after a barrier segment the uniform
            // split around the pins and exclusions in effect (the policy is uniform here).
            const std::int64_t at = std::max<std::int64_t>(0, progress.updates - 1);
            const balance::Allocation allocation
                = progress.updates == 0 && progress.next == 0 ? manager.initial() : manager.next({}, at, t);
            core.forward_manager_events(at, t);
            batch = allocation.batch_sizes;
            decisions = allocation.decisions;
            for (std::size_t i = 0; i < n; ++i)
                if (active(i))
                    start(i, t);
        }
        if (!progress.done && !switch_ready)
            timing->run_until_done();
        std::int64_t next = progress.next;
        for (std::size_t i = 0; i < n; ++i) {
            close_row(i, switch_ready ? now() : state[i].row.end_s);
            next = std::max(next, state[i].clock);
        }
        progress.next = next;
        progress.observations.clear();
        return switch_ready;
    }

    Kind kind = Kind::Asp;
    std::vector<std::int32_t> batch; // each worker's next batch; 0 while excluded
    std::vector<std::string> decisions; // the manager's per-worker tags when an override applies
    std::vector<WorkerState> state;
    std::vector<std::int64_t> superstep_start;
    const std::atomic<bool>* stop_flag = nullptr;
    std::unique_ptr<Clock> timing; // the mode's
    StallWatch stalls { config.stall, job, observer, manager, *job.release };
    bool draining = false; // a switch to bsp or backup: no more starts
    bool switch_ready = false; // ... and every batch under way has arrived
    std::uint64_t starts = 0; // batches started, numbering each start
    bool resumed = false; // from a checkpoint: the state is read, the arrivals not yet scheduled
    CheckpointSchedule checkpoints { core }; // counted in updates
};

// Virtual and paced modes: a batch is computed when it starts, timed by the worker's
// performance model, and arrives through the event queue, so a run is the same on any
// machine.
struct FreeRunningEngine::Impl::ModelledClock final : Clock {
    explicit ModelledClock(Impl& engine)
        : e(engine)
    {
    }

    double now() const override { return e.clock.now(); }

    void begin_batch(std::size_t i, double t) override
    {
        WorkerState& s = e.state[i];
        IterationRecord& row = s.row;
        row.loss = e.job.endpoints[i]->compute(s.clock, row.batch_size, 1).loss; // the model times it
        // The batch's pull and push as one transfer on the worker's link, asked for as it starts.
        const double alone = perf::communication_time(e.job.workers[i]->setup().network, e.job.model_bytes, s.clock);
        const CommTransfer transfer { t, static_cast<double>(e.job.model_bytes), { static_cast<WorkerId>(i) },
            { alone } };
        time_modelled_batch(e.core, row, i, t, alone, ask_for_links(e.core, transfer, e.stop_flag), 0);
        row.speed = row.compute_s > 0 ? row.batch_size / row.compute_s : 0;
        schedule_arrival(i);
    }

    // Its batch arrives at its end unless it was given up meanwhile (release_given_up).
    void schedule_arrival(std::size_t i)
    {
        const WorkerState& s = e.state[i];
        e.clock.schedule(s.row.end_s, [this, i, version = s.pulled_version, started = s.started] {
            if (e.state[i].busy && e.state[i].started == started)
                e.arrive(i, version);
        });
    }

    void after_arrival(double t) override { pace_to(e.core, t, e.stop_flag); }

    void run_until_done() override
    {
        const bool paced = paced_in_wall_time(e.core);
        while (!e.progress.done && !e.switch_ready) {
            if (paced)
                release_given_up();
            if (!e.clock.step())
                break;
        }
    }

    // Paced: the wall clock catches up with the next arrival before it is taken, so that an
    // operator's exclusion or removal of a worker whose modelled batch is still under way
    // gives the batch up at that instant, as in the real mode (issue 42 item 2): its row is
    // "dropped: excluded", and whoever waited on it (SSP's bound) goes on.
    void release_given_up()
    {
        engine::Pacer& pacer = e.core.pacer();
        std::vector<WorkerId> under_way; // a batch whose modelled arrival has passed is not
        double next = std::numeric_limits<double>::infinity();
        for (std::size_t i = 0; i < e.state.size(); ++i)
            if (e.state[i].busy) {
                next = std::min(next, e.state[i].row.end_s);
                if (e.state[i].row.end_s > pacer.now())
                    under_way.push_back(static_cast<WorkerId>(i));
            }
        if (under_way.empty())
            return;
        const std::optional<WorkerId> gone = e.job.release->wait_for_give_up(under_way, pacer.due(next), e.stop_flag);
        if (!gone)
            return;
        const auto i = static_cast<std::size_t>(*gone);
        const double at = std::clamp(pacer.now(), e.clock.now(), next);
        e.clock.schedule(at, [this, i, at, started = e.state[i].started] {
            WorkerState& s = e.state[i];
            if (!s.busy || s.started != started)
                return;
            s.row.compute_s = 0;
            s.row.speed = 0;
            s.row.end_s = at;
            e.drop_and_go_on(i, RemoteLoss { RemoteLoss::Kind::Excluded }, at);
        });
    }

    bool holds_batches_under_way() const override { return true; }

    void resume_batches(const std::vector<std::size_t>& under_way) override
    {
        for (const std::size_t i : under_way)
            schedule_arrival(i);
    }

    Impl& e;
};

// Real mode: worker i's thread computes each batch begin_batch() hands it on the worker's
// endpoint and queues what it measured; the engine's thread takes the completions in the
// order they came, so every arrival is handled on one thread, as the virtual clock's are,
// and no worker waits on another's arrival.
struct FreeRunningEngine::Impl::ThreadedClock final : Clock {
    explicit ThreadedClock(Impl& engine)
        : e(engine)
        , go(engine.job.workers.size(), false)
        , pull_s(engine.job.workers.size(), 0.0)
        , last_comm_s(engine.job.workers.size(), 0.0)
    {
    }

    // What worker i's thread measured for one batch.
    struct Completion {
        std::size_t worker = 0;
        double ended = 0;
        double held_s = 0; // waited for fulcrumd's communication scheduler before the batch
        BatchMeasurement batch;
    };

    double now() const override { return e.job.wall_seconds(); }

    // Called on the engine's thread with `mutex` held (run_until_done) or before the
    // threads exist; they take the batch when woken.
    void begin_batch(std::size_t i, double t) override
    {
        pull_s[i] = now() - t;
        go[i] = true;
    }

    void after_arrival(double /*t*/) override { }

    bool holds_batches_under_way() const override { return false; }

    // The checkpoint abandoned the batches under way: they start again.
    void resume_batches(const std::vector<std::size_t>& /*under_way*/) override
    {
        const std::int64_t slowest = e.slowest_clock();
        for (std::size_t i = 0; i < e.state.size(); ++i)
            if (!e.state[i].busy && e.may_start(i, slowest))
                e.start(i, now());
    }

    void work(std::size_t i)
    {
        WorkerEndpoint& endpoint = *e.job.endpoints[i];
        for (;;) {
            std::int32_t batch_size = 0;
            std::int64_t iteration = 0;
            double factor = 1;
            double alone = 0;
            {
                std::unique_lock lock(mutex);
                wake.wait(lock, [&] { return go[i] || finished; });
                if (finished)
                    return;
                go[i] = false;
                batch_size = e.state[i].row.batch_size;
                iteration = e.state[i].row.iteration;
                factor = e.core.slowdown(i);
                alone = last_comm_s[i];
            }
            Completion c;
            c.worker = i;
            c.held_s = hold_for_links(i, iteration, alone);
            c.batch = endpoint.compute(iteration, batch_size, factor);
            c.ended = e.job.wall_seconds();
            std::lock_guard lock(mutex);
            completions.push_back(c);
            completed.notify_one();
        }
    }

    // On worker i's thread, before its batch's pull and push: where fulcrumd's communication
    // scheduler decides (a remote worker's transfer crosses fulcrumd's link), the worker asks
    // with its last measured transfer (before any, its network profile's estimate) and waits
    // while held, as a barrier job's iteration does (MeasuredBarrierClock::hold_for_links).
    // Its wall seconds spent held; the real transfer is never stretched.
    double hold_for_links(std::size_t i, std::int64_t iteration, double last_measured)
    {
        if (!e.config.comm_gate)
            return 0;
        const double asked = now();
        const CommTransfer transfer { asked, static_cast<double>(e.job.model_bytes), { static_cast<WorkerId>(i) },
            { e.job.transfer_s(i, iteration, last_measured) } };
        e.config.comm_gate(transfer, &abandon);
        return now() - asked;
    }

    // On the engine's thread: a completed batch arrives.
    void complete(const Completion& c)
    {
        WorkerState& s = e.state[c.worker];
        IterationRecord& row = s.row;
        const BatchMeasurement& m = c.batch;
        e.stalls.end_batch(c.worker, c.ended, m.lost.has_value());
        const double transfer_s = m.lost ? 0 : std::max(0.0, m.elapsed_s - m.compute_s);
        if (transfer_s > 0)
            last_comm_s[c.worker] = transfer_s;
        row.loss = m.loss;
        row.compute_s = m.lost ? 0 : m.compute_s;
        row.comm_s = pull_s[c.worker] + c.held_s + transfer_s;
        row.cpu_share = m.compute_s > 0 ? std::min(1.0, m.cpu_seconds / m.compute_s) : 1.0;
        row.memory_share = m.memory_share.value_or(perf::memory_available_share());
        row.gpu = m.gpu;
        row.speed = row.compute_s > 0 ? row.batch_size / row.compute_s : 0;
        row.end_s = c.ended;
        if (!m.lost) {
            e.arrive(c.worker, s.pulled_version);
            return;
        }
        e.drop_and_go_on(c.worker, *m.lost, c.ended);
    }

    // Until a completion is queued, waking at each stall's instant to report it and take the
    // job's on_stall action (a given-up batch then completes at once, as lost).
    void wait_watching_stalls(std::unique_lock<std::mutex>& lock)
    {
        const auto queued = [&] { return !completions.empty(); };
        for (;;) {
            const std::optional<double> due = e.stalls.next_due();
            if (!due) {
                completed.wait(lock, queued);
                return;
            }
            if (completed.wait_for(lock, std::chrono::duration<double>(std::max(0.0, *due - now())), queued))
                return;
            // Its events and a given-up task take other locks; the workers' threads go on. A batch
            // that completes meanwhile ran past its limit all the same: reported, then recovered.
            lock.unlock();
            try {
                e.stalls.check(now(), {});
            } catch (...) {
                lock.lock();
                throw;
            }
            lock.lock();
        }
    }

    // The engine's loop over the completions, with one thread per worker.
    void run_until_done() override
    {
        std::vector<std::thread> threads;
        const auto stop_threads = [&] {
            {
                std::lock_guard lock(mutex);
                finished = true;
            }
            abandon = true; // a worker held for the links gives up its turn
            wake.notify_all();
            for (std::thread& t : threads)
                t.join();
            completions.clear();
            std::fill(go.begin(), go.end(), false); // a batch handed out and not taken is abandoned
            finished = false;
            abandon = false;
        };
        try {
            // Inside: a thread the system refuses ends the job after joining those started.
            for (std::size_t i = 0; i < e.state.size(); ++i)
                threads.emplace_back([this, i] { work(i); });
            std::unique_lock lock(mutex);
            while (!e.progress.done && !e.switch_ready) {
                wait_watching_stalls(lock);
                const Completion c = completions.front();
                completions.pop_front();
                complete(c);
                wake.notify_all(); // the batches complete() started
            }
        } catch (...) {
            stop_threads();
            throw;
        }
        stop_threads();
    }

    Impl& e;
    // The engine's thread and the workers' threads meet here.
    std::mutex mutex; // guards the engine's state while it handles a completion
    std::condition_variable wake; // a worker has a batch to compute, or training ended
    std::condition_variable completed; // a worker's batch is done
    std::deque<Completion> completions;
    std::vector<bool> go; // per worker: its thread is to compute the batch just started
    std::vector<double> pull_s; // per worker: how long the pull at its batch's start took
    std::vector<double> last_comm_s; // per worker: its last batch's measured pull and push
    bool finished = false; // the workers' threads end
    std::atomic<bool> abandon { false }; // ... and one held for the links stops waiting
};

FreeRunningEngine::Impl::Impl(JobCore& c)
    : EngineRefs(c)
{
    if (config.mode == ClockMode::Real)
        timing = std::make_unique<ThreadedClock>(*this);
    else
        timing = std::make_unique<ModelledClock>(*this);
}

FreeRunningEngine::FreeRunningEngine(JobCore& core)
    : impl_(std::make_unique<Impl>(core))
{
}

FreeRunningEngine::~FreeRunningEngine() = default;

bool FreeRunningEngine::run(const std::atomic<bool>* stop)
{
    return impl_->run(stop);
}

bool FreeRunningEngine::reads(std::string_view format)
{
    return format == Impl::kCheckpointFormat || format == Impl::kCheckpointFormat1;
}

void FreeRunningEngine::resume_from_checkpoint(StateReader& in)
{
    impl_->resume(in);
}

std::vector<std::int64_t> FreeRunningEngine::recorded_through() const
{
    return impl_->recorded_through();
}

} // namespace fulcrum::train
