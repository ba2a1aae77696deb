#pragma once

#include "protocol/messages.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fulcrum::serve {

// What fulcrumd's /metrics shows, from the snapshots the core and each job publish.
struct JobMetrics {
    protocol::JobStatus status;
    std::vector<protocol::WorkerState> workers;
    std::optional<protocol::IterationRows> last_rows; // the latest iteration's rows
};

struct DaemonMetrics {
    std::vector<JobMetrics> jobs;
    std::size_t clients = 0;
    std::int64_t frames_dropped = 0; // since fulcrumd started, all clients together
    std::int64_t frames_coalesced = 0;
    std::size_t queued_jobs = 0;
    std::int64_t placements = 0; // the scheduler's placement decisions since start
    std::size_t pooled_idle = 0, pooled_assigned = 0; // fulcrum-worker --pool processes
    // Admission by resources: the estimates the running jobs hold, and the budget.
    double memory_held_bytes = 0, memory_budget_bytes = 0;
    int threads_held = 0, threads_budget = 0;
    std::size_t data_sets_held = 0; // data sets read and shared, one copy each
    // Authentication (access::AuthLimiter): failed upgrades, limits begun, requests answered 429.
    std::uint64_t auth_failures = 0, auth_limits = 0, auth_refused = 0;
    std::uint64_t log_lines_dropped = 0; // log lines standard error could not take in time
};

// The Prometheus text exposition format (version 0.0.4) of the metrics: per job its state,
// iterations and accuracy; per worker of a job its latest iteration's batch size, speed,
// predicted speed, compute/communication/wait shares, whether it was the straggler (the
// worker the barrier waited for), its exclusion, pin and injected slowdown; per daemon its
// clients, dropped and coalesced frames, queue length, placements and worker pool. Labels are job_id and
// worker ids (not `job`, which Prometheus sets to the scrape job), and a job's name, model,
// sync model, policy and mode on fulcrum_job_info only, so label sets stay bounded by the
// jobs the daemon holds. docs/operations.md lists every metric.
std::string prometheus_exposition(const DaemonMetrics& metrics);

// A label value escaped as the format asks (backslash, double quote, line feed).
std::string escape_label_value(const std::string& value);

} // namespace fulcrum::serve
