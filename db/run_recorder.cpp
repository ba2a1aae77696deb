#include "db/run_recorder.h"

#include "common/error.h"
#include "db/schema.h"

#include <condition_variable>
#include <ctime>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace fulcrum::db {

using detail::Connection;
using detail::Statement;

std::string utc_timestamp()
{
    const std::time_t now = std::time(nullptr);
    std::tm parts {};
    gmtime_r(&now, &parts);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
    return text;
}

namespace {

struct Pending {
    std::vector<IterationRecord> iterations;
    std::vector<EvaluationRecord> evaluations;
    std::vector<EventRecord> events;
    std::vector<ClusterRecord> clusters;
    std::vector<Checkpoint> checkpoints;

    std::size_t rows() const
    {
        return iterations.size() + evaluations.size() + events.size() + clusters.size() + checkpoints.size();
    }
    void clear()
    {
        iterations.clear();
        evaluations.clear();
        events.clear();
        clusters.clear();
        checkpoints.clear();
    }
};

} // namespace

struct RunRecorder::Impl {
    Impl(const std::filesystem::path& p, Options o)
        : path(p)
        , options(o)
        , connection(p.string(), true)
    {
        // WAL: readers (replay, the console) never block the writer; a crash loses at most
        // the transaction in flight. synchronous=NORMAL is durable against process death.
        connection.exec("PRAGMA journal_mode = WAL");
        connection.exec("PRAGMA synchronous = NORMAL");
        detail::prepare_for_writing(connection);
        insert_iteration = std::make_unique<Statement>(connection,
            "INSERT INTO iterations VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, "
            "?17, ?18, ?19)");
        insert_evaluation = std::make_unique<Statement>(
            connection, "INSERT INTO evaluations VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
        insert_event = std::make_unique<Statement>(connection,
            "INSERT INTO events (run_id, job_id, iteration, time_s, kind, worker_id, message, actor)"
            " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
        insert_cluster = std::make_unique<Statement>(connection,
            "INSERT INTO cluster_states (run_id, job_id, iteration, time_s, state, cluster_job)"
            " VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
        insert_checkpoint = std::make_unique<Statement>(
            connection, "INSERT OR REPLACE INTO checkpoints VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
        writer = std::thread([this] { write_loop(); });
    }

    ~Impl()
    {
        {
            std::lock_guard lock(queue_mutex);
            stopping = true;
        }
        queue_changed.notify_all();
        writer.join();
    }

    void enqueue(auto&& add, std::size_t rows)
    {
        std::unique_lock lock(queue_mutex);
        room.wait(
            lock, [&] { return failure || pending.rows() + rows <= options.max_pending_rows || pending.rows() == 0; });
        if (failure)
            std::rethrow_exception(failure);
        add(pending);
        ++enqueued;
        queue_changed.notify_one();
    }

    void write_loop()
    {
        Pending batch;
        while (true) {
            std::uint64_t batch_sequence = 0;
            {
                std::unique_lock lock(queue_mutex);
                queue_changed.wait_for(lock, options.commit_interval, [&] { return stopping || flush_requested; });
                if (pending.rows() == 0 && enqueued == committed) {
                    if (stopping)
                        return;
                    continue;
                }
                std::swap(batch, pending);
                batch_sequence = enqueued;
                flush_requested = false;
            }
            room.notify_all();
            try {
                std::lock_guard db_lock(db_mutex);
                write(batch);
            } catch (...) {
                std::lock_guard lock(queue_mutex);
                failure = std::current_exception();
            }
            batch.clear();
            {
                std::lock_guard lock(queue_mutex);
                committed = batch_sequence;
            }
            committed_changed.notify_all();
            room.notify_all();
        }
    }

    void write(const Pending& batch)
    {
        connection.exec("BEGIN");
        try {
            for (const auto& row : batch.iterations) {
                insert_iteration->bind(1, run)
                    .bind(2, std::int64_t { row.job })
                    .bind(3, row.iteration)
                    .bind(4, std::int64_t { row.worker })
                    .bind(5, row.start_s)
                    .bind(6, row.end_s)
                    .bind(7, std::int64_t { row.batch_size })
                    .bind(8, row.compute_s)
                    .bind(9, row.comm_s)
                    .bind(10, row.wait_s)
                    .bind(11, row.cpu_share)
                    .bind(12, row.memory_share)
                    .bind(13, row.speed)
                    .bind(14, row.predicted_speed)
                    .bind(15, row.loss)
                    .bind(16, row.decision)
                    .bind(17, row.gpu.memory_gb)
                    .bind(18, row.gpu.memory_share)
                    .bind(19, row.gpu.utilization);
                insert_iteration->run();
            }
            for (const auto& row : batch.evaluations) {
                insert_evaluation->bind(1, run)
                    .bind(2, std::int64_t { row.job })
                    .bind(3, row.iteration)
                    .bind(4, row.time_s)
                    .bind(5, row.wall_s)
                    .bind(6, row.epoch)
                    .bind(7, row.train_loss)
                    .bind(8, row.test_loss)
                    .bind(9, row.test_accuracy);
                insert_evaluation->run();
            }
            for (const auto& row : batch.events) {
                insert_event->bind(1, run)
                    .bind(2, std::int64_t { row.job })
                    .bind(3, row.iteration)
                    .bind(4, row.time_s)
                    .bind(5, row.kind);
                if (row.worker)
                    insert_event->bind(6, std::int64_t { *row.worker });
                else
                    insert_event->bind_null(6);
                insert_event->bind(7, row.message).bind(8, row.actor);
                insert_event->run();
            }
            for (const auto& row : batch.clusters) {
                insert_cluster->bind(1, run)
                    .bind(2, std::int64_t { row.job })
                    .bind(3, row.iteration)
                    .bind(4, row.time_s)
                    .bind(5, row.state)
                    .bind(6, std::int64_t { row.cluster_job });
                insert_cluster->run();
            }
            for (const auto& c : batch.checkpoints) {
                insert_checkpoint->bind(1, run)
                    .bind(2, std::int64_t { c.job })
                    .bind(3, c.iteration)
                    .bind(4, c.time_s)
                    .bind(5, c.written_at)
                    .bind(6, c.policy_json)
                    .bind_blob(7, c.state);
                insert_checkpoint->run();
            }
            connection.exec("COMMIT");
        } catch (...) {
            sqlite3_exec(connection.get(), "ROLLBACK", nullptr, nullptr, nullptr);
            throw;
        }
        stats_iteration_rows += static_cast<std::int64_t>(batch.iterations.size());
        ++stats_transactions;
    }

    void flush()
    {
        std::unique_lock lock(queue_mutex);
        const std::uint64_t target = enqueued;
        flush_requested = true;
        queue_changed.notify_one();
        committed_changed.wait(lock, [&] { return committed >= target || failure; });
        if (failure)
            std::rethrow_exception(failure);
    }

    std::filesystem::path path;
    Options options;
    Connection connection;
    std::unique_ptr<Statement> insert_iteration, insert_evaluation, insert_event, insert_cluster, insert_checkpoint;
    RunId run = 0;

    std::mutex db_mutex; // the connection: writer transactions and synchronous calls
    std::mutex queue_mutex;
    std::condition_variable queue_changed, committed_changed, room;
    Pending pending;
    std::uint64_t enqueued = 0, committed = 0;
    bool stopping = false, flush_requested = false;
    std::exception_ptr failure;
    std::int64_t stats_iteration_rows = 0, stats_transactions = 0;
    std::thread writer;
};

RunRecorder::RunRecorder(const std::filesystem::path& path)
    : RunRecorder(path, Options {})
{
}

RunRecorder::RunRecorder(const std::filesystem::path& path, Options options)
{
    const auto parent = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    if (!std::filesystem::is_directory(parent))
        throw InputError(path.string(), "", "directory " + parent.string() + " does not exist");
    impl_ = std::make_unique<Impl>(path, options);
}

RunRecorder::~RunRecorder() = default;

RunId RunRecorder::begin_run(const RunInfo& run)
{
    flush();
    std::lock_guard lock(impl_->db_mutex);
    Statement insert(impl_->connection,
        "INSERT INTO runs (name, scenario_json, mode, seed, started_at, status, tenant) VALUES (?1, ?2, ?3, ?4, ?5, "
        "'running', nullif(?6, ''))");
    insert.bind(1, run.name)
        .bind(2, run.scenario_json)
        .bind(3, run.mode)
        .bind(4, static_cast<std::int64_t>(run.seed))
        .bind(5, run.started_at.empty() ? utc_timestamp() : run.started_at)
        .bind(6, run.tenant);
    insert.run();
    impl_->run = sqlite3_last_insert_rowid(impl_->connection.get());
    return impl_->run;
}

void RunRecorder::add_job(const JobInfo& job)
{
    std::lock_guard lock(impl_->db_mutex);
    Statement insert(impl_->connection, "INSERT INTO jobs VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
    insert.bind(1, impl_->run)
        .bind(2, std::int64_t { job.id })
        .bind(3, job.name)
        .bind(4, job.model)
        .bind(5, job.parameters)
        .bind(6, job.sync_model)
        .bind(7, job.policy)
        .bind(8, std::int64_t { job.total_batch })
        .bind(9, job.learning_rate)
        .bind(10, job.aggregation)
        .bind(11, job.iterations);
    insert.run();
}

void RunRecorder::add_worker(const WorkerInfo& worker)
{
    std::lock_guard lock(impl_->db_mutex);
    Statement insert(impl_->connection, "INSERT INTO workers VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    insert.bind(1, impl_->run)
        .bind(2, std::int64_t { worker.job })
        .bind(3, std::int64_t { worker.id })
        .bind(4, worker.name)
        .bind(5, worker.kind)
        .bind(6, worker.profile_json);
    insert.run();
}

void RunRecorder::record_iterations(std::span<const IterationRecord> rows)
{
    impl_->enqueue([&](Pending& p) { p.iterations.insert(p.iterations.end(), rows.begin(), rows.end()); }, rows.size());
}

void RunRecorder::record_evaluation(const EvaluationRecord& evaluation)
{
    impl_->enqueue([&](Pending& p) { p.evaluations.push_back(evaluation); }, 1);
}

void RunRecorder::record_event(const EventRecord& event)
{
    impl_->enqueue([&](Pending& p) { p.events.push_back(event); }, 1);
}

void RunRecorder::record_cluster(const ClusterRecord& cluster)
{
    impl_->enqueue([&](Pending& p) { p.clusters.push_back(cluster); }, 1);
}

void RunRecorder::record_checkpoint(Checkpoint checkpoint)
{
    if (checkpoint.written_at.empty())
        checkpoint.written_at = utc_timestamp();
    impl_->enqueue([&](Pending& p) { p.checkpoints.push_back(std::move(checkpoint)); }, 1);
}

std::optional<double> RunRecorder::resume_run(
    RunId run, std::int64_t after_iteration, const std::vector<std::int64_t>& worker_after)
{
    std::optional<double> until_s;
    flush();
    std::lock_guard lock(impl_->db_mutex);
    Connection& c = impl_->connection;
    {
        Statement exists(c, "SELECT count(*) FROM runs WHERE id = ?1");
        exists.bind(1, run);
        if (!exists.step() || exists.int64(0) == 0)
            throw InputError(impl_->path.string(), "run", "has no run " + std::to_string(run) + " to resume");
    }
    c.exec("BEGIN");
    try {
        const std::string now = utc_timestamp();
        const auto move = [&](const char* sql, std::int64_t after, std::optional<std::int64_t> worker) {
            Statement statement(c, sql);
            statement.bind(1, run).bind(2, after);
            if (std::string_view(sql).find("?3") != std::string_view::npos)
                statement.bind(3, now);
            if (worker)
                statement.bind(4, *worker);
            statement.run();
        };
        // Rows an earlier resume set aside count too: every attempt repeated those before it.
        const auto note_end = [&](std::int64_t after, std::optional<std::int64_t> worker) {
            for (const char* table : { "iterations", "superseded_iterations" }) {
                const std::string sql = std::string("SELECT max(end_s) FROM ") + table
                    + " WHERE run_id = ?1 AND iteration > ?2" + (worker ? " AND worker_id = ?3" : "");
                Statement last(c, sql.c_str());
                last.bind(1, run).bind(2, after);
                if (worker)
                    last.bind(3, *worker);
                if (last.step() && !last.is_null(0))
                    until_s = std::max(until_s.value_or(last.real(0)), last.real(0));
            }
        };
        if (worker_after.empty()) {
            note_end(after_iteration, std::nullopt);
            move("INSERT INTO superseded_iterations SELECT ?3, * FROM iterations WHERE run_id = ?1 AND iteration > ?2",
                after_iteration, std::nullopt);
            move("DELETE FROM iterations WHERE run_id = ?1 AND iteration > ?2", after_iteration, std::nullopt);
        } else {
            for (std::size_t w = 0; w < worker_after.size(); ++w) {
                const auto worker = static_cast<std::int64_t>(w);
                note_end(worker_after[w], worker);
                move("INSERT INTO superseded_iterations SELECT ?3, * FROM iterations WHERE run_id = ?1 AND worker_id = "
                     "?4 AND iteration > ?2",
                    worker_after[w], worker);
                move("DELETE FROM iterations WHERE run_id = ?1 AND worker_id = ?4 AND iteration > ?2", worker_after[w],
                    worker);
            }
        }
        move("INSERT INTO superseded_evaluations SELECT ?3, * FROM evaluations WHERE run_id = ?1 AND iteration > ?2",
            after_iteration, std::nullopt);
        move("DELETE FROM evaluations WHERE run_id = ?1 AND iteration > ?2", after_iteration, std::nullopt);
        Statement reopen(
            c, "UPDATE runs SET status = 'running', finished_at = NULL, summary_json = NULL WHERE id = ?1");
        reopen.bind(1, run);
        reopen.run();
        c.exec("COMMIT");
    } catch (...) {
        sqlite3_exec(c.get(), "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
    impl_->run = run;
    return until_s;
}

void RunRecorder::end_run(RunId run, const std::string& status)
{
    flush();
    std::lock_guard lock(impl_->db_mutex);
    Statement update(impl_->connection, "UPDATE runs SET status = ?1, finished_at = ?2 WHERE id = ?3");
    update.bind(1, status).bind(2, utc_timestamp()).bind(3, run);
    update.run();
}

void RunRecorder::record_schedule(std::span<const ScheduledJob> jobs, std::span<const ScheduleSpan> spans)
{
    flush();
    std::lock_guard lock(impl_->db_mutex);
    Connection& c = impl_->connection;
    c.exec("BEGIN");
    try {
        Statement job(c, "INSERT INTO sched_jobs VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
        for (const ScheduledJob& j : jobs) {
            job.bind(1, impl_->run)
                .bind(2, std::int64_t { j.id })
                .bind(3, j.name)
                .bind(4, j.model)
                .bind(5, std::int64_t { j.gpus })
                .bind(6, j.iterations)
                .bind(7, j.arrival_s)
                .bind(8, j.placed_s)
                .bind(9, j.finish_s)
                .bind(10, j.placement)
                .bind(11, j.status);
            job.run();
        }
        Statement span(c, "INSERT INTO sched_spans VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
        for (const ScheduleSpan& x : spans) {
            span.bind(1, impl_->run).bind(2, x.kind);
            if (x.gpu)
                span.bind(3, std::int64_t { *x.gpu });
            else
                span.bind_null(3);
            span.bind(4, std::int64_t { x.job })
                .bind(5, x.start_s)
                .bind(6, x.end_s)
                .bind(7, x.first_iteration)
                .bind(8, x.iterations)
                .bind(9, std::int64_t { x.contention });
            span.run();
        }
        c.exec("COMMIT");
    } catch (...) {
        c.exec("ROLLBACK");
        throw;
    }
}

void RunRecorder::finish_run(const std::string& status, const std::string& summary_json)
{
    flush();
    std::lock_guard lock(impl_->db_mutex);
    Statement update(
        impl_->connection, "UPDATE runs SET status = ?1, summary_json = ?2, finished_at = ?3 WHERE id = ?4");
    update.bind(1, status).bind(2, summary_json).bind(3, utc_timestamp()).bind(4, impl_->run);
    update.run();
}

void RunRecorder::flush()
{
    impl_->flush();
}

RunRecorder::Stats RunRecorder::stats() const
{
    std::lock_guard lock(impl_->db_mutex);
    return { impl_->stats_iteration_rows, impl_->stats_transactions };
}

const std::filesystem::path& RunRecorder::path() const
{
    return impl_->path;
}
RunId RunRecorder::run_id() const
{
    return impl_->run;
}

} // namespace fulcrum::db
