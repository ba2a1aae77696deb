#pragma once

#include "common/records.h"
#include "perf/compute_device.h"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace fulcrum::worker_client {

struct RemoteWorkerOptions {
    std::string host = "127.0.0.1";
    unsigned short port = 7480;
    std::string token; // a worker (or operator) token
    bool tls = false;
    std::filesystem::path trusted; // TLS: PEM certificates to trust; empty: the system's
    JobId job = 0;
    std::optional<WorkerId> worker; // a particular remote slot; unset: the first free
    // Instead of a job: wait in fulcrumd's worker pool and serve every job slot the elastic
    // scheduler gives this process, one after another, until `stop` or the connection closes.
    bool pool = false;
    std::string name; // this host's name for the operator log
    std::optional<std::filesystem::path> data; // Fashion-MNIST folder on this host, if not the scenario's path
    perf::ComputeDevice device; // where this host computes: its CPU or one of its CUDA GPUs
    // Drills (a slow node, worker timeouts, stall detection): each result is sent this many
    // seconds after its batch is computed; the heartbeat goes on meanwhile.
    double batch_delay_s = 0;
};

struct RemoteWorkerSummary {
    WorkerId worker = 0; // the last slot served
    int assignments = 0; // job slots served (one, unless from the pool)
    std::int64_t batches = 0;
    std::int64_t samples = 0;
    double compute_s = 0;
    std::string ended; // why it stopped: "the job ended", "stopped", ...
};

// Joins the job as one remote worker and computes its tasks until the job ends or `stop`
// is set: builds the job's data and model from the scenario it is given, then, for each
// task, loads the parameters, computes the gradient of a batch of the asked size, and
// sends it back with the batch's wall time, its CPU share (thread CPU time over wall time)
// and the host's available memory (/proc/meminfo). It logs (backend/log) one line per event
// worth telling: joined, ready, every 100 batches (debug), fulcrumd's errors. With `pool`, it waits in fulcrumd's
// worker pool instead and serves each slot it is given until the scheduler takes it back or the job ends, then waits
// again. Throws std::runtime_error with a message naming what failed (connection refused, wrong token, no such job,
// slot taken, ...).
RemoteWorkerSummary run_remote_worker(const RemoteWorkerOptions& options, const std::atomic<bool>& stop);

} // namespace fulcrum::worker_client
