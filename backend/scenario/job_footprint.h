#pragma once

// What a job will hold in fulcrumd's memory and threads, estimated from its scenario alone
// (nothing allocated): fulcrumd's admission checks it against the daemon's budget once, at
// submission, and holds it for the job while it runs.

#include "scenario/scenario.h"

#include <cstdint>
#include <string>

namespace fulcrum::scenario {

struct JobFootprint {
    // Bytes, in double so that a hostile scenario's sizes overflow nothing.
    double parameters = 0; // the model's parameter count
    double model_bytes = 0; // the servers' copy, momentum and the aggregate (3 or 2 copies)
    double worker_bytes = 0; // per worker: replica, gradient, batch activations and bookkeeping
    double replica_bytes = 0; // of which the workers' parameter copies (replica and gradient)
    double job_bytes = 0; // the job's own: recorder, queues, its threads' stacks
    double data_bytes = 0; // its data set; read once per daemon and shared with other jobs
    std::string data_key; // which data set: jobs with the same key share one copy
    int threads = 0; // the threads fulcrumd runs it with
    // What the job adds beyond its data set.
    double own_bytes() const { return model_bytes + worker_bytes + job_bytes; }
    // The field of the largest part, for a refusal: the model ("model.hidden" for an MLP)
    // when parameter copies outweigh the rest, "workers" for their batch buffers, or "data".
    std::string dominant_field() const;
    // "7.3 GiB: 4.3e9 parameters (server copies 48 GiB), 3 workers 12 GiB, data 219 MiB".
    std::string describe() const;
    bool hidden_layers = false; // an MLP with hidden layers: its widths set the parameters
};

// `hardware_threads`: what a job that names no compute threads uses (one per core).
JobFootprint estimate_footprint(const Scenario& scenario, int hardware_threads);

// "1.5 GiB", "219 MiB", "12 KiB".
std::string bytes_text(double bytes);

} // namespace fulcrum::scenario
