#pragma once

#include "common/resize_action.h"

// A scenario: everything that defines a run. Plain data, filled by the parser in
// scenario_parser.cpp; the schema is documented in docs/scenarios.md.

#include "balance/policy_registry.h"
#include "common/server_path.h"
#include "common/stall_spec.h"
#include "model/model_factory.h"
#include "perf/network_model.h"
#include "perf/worker_profile.h"
#include "ps/gradient.h"
#include "sync/sync_spec.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fulcrum::scenario {

// virtual: discrete-event clock, as fast as the math allows; paced: the same mapped onto
// wall time for watching; real: measured wall-clock times of worker threads.
enum class Mode { Virtual, Paced, Real };
const char* to_string(Mode mode);
std::optional<Mode> parse_mode(const std::string& text);

struct DataSpec {
    std::string source = "fashion-mnist"; // or "synthetic"
    std::string path = "/usr/share/datasets/fashion-mnist";
    bool path_given = false; // the scenario names its own path (fulcrumd confines such a name)
    // synthetic only
    std::int64_t train_size = 2000, test_size = 500, dim = 32;
    int classes = 4;
};

using WorkerSpec = perf::WorkerProfile;

// Elastic PS (the "elastic" section): which worker slots start as members, and server or
// worker changes made before given iterations. Actions are the trainer's names.
struct ResizeSpec {
    std::int64_t before_iteration = 0;
    std::string action; // add-server, remove-server, add-worker, remove-worker
    std::optional<int> target; // worker slot or server index; unset: the trainer's default
};

struct ElasticScenarioSpec {
    int initial_workers = 0; // 0 = every worker slot
    // Bounds on the members a resize may leave (an operator's or, later, the EPS policy's):
    // 1 and every slot unless the scenario says.
    int min_workers = 1;
    int max_workers = 0;
    bool partition_data = false;
    std::vector<ResizeSpec> resizes;
    ResizePauses pause_s; // elastic.pause_s: each change's pause on the modelled run clock
    // elastic.batch_per_worker: X follows the members (weak scaling); 0: X stays total_batch
    int batch_per_worker = 0;
    bool present = false; // the section was given
};

// When a job checkpoints into its run store (BSP family): after every `every_iterations`
// barriers and whenever `every_seconds` of wall time passed since the last one (0 turns
// either off; both 0: no checkpoints), and at a clean stop.
struct CheckpointSpec {
    std::int64_t every_iterations = 500;
    double every_seconds = 30;
};

// A change the scenario makes to its own job before an iteration ("changes" section): a new
// batch-size policy, a new sync model or both, requested as an operator's set-policy and
// set-sync-model would be (the demo: uniform BSP, then LB-BSP on the same cluster).
struct ScheduledChange {
    std::int64_t before_iteration = 1; // a barrier's; an update's for asp, ssp and elastic-bsp
    std::optional<balance::PolicySpec> policy;
    std::string policy_json; // the policy section as written: a checkpoint keeps it
    std::optional<sync::SyncSpec> sync;
};

// A job whose ranks another framework runs ("external" section): fulcrumd decides each
// rank's batch size and records the ranks' reports; the model, the data and the gradient
// all-reduce stay in the framework's processes (clients/python/fulcrum_torch).
struct ExternalSpec {
    std::string framework = "pytorch"; // for the operator: which framework runs the ranks
    // A rank that has not reported an iteration this long after its plan was sent is lost,
    // and so is the job (its all-reduce cannot finish without it).
    double rank_timeout_s = 120;
    // An evaluation a rank announced (fulcrum_torch's job.evaluating()) holds rank_timeout_s
    // off it for at most this long: a rank stuck in its evaluation keeps heartbeating.
    double evaluation_timeout_s = 3600;
    // Iterations planned beyond the next one (0 to 16): each plan also carries the batch sizes
    // of that many following iterations, so a DataLoader that prefetches knows them. The
    // manager then sizes iteration k + 1 + plan_ahead from the reports of k: its feedback, and
    // an operator's pin or exclusion, take plan_ahead iterations longer to apply.
    int plan_ahead = 0;
    // The samples of one pass over the ranks' training set, for the run's epochs (0: not
    // given; its summary then names no epochs).
    std::int64_t samples_per_epoch = 0;
    // How many times the job may lose a rank and go on (0 to 100): each time, the ranks' group
    // restarts (torchrun --max_restarts), joins the same job again and goes on from the
    // ranks' checkpoint, each attempt a run of the job's store. 0: a lost rank ends the job.
    int max_restarts = 0;
};

// fulcrum-worker sends a heartbeat every second: a worker timeout under three would leave
// too little room for a loaded machine's scheduling and lose workers that are fine.
inline constexpr double kMinWorkerTimeoutS = 3;

struct Scenario {
    std::string name;
    std::string description;
    std::string source; // file it came from, for messages
    std::string json; // the text as given, recorded with the run
    std::uint64_t seed = 1;
    Mode mode = Mode::Virtual;
    double pace = 10.0; // virtual seconds per wall second in paced mode
    // fulcrumd: a remote worker that sends nothing, heartbeats included, this long is lost.
    // Unset: fulcrumd's --worker-timeout.
    std::optional<double> worker_timeout_s;
    // Stall detection and what the job does about a stall ("on_stall"; barrier sync models).
    StallSpec stall;

    DataSpec data;
    model::ModelSpec model;

    std::int32_t total_batch = 128;
    // The least batch a worker that trains gets (training.min_batch): BatchNorm refuses a
    // batch of one sample in training, and a framework's rank may need more.
    std::int32_t min_batch = 1;
    std::optional<double> comm_model_mb; // model size charged by the network model (virtual modes)
    ps::OptimizerSpec optimizer;
    ps::Aggregation aggregation = ps::Aggregation::Weighted;
    std::optional<double> epochs;
    std::optional<std::int64_t> iterations;
    std::int64_t eval_interval = 100;
    std::optional<double> target_accuracy; // stop once the test accuracy reaches it
    int threads = 0; // compute threads in virtual/paced mode; 0 = one per core
    sync::SyncSpec sync;
    int server_shards = 1;
    perf::ServerLinks server_links; // servers.bandwidth_gbps, servers.aggregate_s (modelled modes)
    balance::PolicySpec policy;
    std::vector<WorkerSpec> workers;
    ElasticScenarioSpec elastic;
    // fulcrumd places the job's workers on its cluster's GPUs ("placement" section): the GPU
    // memory each worker takes there; unset, a whole GPU. Other runners ignore it.
    std::optional<double> placement_memory_gb;
    // GPUs the job's parameter servers hold besides its workers' ("placement.server_gpus"), as
    // the simulator's parameter-server jobs hold a slot per server: placed with the workers
    // and kept to the job's end. 0: the servers run in fulcrumd and hold none.
    int placement_server_gpus = 0;
    CheckpointSpec checkpoint;
    std::vector<ScheduledChange> changes; // in order of before_iteration
    std::optional<ExternalSpec> external; // set: the workers are an external framework's ranks
};

// The most worker slots (or external ranks) one job has: checked before a "count" is
// expanded, so that a small scenario cannot ask for a million workers' state.
inline constexpr std::int64_t kMaxWorkers = 4096;

// Parses and validates a scenario. Throws InputError naming `source`, the field path
// (e.g. "workers[2].speed") and what was expected. Unknown fields are errors. Every path
// field (path_fields.h) becomes what `paths` makes of it: fulcrumd's folders confine a
// client's names; a local tool's file takes any path.
Scenario parse_scenario(
    const std::string& json_text, const std::string& source, const PathPolicy& paths = paths_as_given());
Scenario load_scenario(const std::string& path);

// A running job's new batch-size policy or sync model (fulcrumd's set-policy and
// set-sync-model): the scenario's "policy" or "sync" section on its own, as JSON text,
// checked against the job's workers and total batch as in a scenario. Throws InputError
// naming `source` and the field ("policy.batch_sizes", "sync.backups").
balance::PolicySpec parse_policy_section(const std::string& json_text, const Scenario& job, const std::string& source,
    const PathPolicy& paths = paths_as_given());
sync::SyncSpec parse_sync_section(const std::string& json_text, const Scenario& job, const std::string& source);

// The number of iterations a scenario runs, given the training set size.
std::int64_t planned_iterations(const Scenario& scenario, std::int64_t train_size);

} // namespace fulcrum::scenario
