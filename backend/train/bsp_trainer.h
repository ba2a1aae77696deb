#pragma once

#include "balance/batch_size_manager.h"
#include "train/job_state.h"
#include "train/training_observer.h"

#include <atomic>
#include <memory>

namespace fulcrum::train {

// Bulk-synchronous parameter-server training of one job. Each iteration: the
// BatchSizeManager sizes every worker's batch, workers pull, compute real gradients in
// parallel and push, the server aggregates at the barrier and steps. Only the clock differs
// by mode: virtual and paced take batch times from the workers' performance models
// (discrete-event clock), real measures them on the worker threads. With backup workers
// (sync type "backup") the barrier closes at the (n - k)-th arrival and the stragglers'
// gradients are dropped.
class BspTrainer {
public:
    BspTrainer(TrainerConfig config, std::unique_ptr<balance::BatchSizePolicy> policy, TrainingObserver& observer);
    // `manager` may be null: a uniform policy's manager is made.
    BspTrainer(TrainerConfig config, std::unique_ptr<balance::BatchSizeManager> manager, TrainingObserver& observer);
    ~BspTrainer();

    TrainingResult run(const std::atomic<bool>* stop = nullptr);
    // Before run(): go on from a checkpoint this job wrote (TrainingObserver::on_checkpoint)
    // after the iteration it was taken at, as the uninterrupted run would have (bit for bit
    // on the virtual clock). Throws InputError naming the part of a checkpoint that is
    // damaged or belongs to another job; the trainer is then unchanged enough to be dropped.
    void resume_from_checkpoint(const std::string& state);
    // After resume_from_checkpoint(): the samples trained on before the checkpoint (else 0).
    std::int64_t samples_trained() const;

    const ps::ParameterServer& server() const;
    const TrainerConfig& config() const;
    // Operator overrides go here (thread-safe); they take effect at the next barrier.
    balance::BatchSizeManager& manager();
    // Elastic PS: a server or worker change, made before the next iteration (thread-safe).
    // A change that cannot be made becomes a "resize-refused" event; the run goes on.
    void request_resize(ResizeRequest request);
    // Drills and demos: from the next iteration on, the worker's batches take `slowdown`
    // times longer (1 clears it): the virtual clock scales its compute time, real mode
    // idles the worker's thread for the extra time. Each change becomes a
    // "straggler-injected" or "straggler-cleared" event. Throws RefusedRequest
    // ("unknown-worker", "illegal-value") when made.
    void inject_straggler(WorkerId worker, double slowdown, const std::string& actor = "operator");
    double straggler_slowdown(WorkerId worker) const;
    // An operator's set-sync-model: from the next iteration on, the barrier closes at the
    // (n - k)-th arrival for backup(k), at the last one for bsp. Becomes a
    // "sync-model-change" event whose message is "OLD -> NEW" (sync::describe). Throws
    // RefusedRequest: "sync-model-not-switchable" for asp, ssp and elastic-bsp (the
    // asynchronous trainer's), "illegal-value" for a k the job's workers cannot have.
    void set_sync_model(const sync::SyncSpec& spec, const std::string& actor = "operator");
    std::string sync_model() const; // in effect, as sync::describe gives it
    // Holds the job at its next barrier until resume() (or a stop request). Paced mode
    // resumes its clock where it stopped. Each becomes a "job-paused"/"job-resumed" event.
    void pause(const std::string& actor = "operator");
    void resume(const std::string& actor = "operator");
    bool paused() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace fulcrum::train
