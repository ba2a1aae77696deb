#include "worker_client/remote_worker.h"

#include "common/error.h"
#include "log/log.h"
#include "model/model_factory.h"
#include "perf/proc_stats.h"
#include "protocol/codec.h"
#include "protocol/worker_frames.h"
#include "run/run_scenario.h"
#include "scenario/scenario.h"
#include "train/worker.h"
#include "ws_client/blocking_connection.h"

#include <boost/system/system_error.hpp>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <thread>
#include <tuple>

namespace fulcrum::worker_client {

using namespace protocol;

namespace {

ServerMessage read_message(const std::string& text)
{
    const auto decoded = decode_server(text);
    if (!decoded)
        throw std::runtime_error("fulcrumd sent a frame this worker cannot read: " + decoded.error.message);
    return *decoded.message;
}

// Reads frames until a text message comes; nothing when the connection closed. The binary
// frames read meanwhile are kept in `held`, in order, when it is given: a job's first task
// can come before the reply to the join that made the worker its member.
std::optional<ServerMessage> next_text(ws_client::BlockingConnection& connection,
    const std::atomic<bool>* stop = nullptr, std::deque<std::string>* held = nullptr)
{
    for (;;) {
        bool binary = false;
        auto frame = connection.read(&binary, stop);
        if (!frame)
            return std::nullopt;
        if (!binary)
            return read_message(*frame);
        if (held)
            held->push_back(std::move(*frame));
    }
}

ServerMessage expect_text(ws_client::BlockingConnection& connection, std::deque<std::string>* held = nullptr)
{
    auto m = next_text(connection, nullptr, held);
    if (!m)
        throw std::runtime_error("fulcrumd closed the connection");
    return std::move(*m);
}

bool terminal(JobState state)
{
    return state == JobState::Finished || state == JobState::Stopped || state == JobState::Failed;
}

// One job slot: its data and model built from the scenario, then its tasks until the job
// ends, the scheduler takes the slot back (pooled), the connection closes or `stop`.
struct Served {
    std::int64_t batches = 0, samples = 0;
    double compute_s = 0;
    std::string ended;
    bool connection_over = false; // closed, or stopped: nothing more to serve
};

// The data set a pooled worker loaded last: a later slot over the same data (the same job
// again, or another job of the same data and seed) takes it instead of reading it again.
struct LoadedData {
    using Key = std::tuple<std::string, std::string, std::int64_t, std::int64_t, std::int64_t, int, std::uint64_t>;
    std::optional<Key> key;
    data::TrainTest data;
};

LoadedData::Key data_key(const scenario::Scenario& s)
{
    const scenario::DataSpec& d = s.data;
    return { d.source, d.path, d.train_size, d.test_size, d.dim, d.classes, s.seed };
}

// `loaded`: a pooled worker's last data set (null: a worker of one job loads its own).
Served serve_slot(const RemoteWorkerOptions& o, const WorkerAssignment& assignment,
    ws_client::BlockingConnection& connection, const std::atomic<bool>& stop, LoadedData* loaded = nullptr,
    std::deque<std::string>* held = nullptr)
{
    const JobId job = assignment.job;
    scenario::Scenario s
        = scenario::parse_scenario(assignment.scenario_json, "job " + std::to_string(job) + "'s scenario");
    if (o.data)
        s.data.path = o.data->string();
    else if (s.data.path_given && std::filesystem::path(s.data.path).is_relative())
        // fulcrumd's clients name a data set inside its datasets folders; on this host the
        // same name is looked up where Debian's data set packages put theirs.
        s.data.path = (std::filesystem::path("/usr/share/datasets") / s.data.path).string();
    const WorkerId me = assignment.worker;
    if (me < 0 || static_cast<std::size_t>(me) >= s.workers.size())
        throw std::runtime_error(
            "fulcrumd assigned worker " + std::to_string(me) + ", which the scenario does not have");
    const bool reuse = loaded && loaded->key == data_key(s);
    // What fulcrumd sent (the job's and the slot's names) goes in fields, quoted as the log
    // quotes a value, never into the message.
    log::info("joined job",
        { { "job", static_cast<std::int64_t>(job) }, { "name", s.name }, { "worker", static_cast<std::int64_t>(me) },
            { "slot", s.workers[static_cast<std::size_t>(me)].name },
            { "data", reuse ? "already loaded (the last slot's)" : "loading" } });
    const data::TrainTest data = reuse ? loaded->data : run::load_scenario_data(s, s.seed);
    if (loaded && !reuse)
        *loaded = { data_key(s), data };
    const auto prototype = model::make_model(s.model, data.train->dim(), data.train->classes);
    // The same worker the job would run in-process: same data, same sampler seed.
    perf::WorkerProfile setup = s.workers[static_cast<std::size_t>(me)];
    setup.device = o.device;
    train::Worker worker(me, setup, *prototype, data.train, s.seed);
    log::info("ready",
        { { "model", prototype->name() }, { "parameters", static_cast<std::int64_t>(prototype->parameter_count()) },
            { "device", perf::to_string(o.device) } });

    Served served;
    while (!stop.load()) {
        bool binary = true;
        std::optional<std::string> frame;
        if (held && !held->empty()) { // tasks that came before the join's reply, first
            frame = std::move(held->front());
            held->pop_front();
        } else {
            frame = connection.read(&binary, &stop);
        }
        if (!frame && stop.load())
            break;
        if (!frame) {
            const std::string why = connection.close_reason();
            served.ended = why.empty() ? "the job ended (fulcrumd closed the connection)"
                                       : "fulcrumd closed the connection: " + why;
            served.connection_over = true;
            return served;
        }
        if (!binary) {
            const ServerMessage m = read_message(*frame);
            if (const auto* e = std::get_if<ProtocolError>(&m))
                log::warning(
                    "fulcrumd reported an error", { { "code", e->error.code }, { "reason", e->error.message } });
            if (const auto* u = std::get_if<JobUpdate>(&m); u && u->status.job == job && terminal(u->status.state)) {
                served.ended = "the job " + std::string(to_string(u->status.state)) + " (" + u->status.message + ")";
                return served;
            }
            if (const auto* r = std::get_if<WorkerReleased>(&m); r && r->job == job && r->worker == me) {
                served.ended = "released (" + r->reason + ")";
                return served;
            }
            continue;
        }
        std::string error;
        const auto task = decode_task(*frame, &error);
        if (!task)
            throw std::runtime_error("fulcrumd sent a task this worker cannot read: " + error);
        if (static_cast<Eigen::Index>(task->parameters.size()) != worker.replica().size())
            throw std::runtime_error("the task carries " + std::to_string(task->parameters.size())
                + " parameters; this worker's " + prototype->name() + " has "
                + std::to_string(worker.replica().size()));
        std::memcpy(worker.replica().data(), task->parameters.data(), task->parameters.size() * sizeof(float));
        const auto started = std::chrono::steady_clock::now();
        const double cpu_before = perf::thread_cpu_seconds();
        WorkerResult result;
        result.iteration = task->iteration;
        result.batch_size = task->batch_size;
        result.loss = worker.compute_gradient(task->batch_size);
        result.compute_s = worker.device_seconds().value_or(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
        result.cpu_share
            = result.compute_s > 0 ? std::min(1.0, (perf::thread_cpu_seconds() - cpu_before) / result.compute_s) : 1.0;
        result.memory_share = perf::memory_available_share();
        result.gpu = worker.device_use().value_or(GpuUse {});
        result.gradient.assign(worker.gradient().data(), worker.gradient().data() + worker.gradient().size());
        if (o.batch_delay_s > 0)
            std::this_thread::sleep_for(std::chrono::duration<double>(o.batch_delay_s));
        try {
            connection.send_binary(encode_result(result));
        } catch (const boost::system::system_error&) { // closed while it computed (lost, or the job ended)
            bool ignored = false;
            while (connection.read(&ignored, &stop)) { } // to the close frame, which says why
            const std::string why = connection.close_reason();
            served.ended = why.empty() ? "fulcrumd closed the connection" : "fulcrumd closed the connection: " + why;
            served.connection_over = true;
            return served;
        }
        served.batches += 1;
        served.samples += task->batch_size;
        served.compute_s += result.compute_s;
        if (served.batches % 100 == 0)
            log::debug("batches computed",
                { { "batches", served.batches }, { "iteration", task->iteration }, { "batch", task->batch_size },
                    { "compute_ms", result.compute_s * 1000 } });
    }
    served.ended = "stopped";
    served.connection_over = true;
    return served;
}

void add(RemoteWorkerSummary& summary, const Served& served, WorkerId worker)
{
    summary.worker = worker;
    summary.assignments += 1;
    summary.batches += served.batches;
    summary.samples += served.samples;
    summary.compute_s += served.compute_s;
    summary.ended = served.ended;
}

// --pool: wait in fulcrumd's worker pool, serve each slot the scheduler gives, wait again.
RemoteWorkerSummary serve_pool(
    const RemoteWorkerOptions& o, ws_client::BlockingConnection& connection, const std::atomic<bool>& stop)
{
    connection.send_text(encode(ClientMessage { JoinPool { "pool", o.name } }));
    for (;;) {
        const ServerMessage m = expect_text(connection);
        if (const auto* r = std::get_if<Reply>(&m); r && r->id == "pool") {
            if (r->error)
                throw std::runtime_error("fulcrumd refused to take this worker into its pool (" + r->error->code
                    + "): " + r->error->message);
            break;
        }
    }
    log::info("waiting in fulcrumd's worker pool (the elastic scheduler hands pooled workers to real-mode jobs under "
              "--elastic eps or kill-restart)");
    RemoteWorkerSummary summary;
    summary.ended = "stopped";
    LoadedData loaded;
    while (!stop.load()) {
        const std::optional<ServerMessage> m = next_text(connection, &stop);
        if (!m && stop.load())
            break; // "stopped"
        if (!m) {
            summary.ended = "fulcrumd closed the connection";
            return summary;
        }
        const auto* assigned = std::get_if<WorkerAssigned>(&*m);
        if (!assigned) {
            if (const auto* e = std::get_if<ProtocolError>(&*m))
                log::warning(
                    "fulcrumd reported an error", { { "code", e->error.code }, { "reason", e->error.message } });
            continue; // a release of a slot it already left, or a job's final status
        }
        log::info("assigned from the pool",
            { { "job", static_cast<std::int64_t>(assigned->assignment.job) },
                { "worker", static_cast<std::int64_t>(assigned->assignment.worker) }, { "reason", assigned->reason } });
        const Served served = serve_slot(o, assigned->assignment, connection, stop, &loaded);
        add(summary, served, assigned->assignment.worker);
        if (served.connection_over)
            return summary;
        log::info("back in the pool",
            { { "job", static_cast<std::int64_t>(assigned->assignment.job) },
                { "worker", static_cast<std::int64_t>(assigned->assignment.worker) }, { "batches", served.batches },
                { "ended", served.ended } });
    }
    return summary;
}

RemoteWorkerSummary serve(
    const RemoteWorkerOptions& o, ws_client::BlockingConnection& connection, const std::atomic<bool>& stop)
{
    connection.send_text(encode(ClientMessage { Hello { kProtocolVersion, "fulcrum-worker on " + o.name } }));
    const ServerMessage welcome = expect_text(connection);
    if (const auto* e = std::get_if<ProtocolError>(&welcome))
        throw std::runtime_error("fulcrumd refused the connection: " + e->error.message);
    // A sign of life every second from the connection's own thread, however long a batch
    // takes: fulcrumd loses a worker that is silent for its worker timeout.
    if (const auto* w = std::get_if<Welcome>(&welcome); w && w->version >= kHeartbeatVersion)
        connection.keep_alive(std::chrono::seconds(1), encode(ClientMessage { Heartbeat {} }));
    if (o.pool) {
        RemoteWorkerSummary summary = serve_pool(o, connection, stop);
        connection.close();
        return summary;
    }
    connection.send_text(encode(ClientMessage { JoinJob { "join", o.job, o.worker, o.name } }));
    std::optional<WorkerAssignment> assignment;
    std::deque<std::string> held; // tasks sent before the reply
    while (!assignment) {
        const ServerMessage m = expect_text(connection, &held);
        if (const auto* r = std::get_if<Reply>(&m); r && r->id == "join") {
            if (r->error)
                throw std::runtime_error("fulcrumd refused to let this worker join job " + std::to_string(o.job) + " ("
                    + r->error->code + "): " + r->error->message);
            if (!r->assignment)
                throw std::runtime_error("fulcrumd's join reply carries no assignment");
            assignment = r->assignment;
        }
    }
    const Served served = serve_slot(o, *assignment, connection, stop, nullptr, &held);
    RemoteWorkerSummary summary;
    add(summary, served, assignment->worker);
    if (!served.connection_over || served.ended == "stopped")
        connection.close();
    return summary;
}

} // namespace

RemoteWorkerSummary run_remote_worker(const RemoteWorkerOptions& options, const std::atomic<bool>& stop)
{
    const ws_client::ConnectOptions connect { .host = options.host,
        .port = options.port,
        .token = options.token,
        .tls = options.tls,
        .trusted = options.trusted,
        .user_agent = "fulcrum-worker/0.1",
        .max_frame_bytes = kMaxWorkerFrameBytes,
        .token_hint = "give a worker token from its token file" };
    ws_client::BlockingConnection connection(connect);
    return serve(options, connection, stop);
}

} // namespace fulcrum::worker_client
