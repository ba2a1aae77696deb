#pragma once

// The Fulcrum protocol's messages as plain values. The daemon, the remote worker and the
// console exchange them as JSON text frames over a WebSocket; docs/protocol.md shows each
// one on the wire. No JSON, Beast or Qt here: every side includes this header.

#include "common/records.h"
#include "common/resize_action.h"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace fulcrum::protocol {

// Version 2 (adds external jobs: report-iteration and the reply's plan). A client says its
// version in `hello`; the server takes 1 and 2 (a version-1 client is refused
// report-iteration with `version-too-old`) and refuses any other with `version-mismatch`.
inline constexpr int kProtocolVersion = 3;
// From this version on a fulcrum-worker sends heartbeats, and fulcrumd loses one that is
// silent for its worker timeout.
inline constexpr int kHeartbeatVersion = 3;
inline constexpr int kOldestProtocolVersion = 1;
// The largest text frame either side accepts; larger ones are refused (`frame-too-large`).
inline constexpr std::size_t kMaxFrameBytes = 1u << 20;

// Within its tenant, viewer: streams; operator: streams and commands; worker: joins jobs
// as a remote worker (fulcrum-worker) and nothing else. admin: streams and commands on every
// tenant's jobs, and the cluster's policies.
enum class Role { Viewer, Operator, Worker, Admin };
// The tenant of a token-file line that names none, of a job submitted on fulcrumd's command
// line, and of a run store written before tenants existed (issue 47).
inline constexpr std::string_view kDefaultTenant = "default";

// What a subscription can carry. A subscription starts with a snapshot of each stream's
// current state, then `snapshot-end`, then deltas as they happen.
// `cluster` is the whole cluster's: a subscription's job filter does not apply to it.
enum class Stream { Iterations, Evaluations, Events, Jobs, Workers, Cluster };

// --- client to server ---------------------------------------------------------------

struct Hello {
    int version = kProtocolVersion;
    std::string client; // free text for the operator log: "fulcrum 0.1 on host"
};

struct Subscribe {
    std::string id; // request id, echoed by the reply
    std::vector<Stream> streams; // empty: every stream
    std::optional<JobId> job; // only this job
    std::vector<WorkerId> workers; // only these workers (iteration rows); empty: all
};

struct Unsubscribe {
    std::string id;
};

struct ListJobs {
    std::string id;
};

// A job from a scenario: the scenario file's JSON text (docs/scenarios.md).
struct SubmitJob {
    std::string id;
    std::string scenario_json;
};

// Jobs that arrive on fulcrumd's virtual clock (a workload trace run through the live
// scheduler): each virtual-mode job is queued when the daemon's clock reaches its arrival_s,
// seconds after the workload was submitted. The reply's `jobs` are their statuses.
struct SubmitWorkload {
    std::string id;
    struct Arrival {
        std::string scenario_json;
        double arrival_s = 0;
        bool operator==(const Arrival&) const = default;
    };
    std::vector<Arrival> jobs;
};

// freeze-job / unfreeze-job: the elastic scheduler leaves an elastic job's workers as they
// are (no growth, no release) until unfrozen; an operator's resize-job still applies.
enum class JobAction { Cancel, Pause, Resume, Freeze, Unfreeze };
struct JobCommand {
    std::string id;
    JobAction action = JobAction::Cancel;
    JobId job = 0;
};

// A running job's batch-size policy or sync model, from its next barrier on. `spec_json` is
// the scenario's "policy" or "sync" section (docs/scenarios.md) as JSON text; the daemon
// checks it against the job. On the wire: set-policy with "policy", set-sync-model with "sync".
enum class JobSetting { Policy, SyncModel };
struct ChangeJob {
    std::string id;
    JobSetting setting = JobSetting::Policy;
    JobId job = 0;
    std::string spec_json;
};

// An Elastic PS resize of a running job (its scenario has an "elastic" section), applied
// between iterations: add or remove a worker (`worker`: the slot; default the lowest free /
// the highest member) or a server. Refused at once where it would leave the job outside
// elastic.min_workers..max_workers; what the trainer did is the job's event.
struct ResizeJob {
    std::string id;
    JobId job = 0;
    ResizeAction action = ResizeAction::AddWorker;
    std::optional<int> worker;
};

// An operator's change of the cluster's scheduling policies from now on: the placement
// policy for the jobs placed next (rand, ff, ls, lwf-K), the elastic policy for running
// and future jobs (static, eps, kill-restart) and the communication scheduler of the live
// jobs' transfers from their next iteration (none, srsf-N, ada-srsf). An unset one stays as
// it is.
struct SetClusterPolicy {
    std::string id;
    std::optional<std::string> placement;
    std::optional<std::string> elastic;
    std::optional<std::string> comm;
};

// Operator overrides on one worker, applied at the job's next barrier.
enum class WorkerAction { Pin, Unpin, Exclude, Include, InjectStraggler, ClearStraggler };
struct WorkerCommand {
    std::string id;
    WorkerAction action = WorkerAction::Pin;
    JobId job = 0;
    WorkerId worker = 0;
    std::int32_t batch_size = 0; // pin
    std::optional<double> for_s; // exclude: re-include after this long on the run's clock
    double slowdown = 1; // inject-straggler: the worker's batches take this many times longer
};

// The recorded runs in the daemon's data folder (any role).
struct ListRuns {
    std::string id;
};

// What this fulcrumd offers (any role): its batch-size policies, sync models, speed
// predictors and placement policies, each with a line for a person. The console's dialogs
// list these, so they never offer what the server lacks.
struct ListCapabilities {
    std::string id;
};

// Replays one recorded run to this client only, as the same message types as a live job
// (each carrying the replay's id), paced by the run's clock times `speed`.
inline constexpr double kMaxReplaySpeed = 10000;
struct OpenReplay {
    std::string id;
    std::string database; // a file name from list-runs
    RunId run = 0;
    double speed = 1; // run seconds per wall second; 0: as fast as the client reads
    std::optional<std::int64_t> from_iteration; // start just after this iteration (of the run's first job)
    bool paused = false; // open at the start position without playing
};

enum class ReplayAction { Play, Pause, Seek, SetSpeed, Close };
struct ReplayCommand {
    std::string id;
    ReplayAction action = ReplayAction::Play;
    std::int64_t replay = 0;
    // seek: to the end of this iteration (of `job`, or the run's first job), or to the last
    // iteration that ended at or before `time_s`; exactly one of the two.
    std::optional<std::int64_t> iteration;
    std::optional<double> time_s;
    std::optional<JobId> job;
    double speed = 1; // set-replay-speed
};

// A remote worker process (fulcrum-worker) takes a remote slot of a job. The reply's
// `assignment` says which slot and carries the scenario, from which the worker builds the
// same data and model as the job. Then the job sends binary task frames and the worker
// answers each with a binary result frame (protocol/worker_frames.h).
struct JoinJob {
    std::string id;
    JobId job = 0;
    std::optional<WorkerId> worker; // a particular remote slot; unset: the first free one
    std::string host; // where the worker runs, for the operator log
};

// A fulcrum-worker started without a job (--pool) waits in fulcrumd's worker pool until
// the elastic scheduler hands it to a real-mode job (worker-assigned) and takes it back
// (worker-released); it then waits again. The reply says it is in the pool.
struct JoinPool {
    std::string id;
    std::string host; // where the worker runs, for the operator log and the reasons
};

// A rank of an external job (a scenario with an "external" section, submitted by submit-job
// and joined by join-job with `worker` = the rank) reports an iteration and asks for its
// next one. The reply comes at fulcrumd's barrier, when every rank has reported, and carries
// the plan. The first report of a rank is `iteration` -1 with no measurements (ready).
struct ReportIteration {
    std::string id;
    JobId job = 0;
    WorkerId rank = 0;
    std::int64_t iteration = -1;
    std::int32_t batch_size = 0;
    double compute_s = 0; // forward and backward
    double sync_s = 0; // the gradient all-reduce, waiting for slower ranks included
    double cpu_share = 1;
    double memory_share = 1;
    std::optional<double> gpu_memory_gb;
    double loss = 0;
    std::optional<double> test_accuracy; // an evaluation after this iteration
    std::optional<double> test_loss;
    // The ready report (iteration -1) of a group that restarted from its own checkpoint: the
    // next iteration it trains. fulcrumd takes rank 0's.
    std::optional<std::int64_t> resume_from;
};

// A fulcrum-worker's or fulcrum_torch rank's sign of life (protocol version 3): every second,
// from its connection's own thread, whatever it computes meanwhile. No reply. fulcrumd loses a
// remote worker that sent nothing, heartbeats included, for its worker timeout
// (--worker-timeout). `evaluating`: the rank announces an evaluation (fulcrum_torch's
// `job.evaluating()`), so its report comes late by design and external.rank_timeout_s does
// not run against it until the heartbeat that ends it; silence still does. Sent only when true;
// a server that does not know the field ignores it.
struct Heartbeat {
    bool evaluating = false;
    // An external job's rank is in its framework's collective (the all-reduce): it waits for
    // its peers, so it is not the one stalled (issue 42).
    bool collective = false;
};

using ClientMessage = std::variant<Hello, Subscribe, Unsubscribe, ListJobs, SubmitJob, SubmitWorkload, JobCommand,
    ChangeJob, WorkerCommand, ListRuns, OpenReplay, ReplayCommand, JoinJob, ListCapabilities, ReportIteration,
    ResizeJob, SetClusterPolicy, JoinPool, Heartbeat>;

// --- server to client ---------------------------------------------------------------

struct Welcome {
    int version = kProtocolVersion;
    std::string server; // "fulcrumd 0.1.0"
    Role role = Role::Viewer;
    std::string tenant = std::string(kDefaultTenant); // the client's jobs belong to it
    bool all_tenants = false; // its token reaches every tenant's jobs (an admin's)
};

// A problem with a request or a frame. `field` names the offending field ("worker",
// "scenario.training.total_batch") when there is one.
struct ErrorInfo {
    std::string code; // stable: malformed-json, unknown-type, missing-field, wrong-type, ...
    std::string message;
    std::string field;

    bool operator==(const ErrorInfo&) const = default;
};

// Interrupted: fulcrumd stopped (a crash, a restart) while the job ran; it goes on from its
// last checkpoint when fulcrumd resumes it (at start, or on an operator's resume-job).
// Lost: an external job's rank went away or stopped reporting; its rows are kept.
enum class JobState { Queued, Running, Paused, Finished, Stopped, Failed, Interrupted, Lost };

struct JobStatus {
    JobId job = 0;
    std::string name;
    std::string tenant = std::string(kDefaultTenant); // its submitter's
    JobState state = JobState::Queued;
    std::string model, sync_model, policy, mode;
    int workers = 0;
    std::int64_t iteration = 0; // iterations completed
    std::int64_t iterations = 0; // planned
    double time_s = 0; // run clock
    double elapsed_s = 0; // wall seconds since it started
    std::optional<double> accuracy;
    std::string database; // the run store it is recorded in
    RunId run = 0;
    std::string message; // why it failed, or where it waits
    // The cluster GPU each worker was placed on (-1: a remote worker, which runs where it
    // was started); empty until the job is placed.
    std::vector<std::int32_t> placement;
    // An elastic job's bounds on its members (resize-job keeps within them); unset for a job
    // of fixed workers.
    struct ElasticBounds {
        int min_workers = 1;
        int max_workers = 1;
        bool frozen = false; // freeze-job: the elastic scheduler leaves it as it is
        bool operator==(const ElasticBounds&) const = default;
    };
    std::optional<ElasticBounds> elastic;
    // A job whose transfers fulcrumd's communication scheduler decides (--comm): how many
    // it started, how many it held for their links first, and the time they waited (run
    // clock). Unset for a job no scheduler has decided for.
    struct LinkUse {
        std::int64_t transfers = 0;
        std::int64_t held = 0;
        double wait_s = 0;
        bool operator==(const LinkUse&) const = default;
    };
    std::optional<LinkUse> link;
    // A virtual-mode job's moments on fulcrumd's one virtual clock (the daemon's seconds):
    // when it arrived (was submitted, or came due in a workload), started and ended. Its job
    // completion time is finish_s - arrival_s. Unset for paced, real and remote jobs.
    struct DaemonClock {
        double arrival_s = 0;
        std::optional<double> start_s, finish_s;
        bool operator==(const DaemonClock&) const = default;
    };
    std::optional<DaemonClock> daemon_clock;

    bool operator==(const JobStatus&) const = default;
};

// One GPU of fulcrumd's cluster (one worker slot) and the live jobs placed on it.
struct GpuUsage {
    std::int32_t gpu = 0;
    std::int32_t server = 0;
    double free_memory_gb = 0;
    double workload_s = 0; // the estimated compute its jobs still have to run: what LWF balances
    std::vector<JobId> jobs;
    std::vector<std::string> tenants = {}; // each job's tenant, in the order of `jobs`

    bool operator==(const GpuUsage&) const = default;
};

// A tenant's share of fulcrumd's cluster (the cluster file's tenants section, issue 47):
// its quota, and what its jobs hold and wait for now. Every token sees every tenant's row, as
// Slurm's sshare shows every account's share: the quotas are the cluster's policy.
struct TenantUsage {
    std::string tenant = {};
    std::int32_t quota_gpus = 0;
    bool borrow = false;
    double weight = 1;
    bool named = true; // false: the section does not name it (no quota; it borrows at weight 1)
    std::int32_t held_gpus = 0; // distinct GPUs its jobs hold (one two tenants share counts for each)
    std::int32_t borrowed_gpus = 0; // held beyond its quota: reclaimed when an owner needs them
    std::int32_t running = 0, queued = 0; // its jobs

    bool operator==(const TenantUsage&) const = default;
};

// A fulcrum-worker --pool process in fulcrumd's worker pool: idle, or computing a job's slot.
struct PooledWorker {
    std::string host; // empty to a client whose token does not reach its tenant
    JobId job = -1; // -1: idle
    WorkerId worker = -1;
    std::string tenant = std::string(kDefaultTenant); // of the token it joined with: it serves that tenant's jobs

    bool operator==(const PooledWorker&) const = default;
};

// The cluster jobs are placed on by the scheduling module, and the jobs waiting for room.
struct ClusterState {
    std::string placement; // the placement policy: rand, ff, ls or lwf-K
    std::string elastic = "static"; // how running jobs' sizes change: static, eps or kill-restart
    std::string comm = "none"; // when live jobs' transfers start: none, srsf-N or ada-srsf
    std::int32_t servers = 0;
    std::int32_t gpus_per_server = 0;
    double gpu_memory_gb = 0;
    std::vector<GpuUsage> gpus;
    std::vector<JobId> queue; // waiting to be placed, in the order they were submitted
    std::vector<PooledWorker> pool; // the worker pool, idle ones in the order they are handed out
    // Tenants' quotas and use, by tenant name; empty when the cluster file names no tenants.
    std::vector<TenantUsage> tenants = {};
    std::string rigid_borrowers = {}; // "wait" or "requeue" with tenants; empty without

    bool operator==(const ClusterState&) const = default;
};

struct WorkerState {
    WorkerId worker = 0;
    std::string name;
    std::int32_t batch_size = 0; // in the latest iteration (0: did not run)
    std::optional<std::int32_t> pinned;
    bool excluded = false;
    std::optional<double> excluded_until;
    bool member = true; // Elastic PS: a current worker of the job
    double slowdown = 1; // an injected straggler's factor (1: none)
    std::string device = "cpu"; // where it computes: "cpu" or "cuda:N"
    std::optional<int> sms = std::nullopt; // the share of the GPU's SMs its scenario asked for
    // Stalled (a worker-stalled event, until its batch ends): when that batch started on the
    // job's run clock, and the time it was predicted to take.
    std::optional<double> stalled_since = std::nullopt;
    double predicted_s = 0;

    bool operator==(const WorkerState&) const = default;
};

// One recorded run, as list-runs lists it.
struct RunListing {
    std::string database; // file name in the daemon's runs folder: what open-replay takes
    RunId run = 0;
    std::string name, mode, status, started_at, finished_at;
    int jobs = 0;
    std::int64_t iterations = 0; // iterations recorded, all jobs together
    std::int64_t rows = 0; // per-worker iteration rows
    std::string tenant = std::string(kDefaultTenant); // its job's (a store of fulcrum-run: the default)

    bool operator==(const RunListing&) const = default;
};

struct WorkerAssignment {
    JobId job = 0;
    WorkerId worker = 0;
    std::string scenario_json;
    std::int64_t parameters = 0; // the model's size: floats per task and result frame

    bool operator==(const WorkerAssignment&) const = default;
};

// One thing a server offers: its name as scenarios and commands spell it, and what it is.
struct Capability {
    std::string name;
    std::string description;
    std::string family; // sync models: "barrier" or "free-running" (a switch stays within one)
    std::vector<std::string> required; // section fields a client must give besides the name
    std::vector<std::string> fields = {}; // section fields a client may give ("backups")

    bool operator==(const Capability&) const = default;
};

// Every list a client offers comes from here (a server from before a list was added sends
// none of it: the list is empty).
struct Capabilities {
    std::vector<Capability> policies;
    std::vector<Capability> sync_models;
    std::vector<Capability> predictors;
    std::vector<Capability> placements;
    std::vector<Capability> comm_policies; // set-cluster-policy comm
    std::vector<Capability> elastic_policies; // set-cluster-policy elastic
    std::vector<Capability> window_algorithms; // sync.algorithm of elastic-bsp
    std::vector<Capability> models; // model.type

    bool operator==(const Capabilities&) const = default;
};

// An external job's rank: what to train next (state "train": iteration `iteration` with
// every rank's batch size), or why it ends ("finished", "stopped", "lost").
struct RankPlan {
    std::string state = "train";
    std::int64_t iteration = 0;
    std::vector<std::int32_t> batch_sizes;
    std::vector<double> slowdowns; // injected stragglers: each rank sleeps (f - 1) x its compute
    std::string message;
    // Every rank's batch sizes of the iterations after `iteration`, already planned (the
    // job's external.plan_ahead; empty when none).
    std::vector<std::vector<std::int32_t>> ahead;

    bool operator==(const RankPlan&) const = default;
};

struct Reply {
    std::string id;
    std::optional<ErrorInfo> error; // unset: the request succeeded
    std::optional<JobId> job; // submit: the new job's id
    std::vector<JobStatus> jobs; // list-jobs
    std::vector<RunListing> runs; // list-runs
    std::optional<std::int64_t> replay; // open-replay: the replay's id
    std::optional<WorkerAssignment> assignment; // join-job
    std::optional<Capabilities> capabilities; // list-capabilities
    std::optional<RankPlan> plan; // report-iteration
};

// An error that belongs to no request (a frame that could not be read far enough to find
// its id). The connection stays open.
struct ProtocolError {
    ErrorInfo error;
};

// Stream messages carry `replay`: 0 for a live job, a replay's id for a recorded one; the
// job ids are then the run's own.
struct IterationRows {
    JobId job = 0;
    std::int64_t iteration = 0;
    std::vector<IterationRecord> rows;
    std::int64_t replay = 0;
};

struct Evaluation {
    EvaluationRecord evaluation;
    std::int64_t replay = 0;
};

struct Event {
    EventRecord event;
    std::int64_t replay = 0;
};

struct JobUpdate {
    JobStatus status;
    std::int64_t replay = 0;
};

struct WorkerUpdate {
    JobId job = 0;
    std::vector<WorkerState> workers;
    std::int64_t replay = 0;
};

// The cluster stream: the whole cluster after every placement and release. A replay sends
// the cluster its run's job ran on as recorded, with the moment on the run's clock.
struct ClusterUpdate {
    ClusterState cluster;
    std::int64_t replay = 0;
    std::optional<double> time_s = std::nullopt; // replays only: from when on the run's clock
};

struct SnapshotEnd {
    std::string id; // the subscription
};

// Sent to a client whose send queue overflowed, before anything else it gets: how many
// messages it did not receive (iteration rows dropped; status updates coalesced).
struct Missed {
    std::int64_t dropped = 0;
    std::int64_t coalesced = 0;
};

// Where a replay stands: sent when it opens, plays, pauses, seeks, changes speed and
// finishes. After a seek (`seeked`) comes a snapshot of the run as of that point (job
// status, worker states, the iteration's rows), then `snapshot-end`, then the stream on.
enum class ReplayPhase { Playing, Paused, Finished, Closed };
struct ReplayState {
    std::int64_t replay = 0;
    std::string database;
    RunId run = 0;
    ReplayPhase state = ReplayPhase::Paused;
    double speed = 1;
    std::int64_t position = 0; // iterations delivered, all jobs together (0 .. length)
    std::int64_t length = 0; // iterations recorded
    JobId job = 0; // the last delivered iteration's job and number (-1: none yet)
    std::int64_t iteration = -1;
    double time_s = 0; // its barrier time on the run's clock
    double end_time_s = 0; // the run's last barrier
    bool seeked = false;

    bool operator==(const ReplayState&) const = default;
};

// To a pooled worker (join-pool): the elastic scheduler gave it a job's worker slot. It
// builds the job's data and model from the scenario, as after join-job, and the tasks follow.
struct WorkerAssigned {
    WorkerAssignment assignment;
    std::string reason; // the scheduler's: which policy, and why now

    bool operator==(const WorkerAssigned&) const = default;
};

// To a pooled worker: the job no longer needs its slot (a release, a rollback, an operator's
// resize, or the job ended). No task of that job follows; the worker is idle in the pool.
struct WorkerReleased {
    JobId job = 0;
    WorkerId worker = 0;
    std::string reason;

    bool operator==(const WorkerReleased&) const = default;
};

using ServerMessage = std::variant<Welcome, Reply, ProtocolError, IterationRows, Evaluation, Event, JobUpdate,
    WorkerUpdate, SnapshotEnd, Missed, ReplayState, ClusterUpdate, WorkerAssigned, WorkerReleased>;

std::string_view to_string(Role role);
std::optional<Role> role_named(std::string_view name);
std::string_view to_string(Stream stream);
std::string_view to_string(JobState state);
std::string_view to_string(JobAction action); // its wire name: "cancel-job", "freeze-job"…
std::optional<JobAction> parse_job_action(std::string_view wire_name);
std::string_view to_string(JobSetting setting);
std::string_view to_string(WorkerAction action);
std::string_view to_string(ReplayAction action);
std::string_view to_string(ReplayPhase phase);

} // namespace fulcrum::protocol
