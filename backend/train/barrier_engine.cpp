#include "train/barrier_engine.h"

#include "balance/policy_registry.h"
#include "common/state_archive.h"
#include "engine/event_queue.h"
#include "engine/pacer.h"
#include "train/barrier_clock.h"
#include "train/checkpoint_schedule.h"
#include "train/stall_watch.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace fulcrum::train {

namespace {

std::string seconds_text(double seconds)
{
    std::ostringstream text;
    text << seconds << " s";
    return text.str();
}

} // namespace

struct BarrierEngine::Impl : EngineRefs {
    explicit Impl(JobCore& c)
        : EngineRefs(c)
        , stalls(config.stall, job, observer, manager, *job.release)
    {
        if (config.elastic.batch_per_worker > 0)
            manager.follow_members(config.elastic.batch_per_worker);
        if (config.elastic.enabled())
            manager.start_with_members(job.members);
        device_memory.assign(job.workers.size(), 0.0);
        timing = make_barrier_clock(core, device_memory);
        scheduled = config.elastic.resizes;
        std::stable_sort(scheduled.begin(), scheduled.end(),
            [](const ScheduledResize& a, const ScheduledResize& b) { return a.before_iteration < b.before_iteration; });
    }

    // Elastic PS changes due before iteration k: the scheduled ones, then the requested ones.
    // The previous barrier has applied every gradient it took and no worker is computing, so
    // nothing is in flight while servers and data move. In the modelled modes the job then
    // pauses for what the changes cost (elastic.pause_s) on its run clock; returns the time
    // the next iteration starts at.
    double apply_resizes(std::int64_t k, double now)
    {
        double pause = 0;
        std::vector<ResizeRequest> due;
        while (next_scheduled < scheduled.size() && scheduled[next_scheduled].before_iteration <= k)
            due.push_back(scheduled[next_scheduled++].request);
        for (ResizeRequest& request : core.control().take<ResizeRequest>())
            due.push_back(std::move(request));
        for (const ResizeRequest& request : due) {
            JobEvent e = job.event(k, now, EventKind::ResizeRefused, "");
            e.actor = request.actor;
            e.answers = request.ticket;
            try {
                const ResizeRequest r = job.resolved(request);
                const int slot = *r.target;
                if (r.action == ResizeAction::RemoveWorker)
                    manager.leave(slot); // refuses to leave only excluded workers behind
                ResizeOutcome outcome;
                try {
                    outcome = job.resize(r);
                } catch (...) {
                    if (r.action == ResizeAction::RemoveWorker)
                        manager.join(slot);
                    throw;
                }
                if (r.action == ResizeAction::AddWorker)
                    manager.join(slot);
                e.kind = event_kind(r.action);
                e.message = outcome.describe();
                const double paused = request.pause_s.value_or(config.elastic.pause_s.of(r.action));
                if (paused > 0 && config.mode != ClockMode::Real) {
                    pause += paused;
                    e.message += "; the job pauses " + seconds_text(paused) + " for it";
                }
                if (r.action == ResizeAction::AddWorker || r.action == ResizeAction::RemoveWorker)
                    e.worker = slot;
            } catch (const RefusedRequest& error) { // ResizeError, or the manager's OverrideError
                e.message
                    = std::string(action_name(request.action)) + " refused (" + error.code() + "): " + error.what();
                if (request.action == ResizeAction::RemoveWorker && request.target)
                    job.release->keep(*request.target); // it trains on: its next batch is not given up
            }
            if (!request.reason.empty())
                e.message += "; " + request.reason;
            // Before the event: fulcrumd's record of the job takes the change as made once it
            // hears of it, and reads the servers from here.
            core.control().servers_in_effect(static_cast<int>(job.server.shards().size()));
            observer.on_event(e);
        }
        if (pause <= 0)
            return now;
        clock.schedule(now + pause, [] {}); // the move, on the job's own clock
        clock.step();
        return clock.now();
    }

    ~Impl()
    {
        if (pool)
            pool->join();
    }

    // An operator's set-sync-model, applied before iteration k. BSP and backup(k) differ only
    // in how many arrivals close the barrier, so a switch between them needs nothing else;
    // a switch to a free-running model ends this engine's segment (true). The previous
    // barrier applied every gradient it took, so nothing is in flight.
    bool apply_sync_change(std::int64_t k, double now)
    {
        if (!core.switch_sync_model(k, now))
            return false;
        return !sync::closes_every_iteration(core.sync_model().type);
    }

    int backups() const { return core.sync_model().type == sync::SyncType::Backup ? core.sync_model().backups : 0; }

    // Weak scaling (elastic.batch_per_worker): the job's work is its samples, not its barriers.
    bool weak_scaling() const { return config.elastic.batch_per_worker > 0; }
    std::int64_t work_samples() const { return config.iterations * static_cast<std::int64_t>(config.total_batch); }
    bool trained(const TrainingProgress& loop) const
    {
        return weak_scaling() ? loop.samples >= work_samples() : loop.updates >= config.iterations;
    }
    // The barriers a weak-scaled job now plans in all: those run, and its samples left at X.
    std::int64_t planned(const TrainingProgress& loop) const
    {
        if (!weak_scaling())
            return config.iterations;
        const std::int64_t x = std::max<std::int32_t>(1, manager.total_batch());
        return loop.updates + (std::max<std::int64_t>(0, work_samples() - loop.samples) + x - 1) / x;
    }

    // Every participating worker pulls and computes on its endpoint, in parallel; returns
    // when all are done. `tasks` is indexed by worker. In real mode the wait watches for
    // stalls (StallWatch) as it goes.
    std::vector<BarrierTask> compute_all(
        const std::vector<std::size_t>& active, const balance::Allocation& allocation, std::int64_t k)
    {
        const std::vector<std::int32_t>& sizes = allocation.batch_sizes;
        std::vector<BarrierTask> tasks(job.workers.size());
        std::mutex arrivals;
        std::condition_variable changed;
        std::vector<bool> ended(job.workers.size(), false);
        std::size_t left = active.size();
        if (!pool)
            pool.emplace(timing->compute_threads());
        const bool watching = config.mode == ClockMode::Real;
        stalls.begin(k, job.wall_seconds(), active, sizes, allocation.predicted_speeds);
        for (const std::size_t i : active)
            boost::asio::post(*pool, [&, i] {
                BarrierTask& task = tasks[i];
                task.pull_start = job.wall_seconds();
                job.server.pull(job.workers[i]->replica());
                task.pull_end = job.wall_seconds();
                task.batch = job.endpoints[i]->compute(k, sizes[i], timing->endpoint_slowdown(core.slowdown(i)));
                task.end = job.wall_seconds();
                std::lock_guard lock(arrivals);
                ended[i] = true;
                --left;
                changed.notify_one();
            });
        std::unique_lock lock(arrivals);
        std::exception_ptr failed; // the tasks use this frame: it is not left before they end
        while (left > 0) {
            const std::optional<double> due = watching && !failed ? stalls.next_due() : std::nullopt;
            if (!due) {
                changed.wait(lock, [&] { return left == 0; });
                break;
            }
            const double wait_s = std::max(0.0, *due - job.wall_seconds());
            if (changed.wait_for(lock, std::chrono::duration<double>(wait_s), [&] { return left == 0; }))
                break;
            // As of now, read after unlocking. A batch that ends between the wake and the check
            // ran past its limit all the same: reported stalled, then recovered, is what it did.
            const std::vector<bool> seen(ended.begin(), ended.end());
            lock.unlock(); // its events and a given-up task take other locks
            try {
                stalls.check(job.wall_seconds(), seen);
            } catch (...) { // recording the event failed: wait for the tasks, then fail
                failed = std::current_exception();
            }
            lock.lock();
        }
        lock.unlock();
        if (failed)
            std::rethrow_exception(failed);
        if (watching)
            stalls.finish(tasks);
        return tasks;
    }

    // A remote worker that is lost (disconnected, or silent for the worker timeout) is
    // excluded from the next barrier on (its share goes to the others) and the loss becomes
    // an event; training goes on.
    void drop_lost_worker(WorkerId worker, const RemoteLoss& loss, std::int64_t k, double now)
    {
        JobEvent e = job.event(k, now, EventKind::WorkerLost,
            "worker " + std::to_string(worker) + " " + loss.describe() + " during iteration " + std::to_string(k)
                + ": dropped from this barrier; its share goes to the others");
        e.worker = worker;
        observer.on_event(e);
        try {
            manager.exclude(worker, std::nullopt, EventActor::system("worker lost"));
        } catch (const RefusedRequest&) {
            // already excluded (lost again before the exclusion applied), or the last worker
        }
    }

    // Format 2 appends the update count and the free-running segments' totals (a job may
    // have switched sync models); a format-1 checkpoint is read with updates = next iteration.
    // Format 3 holds random streams as words and permutations as 4-byte indices
    // (StateWriter), which the reader tells apart from formats 1 and 2's by their tags; the
    // new line makes a fulcrumd older than it refuse one as a format it does not read.
    static constexpr std::string_view kCheckpointFormat = "fulcrum bsp checkpoint 3";
    static constexpr std::string_view kCheckpointFormat2 = "fulcrum bsp checkpoint 2";
    static constexpr std::string_view kCheckpointFormat1 = "fulcrum bsp checkpoint 1";

    // The whole state between two barriers, or nothing when the policy keeps no checkpoint.
    std::optional<std::string> checkpoint(const TrainingProgress& loop) const
    {
        StateWriter out;
        out.put(kCheckpointFormat);
        save_progress(out, loop);
        out.put(device_memory);
        core.save_sync(out);
        out.put(static_cast<std::uint64_t>(next_scheduled));
        out.put(clock.now());
        if (!manager.save_state(out))
            return std::nullopt;
        job.save_state(out);
        save_totals(out, loop);
        return out.take();
    }

    void resume(StateReader& in, const std::string& format, TrainingProgress& loop)
    {
        load_progress(in, loop, config.job);
        in.get(device_memory, "device memory");
        if (device_memory.size() != job.workers.size())
            in.fail("device memory", "names another number of workers than this job's");
        core.load_sync(in);
        if (!sync::closes_every_iteration(core.sync_model().type))
            in.fail("sync model", "is not bsp or backup");
        next_scheduled = static_cast<std::size_t>(in.get<std::uint64_t>("scheduled resizes"));
        if (next_scheduled > scheduled.size())
            in.fail("scheduled resizes", "count more than the scenario has");
        clock.restore(in.get<double>("virtual clock"));
        manager.load_state(in);
        job.load_state(in);
        loop.updates = loop.next;
        if (format != kCheckpointFormat1)
            load_totals(in, loop);
        if (!in.at_end())
            in.fail("end", "the checkpoint holds more than this trainer reads");
        if (loop.updates < 0 || loop.next < loop.updates || (!weak_scaling() && loop.updates > config.iterations))
            in.fail("next iteration", "lies outside the job's " + std::to_string(config.iterations) + " iterations");
        if (weak_scaling() && loop.samples > work_samples() + manager.total_batch())
            in.fail("samples", "lie beyond the job's " + std::to_string(work_samples()) + " samples");
    }

    // After iteration loop.next - 1: every `checkpoint_every` barriers, every
    // `checkpoint_seconds` of wall time, or because the run stops (`forced`).
    void maybe_checkpoint(const TrainingProgress& loop, bool forced)
    {
        if (loop.next > 0 && checkpoints.due(loop.next, forced))
            checkpoints.take(checkpoint(loop), loop.next, loop.next - 1, loop.now);
    }

    // Barriers from iteration progress.next until the budget, the target accuracy or a stop
    // request ends training (false), or a switch to a free-running model ends the segment
    // (true) with progress.next the iteration that would have run.
    bool run(const std::atomic<bool>* stop)
    {
        const std::size_t n = job.workers.size();
        TrainingProgress& loop = progress;
        TrainingResult& result = loop.result;
        std::vector<balance::WorkerObservation>& observations = loop.observations;
        std::int64_t& samples = loop.samples;
        double& now = loop.now;
        double& train_loss = loop.train_loss;
        std::vector<IterationRecord> rows;
        std::vector<ps::GradientPush> pushes;
        const std::vector<std::int32_t> limits = job.batch_limits();
        checkpoints.start(loop.next); // a resumed job's checkpoint, or none yet

        std::int64_t k = loop.next;
        const auto stopping = [&] {
            if (!core.stop_requested(stop))
                return false;
            result.stopped = true;
            loop.next = k;
            maybe_checkpoint(loop, true); // a clean stop leaves a checkpoint to resume from
            loop.checkpointed_at_stop = checkpoints.on() && checkpoints.taken_at(loop.next);
            loop.done = true;
            return true;
        };
        core.control().servers_in_effect(
            static_cast<int>(job.server.shards().size())); // the start's, or a checkpoint's
        std::int64_t plan = planned(loop);
        if (plan != config.iterations)
            observer.on_plan(plan); // a resumed job that was resized
        while (!trained(loop)) {
            if (stopping())
                return false;
            core.hold_if_paused(k, now, stop, "before iteration " + std::to_string(k));
            if (stopping())
                return false;
            core.request_scheduled(k, now);
            core.record_notes(k, now);
            now = apply_resizes(k, now);
            core.apply_slowdowns(k, now);
            if (apply_sync_change(k, now)) {
                loop.next = k;
                return true;
            }
            const int backups = this->backups();
            const balance::Allocation allocation = k == 0 ? manager.initial() : manager.next(observations, k - 1, now);
            core.forward_manager_events(k, now);
            if (weak_scaling() && planned(loop) != plan) // X followed a change of members
                observer.on_plan(plan = planned(loop));
            if (allocation.batch_sizes.size() != n)
                throw std::logic_error("the batch-size manager returned the wrong number of batch sizes");
            std::vector<std::size_t> active;
            for (std::size_t i = 0; i < n; ++i)
                if (allocation.batch_sizes[i] > 0)
                    active.push_back(i);
            // Back after sitting out (a timed exclusion ran out, a slot added again): the batch
            // its exclusion reserved for giving up is a past one, not this.
            for (const std::size_t i : active)
                if (i < active_before.size() && !active_before[i])
                    job.release->keep(static_cast<WorkerId>(i));
            active_before.assign(n, false);
            for (const std::size_t i : active)
                active_before[i] = true;
            const std::size_t needed = std::max<std::size_t>(1,
                active.size() > static_cast<std::size_t>(backups) ? active.size() - static_cast<std::size_t>(backups)
                                                                  : 1);

            timing->hold_for_links(active, k, stop);
            const double dispatched = timing->dispatch(now);
            std::vector<BarrierTask> tasks = compute_all(active, allocation, k);

            rows.assign(active.size(), IterationRecord {});
            for (std::size_t r = 0; r < active.size(); ++r) {
                const std::size_t i = active[r];
                IterationRecord& row = rows[r];
                row.job = config.job;
                row.worker = static_cast<WorkerId>(i);
                row.iteration = k;
                row.batch_size = allocation.batch_sizes[i];
                row.loss = tasks[i].batch.loss;
                row.predicted_speed
                    = i < allocation.predicted_speeds.size() ? allocation.predicted_speeds[i] : std::nullopt;
                row.decision = allocation.decisions.empty() ? allocation.decision : allocation.decisions[i];
            }
            const double barrier = timing->close_barrier(rows, tasks, dispatched, k, needed, stop);
            train_loss = 0;
            observations.clear();
            pushes.clear();
            std::int64_t used = 0;
            std::vector<std::pair<WorkerId, RemoteLoss>> lost;
            for (IterationRecord& row : rows) {
                const auto i = static_cast<std::size_t>(row.worker);
                if (tasks[i].batch.lost) {
                    // Dropped from this barrier; excluded below, so its share goes to the others.
                    row.end_s = barrier;
                    row.compute_s = 0;
                    row.wait_s = 0;
                    row.speed = 0;
                    row.decision = tasks[i].batch.lost->decision();
                    if (tasks[i].batch.lost->lost()) // an excluded one's exclusion is the operator's
                        lost.emplace_back(row.worker, *tasks[i].batch.lost);
                    continue;
                }
                row.speed = row.compute_s > 0 ? row.batch_size / row.compute_s : 0;
                balance::WorkerObservation o { row.worker, row.batch_size, row.compute_s, row.comm_s, row.cpu_share,
                    row.memory_share };
                const perf::ResourceShare next = timing->next_share(row, barrier);
                o.next_cpu_share = next.cpu;
                o.next_memory_share = next.memory;
                // Measured where the device was read (real mode), else the performance model's.
                o.device_memory = row.gpu.memory_share.value_or(device_memory[i]);
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
                throw std::runtime_error(
                    "every worker of iteration " + std::to_string(k) + " is lost; the job cannot go on");
            for (const auto& [w, loss] : lost)
                drop_lost_worker(w, loss, k, barrier);
            observer.on_barrier(k, pushes);
            job.server.apply_barrier(pushes);
            now = barrier;
            ++loop.updates;

            // Evaluations are numbered by update, as the free-running models number theirs.
            const double epoch = static_cast<double>(samples) / static_cast<double>(config.train->size());
            if (loop.updates % config.eval_interval == 0 || trained(loop)) {
                result.final_evaluation = job.evaluate(loop.updates - 1, now, epoch, train_loss);
                result.best_accuracy = std::max(result.best_accuracy, result.final_evaluation.test_accuracy);
                observer.on_evaluation(result.final_evaluation);
                if (config.target_accuracy && !result.target_time_s
                    && result.final_evaluation.test_accuracy >= *config.target_accuracy) {
                    result.target_time_s = now;
                    result.target_updates = loop.updates;
                }
            }
            if (config.mode != ClockMode::Real)
                stalls.judge(rows); // the rows final: a backup's late batch was dropped
            // After the evaluation, so whoever shows progress shows this iteration's accuracy.
            stalls.observe(rows);
            observer.on_iteration(rows);
            loop.next = ++k;
            maybe_checkpoint(loop, false);
            timing->after_barrier(now, stop);
            if (result.target_time_s)
                break;
        }
        loop.done = true;
        return false;
    }

    std::optional<boost::asio::thread_pool> pool; // made at the first barrier: a job may never run one
    StallWatch stalls;
    std::vector<bool> active_before; // by worker, in the last iteration's allocation
    std::vector<double> device_memory;
    std::unique_ptr<BarrierClock> timing; // the mode's: how the iterations are timed
    std::vector<ScheduledResize> scheduled;
    std::size_t next_scheduled = 0;
    CheckpointSchedule checkpoints { core }; // counted in barriers (`next`)
};

BarrierEngine::BarrierEngine(JobCore& core)
    : impl_(std::make_unique<Impl>(core))
{
}

BarrierEngine::~BarrierEngine() = default;

bool BarrierEngine::run(const std::atomic<bool>* stop)
{
    return impl_->run(stop);
}

bool BarrierEngine::reads(std::string_view format)
{
    return format == Impl::kCheckpointFormat || format == Impl::kCheckpointFormat2
        || format == Impl::kCheckpointFormat1;
}

void BarrierEngine::resume_from_checkpoint(StateReader& in, const std::string& format)
{
    TrainingProgress loop;
    impl_->resume(in, format, loop);
    impl_->progress = std::move(loop);
    impl_->checkpoints.resumed_at(impl_->progress.next);
}

} // namespace fulcrum::train
