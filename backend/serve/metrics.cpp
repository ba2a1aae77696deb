#include "serve/metrics.h"

#include <array>
#include <charconv>
#include <cmath>
#include <sstream>

namespace fulcrum::serve {

using namespace protocol;

namespace {

// Writes one metric family at a time: its HELP and TYPE lines, then its samples.
class Exposition {
public:
    void family(const char* name, const char* type, const char* help)
    {
        name_ = name;
        out_ << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
    }
    void sample(const std::string& labels, double value)
    {
        out_ << name_;
        if (!labels.empty())
            out_ << '{' << labels << '}';
        out_ << ' ';
        if (std::isnan(value))
            out_ << "NaN";
        else if (std::isinf(value))
            out_ << (value > 0 ? "+Inf" : "-Inf");
        else {
            std::array<char, 32> digits {};
            const auto end = std::to_chars(digits.data(), digits.data() + digits.size(), value).ptr;
            out_.write(digits.data(), end - digits.data()); // the shortest text that reads back the same
        }
        out_ << '\n';
    }
    std::string text() const { return out_.str(); }

private:
    std::ostringstream out_;
    std::string name_;
};

// Every series of a job names its tenant, so that a query or a recording rule can sum by it.
std::string job_label(const JobStatus& job)
{
    // not "job": Prometheus gives that label the scrape job
    return "job_id=\"" + std::to_string(job.job) + "\",tenant=\"" + escape_label_value(job.tenant) + "\"";
}

std::string worker_labels(const JobStatus& job, WorkerId worker)
{
    return job_label(job) + ",worker=\"" + std::to_string(worker) + "\"";
}

// The worker the latest barrier waited for: the last to finish among those that ran.
std::optional<WorkerId> straggler_of(const IterationRows& rows)
{
    std::optional<WorkerId> last;
    double latest = -1;
    for (const IterationRecord& r : rows.rows)
        if (r.batch_size > 0 && r.end_s > latest) {
            latest = r.end_s;
            last = r.worker;
        }
    return rows.rows.size() > 1 ? last : std::nullopt;
}

} // namespace

std::string escape_label_value(const std::string& value)
{
    std::string out;
    for (const char c : value) {
        if (c == '\\' || c == '"')
            out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out;
}

std::string prometheus_exposition(const DaemonMetrics& m)
{
    Exposition e;
    e.family("fulcrum_daemon_clients", "gauge", "Clients connected to fulcrumd (consoles, fulcrumctl, workers).");
    e.sample("", static_cast<double>(m.clients));
    e.family("fulcrum_daemon_frames_dropped_total", "counter",
        "Stream frames dropped for clients whose send queue was full (iteration rows, evaluations, events).");
    e.sample("", static_cast<double>(m.frames_dropped));
    e.family("fulcrum_daemon_frames_coalesced_total", "counter",
        "Status frames replaced by a newer one before a slow client read them.");
    e.sample("", static_cast<double>(m.frames_coalesced));
    e.family("fulcrum_daemon_auth_failures_total", "counter",
        "Upgrades and /metrics requests refused for a missing or unknown token.");
    e.sample("", static_cast<double>(m.auth_failures));
    e.family("fulcrum_daemon_auth_limits_total", "counter",
        "Times a source address was limited after too many failed upgrades (answered 429 for a minute).");
    e.sample("", static_cast<double>(m.auth_limits));
    e.family("fulcrum_daemon_auth_limited_requests_total", "counter",
        "Requests answered 429 because their source address was limited.");
    e.sample("", static_cast<double>(m.auth_refused));
    e.family("fulcrum_daemon_log_lines_dropped_total", "counter",
        "Log lines dropped because standard error could not take them as fast as they came.");
    e.sample("", static_cast<double>(m.log_lines_dropped));
    e.family("fulcrum_scheduler_queue_length_jobs", "gauge", "Jobs waiting to be placed on the cluster.");
    e.sample("", static_cast<double>(m.queued_jobs));
    e.family("fulcrum_scheduler_placements_total", "counter", "Jobs the placement policy placed since start.");
    e.sample("", static_cast<double>(m.placements));
    e.family("fulcrum_worker_pool_workers", "gauge",
        "fulcrum-worker --pool processes in fulcrumd's worker pool, idle or assigned to a job's worker slot.");
    e.sample("state=\"idle\"", static_cast<double>(m.pooled_idle));
    e.sample("state=\"assigned\"", static_cast<double>(m.pooled_assigned));
    e.family("fulcrum_admission_memory_bytes", "gauge",
        "Memory the running jobs hold as estimated at their admission (held), and fulcrumd's --memory-budget.");
    e.sample("kind=\"held\"", m.memory_held_bytes);
    e.sample("kind=\"budget\"", m.memory_budget_bytes);
    e.family("fulcrum_admission_threads", "gauge", "Threads the running jobs hold, and fulcrumd's --max-threads.");
    e.sample("kind=\"held\"", static_cast<double>(m.threads_held));
    e.sample("kind=\"budget\"", static_cast<double>(m.threads_budget));
    e.family("fulcrum_data_sets_held", "gauge", "Data sets read once and shared read-only by the jobs reading them.");
    e.sample("", static_cast<double>(m.data_sets_held));

    e.family("fulcrum_job_info", "gauge", "A job's name, model, sync model, batch-size policy and mode (value 1).");
    for (const JobMetrics& j : m.jobs) {
        const JobStatus& s = j.status;
        e.sample(job_label(s) + ",name=\"" + escape_label_value(s.name) + "\",model=\"" + escape_label_value(s.model)
                + "\",sync_model=\"" + escape_label_value(s.sync_model) + "\",policy=\"" + escape_label_value(s.policy)
                + "\",mode=\"" + escape_label_value(s.mode) + "\"",
            1);
    }
    e.family("fulcrum_job_state", "gauge", "1 for the job's state, 0 for the others.");
    constexpr std::array kStates = { JobState::Queued, JobState::Running, JobState::Paused, JobState::Finished,
        JobState::Stopped, JobState::Failed, JobState::Interrupted };
    for (const JobMetrics& j : m.jobs)
        for (const JobState state : kStates)
            e.sample(job_label(j.status) + ",state=\"" + std::string(to_string(state)) + "\"",
                j.status.state == state ? 1 : 0);
    e.family("fulcrum_job_iterations_completed", "gauge", "Iterations (barriers or updates) the job completed.");
    for (const JobMetrics& j : m.jobs)
        e.sample(job_label(j.status), static_cast<double>(j.status.iteration));
    e.family("fulcrum_job_iterations_planned", "gauge", "Iterations the job's scenario plans.");
    for (const JobMetrics& j : m.jobs)
        e.sample(job_label(j.status), static_cast<double>(j.status.iterations));
    e.family("fulcrum_job_run_clock_seconds", "gauge", "The job's run clock (virtual time in virtual and paced mode).");
    for (const JobMetrics& j : m.jobs)
        e.sample(job_label(j.status), j.status.time_s);
    e.family("fulcrum_job_test_accuracy_ratio", "gauge", "Test accuracy at the job's latest evaluation (0 to 1).");
    for (const JobMetrics& j : m.jobs)
        if (j.status.accuracy)
            e.sample(job_label(j.status), *j.status.accuracy);
    // Jobs whose transfers a communication scheduler decides (fulcrumd --comm): counters
    // since the job started in this fulcrumd.
    e.family("fulcrum_job_link_transfers_total", "counter",
        "Transfers (an iteration's pushes and pulls) the communication scheduler started for the job.");
    for (const JobMetrics& j : m.jobs)
        if (j.status.link)
            e.sample(job_label(j.status), static_cast<double>(j.status.link->transfers));
    e.family("fulcrum_job_link_held_transfers_total", "counter",
        "Of those, the transfers it held for their links before they started.");
    for (const JobMetrics& j : m.jobs)
        if (j.status.link)
            e.sample(job_label(j.status), static_cast<double>(j.status.link->held));
    e.family("fulcrum_job_link_wait_seconds_total", "counter",
        "Run-clock seconds the job's transfers waited for their links.");
    for (const JobMetrics& j : m.jobs)
        if (j.status.link)
            e.sample(job_label(j.status), j.status.link->wait_s);

    // Per worker: the latest iteration's row.
    const auto per_row = [&](const char* name, const char* help, auto value) {
        e.family(name, "gauge", help);
        for (const JobMetrics& j : m.jobs)
            if (j.last_rows)
                for (const IterationRecord& r : j.last_rows->rows)
                    if (const std::optional<double> v = value(r))
                        e.sample(worker_labels(j.status, r.worker), *v);
    };
    const auto iteration_s = [](const IterationRecord& r) { return r.end_s - r.start_s + r.wait_s; };
    const auto share = [&](const IterationRecord& r, double part) -> std::optional<double> {
        const double whole = iteration_s(r);
        return whole > 0 ? std::optional(part / whole) : std::nullopt;
    };
    per_row("fulcrum_worker_batch_size_samples", "The worker's batch size in the job's latest iteration.",
        [](const IterationRecord& r) { return std::optional<double>(r.batch_size); });
    per_row("fulcrum_worker_speed_samples_per_second", "The worker's measured speed in the latest iteration.",
        [](const IterationRecord& r) { return std::optional<double>(r.speed); });
    per_row("fulcrum_worker_predicted_speed_samples_per_second",
        "The batch-size policy's prediction of the worker's speed (policies that predict).",
        [](const IterationRecord& r) { return r.predicted_speed; });
    per_row("fulcrum_worker_compute_share_ratio", "Share of the latest iteration the worker spent computing.",
        [&](const IterationRecord& r) { return share(r, r.compute_s); });
    per_row("fulcrum_worker_communication_share_ratio",
        "Share of the latest iteration the worker spent pulling and pushing.",
        [&](const IterationRecord& r) { return share(r, r.comm_s); });
    per_row("fulcrum_worker_wait_share_ratio", "Share of the latest iteration the worker waited at the barrier.",
        [&](const IterationRecord& r) { return share(r, r.wait_s); });
    e.family("fulcrum_worker_straggler", "gauge",
        "1 for the worker the job's latest barrier waited for (the last to finish), else 0.");
    for (const JobMetrics& j : m.jobs)
        if (j.last_rows) {
            const auto straggler = straggler_of(*j.last_rows);
            for (const IterationRecord& r : j.last_rows->rows)
                e.sample(worker_labels(j.status, r.worker), straggler == r.worker ? 1 : 0);
        }

    // Per worker: the operator's overrides.
    const auto per_state = [&](const char* name, const char* help, auto value) {
        e.family(name, "gauge", help);
        for (const JobMetrics& j : m.jobs)
            for (const WorkerState& w : j.workers)
                e.sample(worker_labels(j.status, w.worker), value(w));
    };
    per_state("fulcrum_worker_excluded", "1 while an operator has the worker excluded from its barrier.",
        [](const WorkerState& w) { return w.excluded ? 1.0 : 0.0; });
    per_state("fulcrum_worker_stalled",
        "1 while the worker's batch has run past its stall limit (on_stall.factor x its predicted time, at least "
        "on_stall.min_s) and not ended, else 0.",
        [](const WorkerState& w) { return w.stalled_since ? 1.0 : 0.0; });
    per_state("fulcrum_worker_pinned_batch_size_samples",
        "The batch size an operator pinned the worker to (0: not pinned).",
        [](const WorkerState& w) { return w.pinned ? static_cast<double>(*w.pinned) : 0.0; });
    per_state("fulcrum_worker_injected_slowdown_ratio", "An injected straggler's slowdown factor (1: none).",
        [](const WorkerState& w) { return w.slowdown; });
    per_state("fulcrum_worker_member", "1 while the worker is a member of its job (Elastic PS), else 0.",
        [](const WorkerState& w) { return w.member ? 1.0 : 0.0; });
    return e.text();
}

} // namespace fulcrum::serve
