#pragma once

#include "common/named_values.h"
#include "sched/early_feedback.h"
#include "sched/ps_job.h"
#include "sched/tenant_quota.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace fulcrum::sched {

// How a cluster of parameter-server jobs uses its slots.
enum class ElasticPolicy {
    // Elastic Parameter Server: jobs start with what is free, grow round-robin on idle slots
    // (one server and one worker a round), a step that made a job slower is rolled back, and
    // a newcomer facing a full cluster takes slots from jobs past their early-feedback point.
    // Changes are EPS's in-place mechanisms: the job pauses for the move, nothing restarts.
    Eps,
    // A static FIFO parameter server: each job waits until its servers and workers are free,
    // in arrival order, and keeps them to the end.
    StaticFifo,
    // The same decisions as EPS, carried out by checkpointing, killing and restarting the
    // job with its new allocation (the restart cost for every change).
    KillRestart,
};

std::string_view policy_name(ElasticPolicy policy); // "eps", "static", "kill-restart"
std::optional<ElasticPolicy> parse_elastic_policy(std::string_view name);
std::string elastic_policy_help(); // "eps, static or kill-restart"
std::vector<CatalogueEntry> elastic_catalogue(); // list-capabilities

struct ElasticOptions {
    ElasticPolicy policy = ElasticPolicy::Eps;
    double round_s = 60; // growth rounds
    int observe_iterations = 20; // how long a growth step is watched before it is judged
    EarlyFeedback feedback; // when a job has given early feedback (default: 10 % of its samples)
    double iteration_noise = 0.1; // coefficient of variation of one iteration's time
    std::uint64_t seed = 1; // measurement noise
    // Tenants' quotas (fulcrum-sim --tenants; issue 47, the rules fulcrumd follows): each
    // tenant's jobs wait in a queue of their own, served within quota first; borrowers take
    // idle slots by weight and give them back when the owner's job arrives (elastic jobs shrink
    // past early feedback, rigid ones per `tenants.rigid`). None: one FIFO queue for all.
    TenantQuotas tenants;
    std::function<void(double)> progress; // fraction of jobs finished
};

struct PsJobOutcome {
    PsJobSpec job;
    double start_s = -1, feedback_s = -1, finish_s = -1;
    int peak_workers = 0, peak_servers = 0;
    int grown = 0, rolled_back = 0, released = 0, restarts = 0;
    int reclaimed = 0, requeued = 0; // slots it gave back to a quota's owner; times stopped and queued again
    double paused_s = 0; // time spent in resizes or restarts
    // The job never reached its early-feedback point (e.g. an accuracy its model does not
    // reach): its user heard first when it finished, so feedback_s = finish_s, and it was
    // never a candidate to give up slots.
    bool feedback_at_finish = false;

    double jct() const { return finish_s - job.arrival_s; }
    double feedback_latency() const { return feedback_s - job.arrival_s; }
};

struct PsRejected {
    PsJobSpec job;
    std::string reason;
};

// One kind of change and what it cost the jobs (mean pause per change).
struct ChangeCost {
    std::string change; // add-server, remove-server, add-worker, remove-worker, restart
    int count = 0;
    double total_s = 0;
};

struct ElasticResult {
    std::vector<PsJobOutcome> jobs; // finished, in id order
    std::vector<PsRejected> rejected;
    double makespan = 0;
    double cpu_util = 0; // slot-seconds spent training / (slots x makespan)
    double allocated_util = 0; // slot-seconds held by jobs (training or paused) / (slots x makespan)
    std::vector<ChangeCost> changes;
};

// Event-driven and deterministic for a seed. Every job whose request fits the cluster
// finishes; the others are rejected at submission with the reason.
ElasticResult simulate_elastic(
    const PsClusterModel& cluster, std::vector<PsJobSpec> jobs, const ElasticOptions& options);

// One tenant's share of a run: its jobs' mean JCT and mean slowdown (JCT over the time the
// job would take alone at its requested size on an idle cluster).
struct TenantOutcome {
    std::string tenant;
    int jobs = 0;
    double avg_jct = 0;
    double slowdown = 0;
};
// By tenant name.
std::vector<TenantOutcome> tenant_outcomes(const ElasticResult& result, const PsClusterModel& cluster);

// One JSON object: avg_jct, median_jct, p95_jct, makespan, avg_feedback_latency,
// cpu_util, allocated_util, counts and the mean cost of each change.
std::string elastic_metrics_json(const ElasticResult& result, const ElasticOptions& options);
// jobs.csv (one line per job) into `directory`.
void write_elastic_csv(const ElasticResult& result, const std::string& directory);

} // namespace fulcrum::sched
