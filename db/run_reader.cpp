#include "db/run_reader.h"

#include "common/error.h"
#include "db/schema.h"

#include <cmath>

namespace fulcrum::db {

using detail::Connection;
using detail::Statement;

struct RunReader::Impl {
    explicit Impl(const std::filesystem::path& path)
        : connection(path.string(), false)
        , version(detail::check_readable(connection))
    {
    }
    Connection connection;
    int version;
};

RunReader::RunReader(const std::filesystem::path& path)
{
    if (!std::filesystem::exists(path))
        throw InputError(path.string(), "", "no such run database");
    impl_ = std::make_unique<Impl>(path);
}

RunReader::~RunReader() = default;

namespace {
RunInfo run_from(const Statement& s)
{
    RunInfo run;
    run.id = s.int64(0);
    run.name = s.text(1);
    run.scenario_json = s.text(2);
    run.mode = s.text(3);
    run.seed = static_cast<std::uint64_t>(s.int64(4));
    run.started_at = s.text(5);
    run.finished_at = s.text(6);
    run.status = s.text(7);
    run.summary_json = s.text(8);
    run.tenant = s.text(9);
    return run;
}
// A store older than kTenantVersion has no tenant column: its runs are the default tenant's.
std::string run_columns(int version)
{
    return std::string("SELECT id, name, scenario_json, mode, seed, started_at, finished_at, status, summary_json, ")
        + (version >= detail::kTenantVersion ? "tenant" : "NULL") + " FROM runs";
}
} // namespace

std::vector<RunInfo> RunReader::runs()
{
    Statement s(impl_->connection, (run_columns(impl_->version) + " ORDER BY id").c_str());
    std::vector<RunInfo> result;
    while (s.step())
        result.push_back(run_from(s));
    return result;
}

RunInfo RunReader::run(RunId id)
{
    Statement s(impl_->connection, (run_columns(impl_->version) + " WHERE id = ?1").c_str());
    s.bind(1, id);
    if (!s.step())
        throw InputError(impl_->connection.path(), "run", "has no run " + std::to_string(id));
    return run_from(s);
}

std::vector<JobInfo> RunReader::jobs(RunId run)
{
    Statement s(impl_->connection,
        "SELECT job_id, name, model, parameters, sync_model, policy, total_batch, learning_rate, aggregation, "
        "iterations"
        " FROM jobs WHERE run_id = ?1 ORDER BY job_id");
    s.bind(1, run);
    std::vector<JobInfo> result;
    while (s.step())
        result.push_back({ static_cast<JobId>(s.int64(0)), s.text(1), s.text(2), s.int64(3), s.text(4), s.text(5),
            static_cast<std::int32_t>(s.int64(6)), s.real(7), s.text(8), s.int64(9) });
    return result;
}

std::vector<WorkerInfo> RunReader::workers(RunId run)
{
    Statement s(impl_->connection,
        "SELECT job_id, worker_id, name, kind, profile_json FROM workers WHERE run_id = ?1 ORDER BY job_id, worker_id");
    s.bind(1, run);
    std::vector<WorkerInfo> result;
    while (s.step())
        result.push_back(
            { static_cast<JobId>(s.int64(0)), static_cast<WorkerId>(s.int64(1)), s.text(2), s.text(3), s.text(4) });
    return result;
}

namespace {

// A store older than kGpuColumnsVersion has no GPU columns: they read as NULL.
std::vector<IterationRecord> iteration_rows(
    Connection& connection, int version, const char* table, RunId run, JobId job, std::int64_t first, std::int64_t last)
{
    const char* gpu_columns = version >= detail::kGpuColumnsVersion
        ? ", gpu_memory_gb, gpu_memory_share, gpu_utilization"
        : ", NULL, NULL, NULL";
    Statement s(connection,
        (std::string(
             "SELECT job_id, worker_id, iteration, start_s, end_s, batch_size, compute_s, comm_s, wait_s, cpu_share,"
             " memory_share, speed, predicted_speed, loss, decision")
            + gpu_columns + " FROM " + table
            + " WHERE run_id = ?1 AND job_id = ?2 AND iteration BETWEEN ?3 AND ?4 ORDER BY iteration, worker_id")
            .c_str());
    s.bind(1, run).bind(2, std::int64_t { job }).bind(3, first).bind(4, last);
    std::vector<IterationRecord> result;
    while (s.step()) {
        IterationRecord r;
        r.job = static_cast<JobId>(s.int64(0));
        r.worker = static_cast<WorkerId>(s.int64(1));
        r.iteration = s.int64(2);
        r.start_s = s.real(3);
        r.end_s = s.real(4);
        r.batch_size = static_cast<std::int32_t>(s.int64(5));
        r.compute_s = s.real(6);
        r.comm_s = s.real(7);
        r.wait_s = s.real(8);
        r.cpu_share = s.real(9);
        r.memory_share = s.real(10);
        r.speed = s.real(11);
        r.predicted_speed = s.optional_real(12);
        r.loss = s.real(13);
        r.decision = s.text(14);
        r.gpu.memory_gb = s.optional_real(15);
        r.gpu.memory_share = s.optional_real(16);
        r.gpu.utilization = s.optional_real(17);
        result.push_back(std::move(r));
    }
    return result;
}

} // namespace

std::vector<IterationRecord> RunReader::iterations(RunId run, JobId job, std::int64_t first, std::int64_t last)
{
    return iteration_rows(impl_->connection, impl_->version, "iterations", run, job, first, last);
}

std::vector<IterationRecord> RunReader::superseded_iterations(RunId run, JobId job)
{
    {
        Statement table(impl_->connection,
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'superseded_iterations'");
        if (!table.step() || table.int64(0) == 0)
            return {};
    }
    return iteration_rows(impl_->connection, impl_->version, "superseded_iterations", run, job, 0,
        std::numeric_limits<std::int64_t>::max());
}

std::int64_t RunReader::iteration_row_count(RunId run)
{
    Statement s(impl_->connection, "SELECT count(*) FROM iterations WHERE run_id = ?1");
    s.bind(1, run);
    return s.step() ? s.int64(0) : 0;
}

std::int64_t RunReader::iteration_count(RunId run)
{
    Statement s(impl_->connection,
        "SELECT count(*) FROM (SELECT 1 FROM iterations WHERE run_id = ?1 GROUP BY job_id, iteration)");
    s.bind(1, run);
    return s.step() ? s.int64(0) : 0;
}

RunReader::IterationTotals RunReader::iteration_totals(RunId run)
{
    Statement s(impl_->connection,
        "SELECT count(*), coalesce(sum(n), 0) FROM"
        " (SELECT count(*) AS n FROM iterations WHERE run_id = ?1 GROUP BY job_id, iteration)");
    s.bind(1, run);
    if (!s.step())
        return {};
    return { s.int64(0), s.int64(1) };
}

std::vector<IterationMark> RunReader::iteration_marks(RunId run)
{
    Statement s(impl_->connection,
        "SELECT job_id, iteration, max(end_s) AS barrier, count(*) FROM iterations WHERE run_id = ?1"
        " GROUP BY job_id, iteration ORDER BY barrier, job_id, iteration");
    s.bind(1, run);
    std::vector<IterationMark> result;
    while (s.step())
        result.push_back(
            { static_cast<JobId>(s.int64(0)), s.int64(1), s.real(2), static_cast<std::int32_t>(s.int64(3)) });
    return result;
}

std::vector<EvaluationRecord> RunReader::evaluations(RunId run, JobId job)
{
    Statement s(impl_->connection,
        "SELECT job_id, iteration, time_s, wall_s, epoch, train_loss, test_loss, test_accuracy FROM evaluations"
        " WHERE run_id = ?1 AND job_id = ?2 ORDER BY iteration");
    s.bind(1, run).bind(2, std::int64_t { job });
    std::vector<EvaluationRecord> result;
    while (s.step())
        result.push_back({ static_cast<JobId>(s.int64(0)), s.int64(1), s.real(2), s.real(3), s.real(4), s.real(5),
            s.real(6), s.real(7) });
    return result;
}

std::vector<EventRecord> RunReader::events(RunId run)
{
    Statement s(impl_->connection,
        "SELECT job_id, iteration, time_s, kind, worker_id, message, actor FROM events WHERE run_id = ?1 ORDER BY id");
    s.bind(1, run);
    std::vector<EventRecord> result;
    while (s.step()) {
        EventRecord e;
        e.job = static_cast<JobId>(s.int64(0));
        e.iteration = s.int64(1);
        e.time_s = s.real(2);
        e.kind = s.text(3);
        if (!s.is_null(4))
            e.worker = static_cast<WorkerId>(s.int64(4));
        e.message = s.text(5);
        e.actor = s.text(6);
        result.push_back(std::move(e));
    }
    return result;
}

std::vector<ClusterRecord> RunReader::cluster_states(RunId run)
{
    std::vector<ClusterRecord> result;
    if (impl_->version < detail::kClusterStatesVersion)
        return result;
    Statement s(impl_->connection,
        "SELECT job_id, iteration, time_s, state, cluster_job FROM cluster_states WHERE run_id = ?1 ORDER BY rowid");
    s.bind(1, run);
    while (s.step())
        result.push_back(
            { static_cast<JobId>(s.int64(0)), s.int64(1), s.real(2), s.text(3), static_cast<JobId>(s.int64(4)) });
    return result;
}

std::optional<Checkpoint> RunReader::checkpoint(RunId run, JobId job)
{
    {
        Statement table(
            impl_->connection, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'checkpoints'");
        if (!table.step() || table.int64(0) == 0)
            return std::nullopt;
    }
    Statement s(impl_->connection,
        "SELECT iteration, time_s, written_at, policy_json, state FROM checkpoints WHERE run_id = ?1 AND job_id = ?2");
    s.bind(1, run).bind(2, std::int64_t { job });
    if (!s.step())
        return std::nullopt;
    Checkpoint c;
    c.job = job;
    c.iteration = s.int64(0);
    c.time_s = s.real(1);
    c.written_at = s.text(2);
    c.policy_json = s.text(3);
    c.state = s.blob(4);
    return c;
}

std::optional<Checkpoint> RunReader::job_checkpoint(RunId run, JobId job)
{
    std::optional<Checkpoint> c = checkpoint(run, job);
    if (!c && job != 0)
        c = checkpoint(run, 0);
    return c;
}

std::vector<ScheduledJob> RunReader::scheduled_jobs(RunId run)
{
    Statement s(impl_->connection,
        "SELECT job_id, name, model, gpus, iterations, arrival_s, placed_s, finish_s, placement, status FROM "
        "sched_jobs "
        "WHERE run_id = ?1 ORDER BY job_id");
    s.bind(1, run);
    std::vector<ScheduledJob> result;
    while (s.step()) {
        ScheduledJob j;
        j.id = static_cast<JobId>(s.int64(0));
        j.name = s.text(1);
        j.model = s.text(2);
        j.gpus = static_cast<std::int32_t>(s.int64(3));
        j.iterations = s.int64(4);
        j.arrival_s = s.real(5);
        j.placed_s = s.optional_real(6);
        j.finish_s = s.optional_real(7);
        j.placement = s.text(8);
        j.status = s.text(9);
        result.push_back(std::move(j));
    }
    return result;
}

std::vector<ScheduleSpan> RunReader::schedule_spans(RunId run, double from_s, double to_s)
{
    Statement s(impl_->connection,
        "SELECT kind, gpu, job_id, start_s, end_s, first_iteration, iterations, contention FROM sched_spans "
        "WHERE run_id = ?1 AND start_s <= ?3 AND end_s >= ?2 ORDER BY start_s, rowid");
    s.bind(1, run).bind(2, from_s).bind(3, std::isinf(to_s) ? std::numeric_limits<double>::max() : to_s);
    std::vector<ScheduleSpan> result;
    while (s.step()) {
        ScheduleSpan x;
        x.kind = s.text(0);
        if (!s.is_null(1))
            x.gpu = static_cast<std::int32_t>(s.int64(1));
        x.job = static_cast<JobId>(s.int64(2));
        x.start_s = s.real(3);
        x.end_s = s.real(4);
        x.first_iteration = s.int64(5);
        x.iterations = s.int64(6);
        x.contention = static_cast<std::int32_t>(s.int64(7));
        result.push_back(std::move(x));
    }
    return result;
}

std::string RunReader::integrity_check()
{
    Statement s(impl_->connection, "PRAGMA integrity_check");
    std::string result;
    while (s.step())
        result += (result.empty() ? "" : "\n") + s.text(0);
    return result;
}

} // namespace fulcrum::db
