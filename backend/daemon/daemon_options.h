#pragma once

#include "archive/server_folders.h"
#include "daemon/resource_book.h"
#include "sched/cluster.h"
#include "sched/early_feedback.h"
#include "sched/elastic_simulator.h"

#include <cstddef>
#include <filesystem>
#include <string>

namespace fulcrum::daemon {

inline constexpr double kDefaultWorkerTimeoutS = 10;

struct DaemonOptions {
    std::filesystem::path data_dir = "fulcrum-data"; // run stores go to DATA_DIR/runs/
    archive::FolderOptions folders; // where clients' data set and model names are looked up
    // The GPUs (worker slots) jobs are placed on, and the scheduling module's placement
    // policy that picks them: rand, ff, ls or lwf-K.
    sched::ClusterSpec cluster; // 16 servers of 4 GPUs with 16 GB
    std::string placement = "lwf-1";
    // The queue's order: backfill (every queued job is tried in submission order, and one that
    // fits goes ahead of one that does not) or fifo (no job starts before an earlier one that
    // waits for GPUs: the Elastic PS paper's baselines, and fulcrum-sim --elastic's queue).
    enum class Queue { Backfill, Fifo } queue = Queue::Backfill;
    // How running jobs' sizes change: static (a job keeps the workers it was placed with) or
    // eps (the Elastic Parameter Server's rules, sched/eps_rules.h, on elastic jobs: start
    // smaller, grow round-robin on idle GPUs with rollback, release for newcomers after early
    // feedback; daemon/elastic_scheduling.h) or kill-restart (the same decisions, each carried
    // out by a checkpoint, a stop and a restart).
    struct Elastic {
        sched::ElasticPolicy policy = sched::ElasticPolicy::StaticFifo;
        double round_s = 60; // wall seconds between growth rounds
        int observe_iterations = 20; // a growth step is judged over this many iterations
        sched::EarlyFeedback feedback; // fraction:0.1
    } elastic;
    // When live jobs' transfers start (daemon/link_schedule.h): none (each job's pushes and
    // pulls stretch by eq. 5 for the live jobs on its links) or a communication scheduler of
    // the scheduling module, srsf-N or ada-srsf, for virtual-mode and paced jobs.
    std::string comm = "none";
    // What running jobs may hold together, estimated from their scenarios: a job over it is
    // refused, one that fits beside the running jobs later waits (daemon/resource_book.h).
    // memory_bytes 0: default_memory_budget().
    ResourceBudget resources;
    // A remote worker that sends nothing, heartbeats included, this long is lost: dropped from
    // its barrier and excluded (a scenario's worker_timeout_s overrides it).
    double worker_timeout_s = kDefaultWorkerTimeoutS;
    // A job's threads (its trainer's, its engine's and its recorder's) and the disk threads
    // run this much below fulcrumd's own priority (nice 0 to 19 added, at most 19; 0: the
    // same), so that an operator's command and the clients' streams (the I/O threads, the
    // core, replays) are not queued behind 20 trainers' batches on a machine with few cores
    // (serve/thread_role.h; docs/benchmarks.md measures it).
    int job_niceness = 5;
    std::size_t client_queue = 1024; // frames a client may fall behind before rows are dropped
    int replays_per_client = 4;
    // Failed upgrades from one source within a minute before it is answered 429 for a
    // minute (access::AuthLimiter); 0: no limit.
    int auth_limit = 20;
    std::string server_name = "fulcrumd";
    // Jobs an earlier fulcrumd was running when it died or was stopped: recover() queues them
    // to go on from their checkpoints (automatic), or lists them as interrupted until an
    // operator's resume-job (manual).
    enum class Resume { Automatic, Manual } resume = Resume::Automatic;
};

} // namespace fulcrum::daemon
