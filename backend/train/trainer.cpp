#include "train/trainer.h"

#include "balance/policy_registry.h"
#include "common/error.h"
#include "train/barrier_engine.h"
#include "train/free_running_engine.h"
#include "train/job_core.h"

#include <stdexcept>

namespace fulcrum::train {

JobTrainer::JobTrainer(
    TrainerConfig config, std::unique_ptr<balance::BatchSizeManager> manager, TrainingObserver& observer)
    : core_(std::make_unique<JobCore>(std::move(config), std::move(manager), observer))
{
    const TrainerConfig& c = core_->config();
    if (!sync::closes_every_iteration(c.sync.type)) {
        const std::string sync = sync::describe(c.sync);
        if (c.elastic.enabled())
            throw std::invalid_argument("elastic resizing needs barriers: use sync bsp or backup, not " + sync);
        if (balance::balances_at_barriers(core_->manager().policy().name()))
            throw std::invalid_argument(sync + " has no barrier to balance at; its policy must be uniform, not "
                + core_->manager().policy().name());
    }
    barrier_ = std::make_unique<BarrierEngine>(*core_);
    free_running_ = std::make_unique<FreeRunningEngine>(*core_);
}

JobTrainer::~JobTrainer() = default;

TrainingResult JobTrainer::run(const std::atomic<bool>* stop)
{
    JobCore& core = *core_;
    TrainingProgress& p = core.progress();
    const TrainerConfig& c = core.config();
    const bool starts_free = !sync::closes_every_iteration(core.sync_model().type);
    if (resumed_) { // the wall clock, the virtual clock and the progress come from the checkpoint
        core.pacer().start_at(p.now);
        const std::string where = starts_free
            ? "after update " + std::to_string(p.updates) + ": updates go on from " + std::to_string(p.updates + 1)
            : "at iteration " + std::to_string(p.next - 1) + ": iterations go on from " + std::to_string(p.next);
        std::string followed;
        if (const std::optional<double> until = core.control().recorded_until())
            followed = "; it follows the cluster its store recorded until " + exact_number(*until) + " s";
        core.emit(std::max<std::int64_t>(0, starts_free ? p.updates - 1 : p.next - 1), p.now,
            EventKind::CheckpointResumed,
            "resumed from checkpoint " + where + ", policy " + core.manager().policy().name() + ", sync "
                + sync::describe(core.sync_model()) + followed,
            EventActor::system());
    } else {
        core.job().run_start = std::chrono::steady_clock::now();
        core.emit(0, 0, EventKind::JobStarted,
            std::to_string(core.job().workers.size()) + " workers, " + c.prototype->name() + ", total batch "
                + std::to_string(c.total_batch) + (starts_free ? "" : ", policy " + core.manager().policy().name())
                + ", sync " + sync::describe(c.sync),
            EventActor::system());
        for (const auto& worker : core.job().workers)
            if (const std::string note = worker->device_note(); !note.empty())
                core.emit(0, 0, EventKind::GpuDevice, note, EventActor::system(), worker->id());
    }
    // On fulcrumd's shared clock the job's run clock as it starts (0, or its checkpoint's
    // time) is the daemon's time it was placed at, so that its first iteration takes daemon
    // time like every other.
    if (c.mode == ClockMode::Virtual && c.shared_clock)
        c.shared_clock(p.now, stop);
    // Each engine runs until training ends or a set-sync-model hands over to the other.
    bool free_running = starts_free;
    while (free_running ? free_running_->run(stop) : barrier_->run(stop))
        free_running = !free_running;

    core.job().finish(p.result, p.updates, p.samples, p.now, p.train_loss, core.observer(),
        p.result.stopped && p.checkpointed_at_stop);
    std::string summary;
    if (p.free_running_ran) {
        summary = std::to_string(p.updates) + " updates, largest staleness " + std::to_string(p.max_staleness);
        if (p.supersteps > 0)
            summary += ", " + std::to_string(p.supersteps) + " supersteps";
    } else {
        summary = std::to_string(p.updates) + " iterations";
    }
    const std::int64_t last = p.free_running_ran ? p.updates - 1 : p.next - 1;
    core.record_notes(std::max<std::int64_t>(0, last), p.now); // asked for after its last safe point
    core.emit(std::max<std::int64_t>(0, last), p.now, p.result.stopped ? EventKind::JobStopped : EventKind::JobFinished,
        summary, EventActor::system());
    return p.result;
}

void JobTrainer::resume_from_checkpoint(const std::string& state)
{
    StateReader in(state, "job " + std::to_string(core_->config().job) + "'s checkpoint");
    const std::string format = in.get_string("format");
    if (BarrierEngine::reads(format)) {
        barrier_->resume_from_checkpoint(in, format);
        core_->scheduled_done_before(core_->progress().next);
    } else if (FreeRunningEngine::reads(format)) {
        free_running_->resume_from_checkpoint(in);
        core_->scheduled_done_before(core_->progress().updates + 1);
    } else {
        in.fail("format", "is not a trainer checkpoint of this Fulcrum");
    }
    resumed_ = true;
    resumed_free_running_ = FreeRunningEngine::reads(format);
}

std::vector<std::int64_t> JobTrainer::rows_recorded_through() const
{
    return resumed_free_running_ ? free_running_->recorded_through() : std::vector<std::int64_t> {};
}

std::int64_t JobTrainer::samples_trained() const
{
    return resumed_ ? core_->progress().samples : 0;
}
JobControl& JobTrainer::control()
{
    return core_->control();
}
balance::BatchSizeManager& JobTrainer::manager()
{
    return core_->manager();
}
const ps::ParameterServer& JobTrainer::server() const
{
    return core_->job().server;
}
const TrainerConfig& JobTrainer::config() const
{
    return core_->config();
}

std::unique_ptr<Trainer> make_trainer(
    TrainerConfig config, std::unique_ptr<balance::BatchSizeManager> manager, TrainingObserver& observer)
{
    return std::make_unique<JobTrainer>(std::move(config), std::move(manager), observer);
}

} // namespace fulcrum::train
