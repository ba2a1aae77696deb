#pragma once

#include "common/stall_spec.h"
#include "data/data_shares.h"
#include "model/model.h"
#include "perf/network_model.h"
#include "ps/parameter_server.h"
#include "sync/sync_spec.h"
#include "train/comm_gate.h"
#include "train/elastic_resize.h"
#include "train/remote_workers.h"
#include "train/training_observer.h"
#include "train/worker.h"
#include "train/worker_endpoint.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace fulcrum::train {

enum class ClockMode { Virtual, Paced, Real };

class JobControl;

// A request the scenario makes of its own job (its "changes" section): made through the
// job's control mailbox, as an operator's set-policy or set-sync-model would be, at the safe
// point before iteration `before_iteration` (a barrier's; an update's for asp, ssp and
// elastic-bsp). A refusal becomes an event and the job goes on.
struct ScheduledRequest {
    std::int64_t before_iteration = 0;
    std::string what; // "set-policy lbbsp-cpu", for the events
    std::function<void(JobControl&)> make;
};

struct TrainerConfig {
    JobId job = 0;
    std::shared_ptr<const data::Dataset> train;
    std::shared_ptr<const data::Dataset> test;
    std::shared_ptr<const model::Model> prototype;
    // Per-worker data (federated clients hold their own shards); empty: all read `train`.
    std::vector<std::shared_ptr<const data::Dataset>> worker_data;
    std::vector<WorkerSetup> workers;
    std::int32_t total_batch = 128;
    // The model size the network model charges per pull and push; unset: the trained model's.
    // Lets a small trained model stand in for the communication of a large one (the papers'
    // CNNs) in the virtual modes.
    std::optional<double> comm_model_mb;
    ps::OptimizerSpec optimizer;
    ps::Aggregation aggregation = ps::Aggregation::Weighted;
    int server_shards = 1;
    perf::ServerLinks server_links; // barrier models, modelled modes: the servers' side of a barrier
    sync::SyncSpec sync;
    std::int64_t iterations = 100; // BSP family: barriers; ASP, SSP, ElasticBSP: server updates
    std::int64_t eval_interval = 100;
    std::optional<double> target_accuracy; // stop once the test accuracy reaches it
    ClockMode mode = ClockMode::Virtual;
    double pace = 10.0; // paced mode: virtual seconds per wall second
    // Virtual mode: called as the trainer starts and after each barrier (or arrival) at the
    // job's virtual time, before the job goes on; fulcrumd's shared clock holds the job there
    // until no other live job has an earlier event. Unset: the job's clock is its own.
    std::function<void(double, const std::atomic<bool>*)> shared_clock;
    // Virtual mode in fulcrumd, barrier jobs: the communication scheduler says when each
    // iteration's transfer starts and how contended it is. Unset, or answering nothing: it
    // starts at once, stretched by the link contention the job was told (JobControl).
    CommGate comm_gate;
    std::uint64_t seed = 1;
    int threads = 0; // compute threads for the virtual modes; 0 = hardware concurrency
    ElasticSpec elastic; // Elastic PS (BSP family only)
    // Slots computed by remote processes (BSP trainer, real mode); null: all local.
    std::shared_ptr<RemoteWorkers> remote;
    // Checkpoints (BSP family): the trainer hands its whole state to the observer after every
    // `checkpoint_every` barriers and whenever `checkpoint_seconds` of wall time have passed
    // since the last one (0 turns either off), and at a stop request.
    std::int64_t checkpoint_every = 0;
    double checkpoint_seconds = 0;
    std::vector<ScheduledRequest> scheduled; // in order of before_iteration
    StallSpec stall; // barrier engines: when a worker's batch is a stall, and what the job does (issue 42)
};

// What every trainer of one job holds: the server, the workers, the evaluator and the
// run's wall clock. Shared by the BSP and the asynchronous trainers so they differ only in
// when workers compute and when gradients are applied.
struct JobState {
    explicit JobState(TrainerConfig c);

    EvaluationRecord evaluate(std::int64_t iteration, double time_s, double epoch, double train_loss);
    JobEvent event(std::int64_t iteration, double time_s, EventKind kind, std::string message) const;
    double wall_seconds() const;
    // Worker i's pull and push in real mode as fulcrumd's communication scheduler is told of
    // it: its last measured one (`last_measured_s` > 0), else its network profile's estimate.
    double transfer_s(std::size_t i, std::int64_t iteration, double last_measured_s) const;
    // Each worker's x_o (0: none): its GPU profile's, or as measured on its device (that one
    // alone in the real mode).
    std::vector<std::int32_t> batch_limits() const;
    // Fills the end-of-run totals after `steps` barriers or updates and, if the run stopped
    // between evaluations, evaluates what was trained so it is not lost. A stop that left a
    // checkpoint (`resumable`) keeps that evaluation out of the observer: the resumed job
    // records the uninterrupted run's evaluations, and this one is not among them.
    void finish(TrainingResult& result, std::int64_t steps, std::int64_t samples, double now, double train_loss,
        TrainingObserver& observer, bool resumable = false);

    // Elastic PS, between iterations only: changes the server set or the worker set and
    // re-splits the data. Throws ResizeError (the job is unchanged) for an impossible change.
    ResizeOutcome resize(const ResizeRequest& request);
    // The request with its default target filled in; throws ResizeError if it cannot be made.
    ResizeRequest resolved(const ResizeRequest& request) const;
    bool member(std::size_t worker) const { return members[worker]; }
    int member_count() const;

    // A checkpoint of what the job holds: the server's shards with their optimizer state,
    // every worker slot's sampler and performance model, the members and data shares, and
    // the wall time run so far. Loading puts the wall clock back that far.
    void save_state(StateWriter& out) const;
    void load_state(StateReader& in);

    TrainerConfig config;
    ps::ParameterServer server;
    std::unique_ptr<model::Model> evaluator;
    std::vector<std::unique_ptr<Worker>> workers; // every slot; only members compute
    // Gives up an excluded or removed worker's batch under way (the endpoints ask it).
    std::unique_ptr<BatchRelease> release;
    // Per slot, where its batches are computed: config.remote's slots in their processes,
    // the others on a thread of this one.
    std::vector<std::unique_ptr<WorkerEndpoint>> endpoints;
    std::vector<bool> members;
    std::optional<data::DataShares> shares; // when the job is elastic
    std::int64_t model_bytes = 0;
    std::chrono::steady_clock::time_point run_start;
};

} // namespace fulcrum::train
