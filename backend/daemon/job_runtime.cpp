#include "daemon/job_runtime.h"

#include "common/error.h"
#include "daemon/daemon_options.h"
#include "daemon/data_cache.h"
#include "daemon/event_log.h"
#include "daemon/link_schedule.h"
#include "daemon/shared_clock.h"
#include "daemon/start_watch.h"
#include "db/run_reader.h"
#include "db/run_recorder.h"
#include "log/log.h"
#include "run/run_scenario.h"
#include "serve/thread_role.h"
#include "train/external_ranks.h"
#include "train/trainer.h"

#include <algorithm>
#include <malloc.h>
#include <sstream>
#include <utility>

namespace fulcrum::daemon {

using archive::ServerFolders;
using serve::StreamHub;

using protocol::JobState;
using protocol::WorkerAction;

JobRuntime::JobRuntime(JobId id, std::string tenant, scenario::Scenario scenario, std::filesystem::path database,
    const ServerFolders& folders, StreamHub& hub, std::function<void(JobId)> on_done)
    : id_(id)
    , tenant_(std::move(tenant))
    , scenario_(std::move(scenario))
    , database_(std::move(database))
    , folders_(folders)
    , hub_(hub)
    , on_done_(std::move(on_done))
{
    hub_.set_tenant(id_, tenant_); // before it publishes anything
    status_.job = id;
    status_.name = scenario_.name;
    status_.tenant = tenant_;
    status_.state = JobState::Queued;
    status_.mode = scenario::to_string(scenario_.mode);
    status_.workers = workers();
    status_.policy = scenario_.policy.type;
    status_.sync_model = std::string(sync::to_string(scenario_.sync.type));
    status_.model = scenario_.model.type;
    status_.database = database_.filename().string(); // the name open-replay takes, never a server path
    if (scenario_.elastic.present)
        status_.elastic
            = protocol::JobStatus::ElasticBounds { scenario_.elastic.min_workers, scenario_.elastic.max_workers };
    batch_sizes_.assign(scenario_.workers.size(), 0);
    const int initial = scenario_.elastic.present && scenario_.elastic.initial_workers > 0
        ? scenario_.elastic.initial_workers
        : workers();
    std::vector<bool> members(scenario_.workers.size(), false);
    std::fill_n(members.begin(), std::min(initial, workers()), true);
    fold_ = JobFold(workers(), status_.policy, status_.sync_model, std::move(members));
    std::vector<bool> remote_slots;
    for (const auto& w : scenario_.workers)
        remote_slots.push_back(w.remote);
    if (std::find(remote_slots.begin(), remote_slots.end(), true) != remote_slots.end())
        remote_ = std::make_shared<RemotePool>(
            id_, std::move(remote_slots), scenario_.worker_timeout_s.value_or(kDefaultWorkerTimeoutS));
    if (scenario_.external) {
        std::vector<std::string> names;
        for (const auto& w : scenario_.workers)
            names.push_back(w.name);
        ranks_ = std::make_shared<RankPool>(id_, std::move(names), scenario_.external->rank_timeout_s,
            scenario_.external->evaluation_timeout_s, scenario_.worker_timeout_s.value_or(kDefaultWorkerTimeoutS));
        status_.model = scenario_.external->framework + " (external)";
    }
    published_.store(std::make_shared<const Published>(Published { status_, workers_update_locked(), {} }));
}

JobRuntime::~JobRuntime()
{
    stop_ = true;
    if (remote_)
        remote_->close();
    join();
}

void JobRuntime::scheduler_event(EventKind kind, const std::string& message)
{
    JobEvent e = job_event(kind, 0, 0, message, EventActor::scheduler({}, db::utc_timestamp()));
    e.job = id_;
    {
        std::lock_guard lock(mutex_);
        recorded_before_.push_back(e);
    }
    publish_event(hub_, e);
}

void JobRuntime::set_waiting(const std::string& why)
{
    {
        std::lock_guard lock(mutex_);
        if (status_.message == why)
            return;
        status_.message = why;
    }
    publish_status();
}

bool JobRuntime::start(std::vector<std::int32_t> placement, const std::string& placed, std::optional<int> members,
    std::optional<int> server_gpus)
{
    std::ostringstream waited;
    waited.precision(3);
    waited << placed << " after "
           << std::chrono::duration<double>(std::chrono::steady_clock::now() - submitted_).count() << " s in the queue";
    scheduler_event(EventKind::JobPlaced, waited.str());
    join(); // requeued (rigid_borrowers requeue): its last trainer's thread has ended, or ends now
    {
        std::lock_guard lock(mutex_);
        if (!cancelled_)
            stop_ = false; // a requeued job stopped at its checkpoint goes on
        started_ = std::chrono::steady_clock::now();
        status_.placement = std::move(placement);
        trained_ = false; // an interrupted job starts again
        built_ = false;
        if (members && scenario_.elastic.present) {
            start_members_ = std::clamp(*members, 1, workers());
            std::vector<bool> starting(scenario_.workers.size(), false);
            std::fill_n(starting.begin(), *start_members_, true);
            fold_.restart(fold_.policy(), fold_.sync_model(), std::move(starting));
        }
        // Each server GPU it lacks is one server less (placement.server_gpus and its shards
        // move together, as an elastic add-server or remove-server moves them).
        if (server_gpus && scenario_.elastic.present)
            start_servers_
                = std::max(1, scenario_.server_shards - (scenario_.placement_server_gpus - std::max(1, *server_gpus)));
    }
    set_state(JobState::Running, "starting");
    try {
        thread_ = std::thread([this] {
            serve::take_role(serve::ThreadRole::job, niceness_);
            run();
            // What it held goes back to the system, not only to the allocator: a cancelled
            // job's memory must not stay with fulcrumd.
            ::malloc_trim(0);
        });
    } catch (const std::system_error& e) { // the system's thread limit: this job fails, fulcrumd lives on
        set_state(JobState::Failed,
            std::string("fulcrumd could not start a thread for it (") + e.what()
                + "); lower --max-threads below the system's limit");
        return false;
    }
    return true;
}

void JobRuntime::join()
{
    if (thread_.joinable())
        thread_.join();
}

void JobRuntime::run()
{
    if (remote_) {
        remote_->set_on_rejoin([this](WorkerId worker) {
            std::lock_guard lock(mutex_);
            if (trainer_) {
                try {
                    trainer_->control().include(worker, EventActor::system("worker rejoined"));
                } catch (const RefusedRequest&) {
                    // not excluded yet: the loss has not reached a barrier
                }
            }
        });
        std::vector<bool> members;
        {
            std::lock_guard lock(mutex_);
            members = fold_.members();
        }
        const bool joined = remote_->wait_until_joined(members, stop_, [this](int now, int slots) {
            {
                std::lock_guard lock(mutex_);
                status_.message = "waiting for remote workers: " + std::to_string(now) + " of " + std::to_string(slots)
                    + " joined (fulcrum-worker --job " + std::to_string(id_)
                    + (scenario_.elastic.present ? ", or fulcrum-worker --pool under --elastic eps" : "") + ")";
            }
            publish_status();
        });
        if (!joined) {
            if (shutdown_) // it queues again when fulcrumd starts
                set_state(JobState::Interrupted, "interrupted by fulcrumd's shutdown while waiting for remote workers");
            else
                set_state(JobState::Stopped, "stopped while waiting for remote workers");
            if (on_done_)
                on_done_(id_);
            return;
        }
    }
    run::RunOptions options;
    {
        std::lock_guard lock(mutex_);
        options.recorded_before = std::exchange(recorded_before_, {});
    }
    options.job = id_;
    if (tenant_ != protocol::kDefaultTenant)
        options.tenant = tenant_;
    options.remote = remote_;
    options.ranks = ranks_;
    options.database = database_;
    options.stop = &stop_;
    options.resume = resume_;
    options.stopped_status = [this] {
        std::lock_guard lock(mutex_);
        const bool restarting = restart_ && !cancelled_; // kill-restart goes on in this run
        return shutdown_ || restarting ? std::string("interrupted") : std::string("stopped");
    };
    options.on_rows = [this](std::span<const IterationRecord> rows) {
        if (rows.empty())
            return;
        auto message = std::make_shared<protocol::IterationRows>();
        message->job = id_;
        message->iteration = rows.front().iteration;
        message->rows.assign(rows.begin(), rows.end());
        for (IterationRecord& r : message->rows)
            r.job = id_;
        // The rows and the workers they leave, in one snapshot (each built once, for it and the hub).
        std::shared_ptr<const protocol::WorkerUpdate> workers;
        {
            std::lock_guard lock(mutex_);
            std::fill(batch_sizes_.begin(), batch_sizes_.end(), 0);
            for (const IterationRecord& r : message->rows)
                if (r.worker >= 0 && static_cast<std::size_t>(r.worker) < batch_sizes_.size())
                    batch_sizes_[static_cast<std::size_t>(r.worker)] = r.batch_size;
            workers = workers_update_locked();
            republish(workers, message);
        }
        hub_.publish(*message);
        hub_.publish(*workers);
    };
    options.on_evaluation = [this](const EvaluationRecord& e) {
        EvaluationRecord mine = e;
        mine.job = id_;
        hub_.publish(protocol::Evaluation { mine });
    };
    options.on_event = [this](const JobEvent& e) {
        JobEvent mine = e;
        mine.job = id_;
        publish_event(hub_, mine);
        fold(mine);
    };
    options.progress = [this](const run::Progress& p) {
        {
            std::lock_guard lock(mutex_);
            if (pace_.empty() || p.iteration > pace_.back().iteration)
                pace_.push_back({ p.iteration, p.time_s, p.samples });
            if (pace_.size() > 1024)
                pace_.pop_front();
            status_.iteration = p.iteration;
            status_.iterations = p.iterations;
            work_ = { p.work_done, p.work_planned };
            status_.time_s = p.time_s;
            status_.accuracy = p.accuracy;
            status_.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
        }
        publish_status();
    };
    options.status = [this](const std::string& text) {
        {
            std::lock_guard lock(mutex_);
            status_.message = text;
        }
        publish_status();
    };
    options.on_model = [this](const std::string& model) { // "mlp" until its data is loaded
        {
            std::lock_guard lock(mutex_);
            status_.model = model;
        }
        publish_status();
    };
    options.on_trainer = [this](train::Trainer* trainer) {
        if (trainer && watch_ && !built_.exchange(true)) // its data, model and workers are allocated
            watch_->started(id_);
        trainer_started(trainer);
    };
    if (shared_clock_ && scenario_.mode == scenario::Mode::Virtual)
        options.shared_clock
            = [this](double t, const std::atomic<bool>* stop) { shared_clock_->advance(id_, t, stop); };
    if (links_ && scheduled_by_links() && (shared_clock_ || scenario_.mode != scenario::Mode::Virtual))
        options.comm_gate = [this](const train::CommTransfer& transfer, const std::atomic<bool>* stop) {
            return schedule_transfer(transfer, stop);
        };
    try {
        if (watch_) // its start, from here until its trainer is built, is watched (StartWatch)
            watch_->starting(id_);
        if (data_ && !scenario_.external) // an external job's ranks hold their own data
            options.data = data_->read(scenario_);
        scenario::Scenario scenario = scenario_;
        if (start_members_)
            scenario.elastic.initial_workers = *start_members_;
        if (start_servers_)
            scenario.server_shards = *start_servers_;
        run::RunSummary summary
            = scenario.external ? run_attempts(scenario, options) : run::run_scenario(scenario, options);
        // kill-restart: stopped at a barrier with a checkpoint, it starts again from there.
        while (summary.stopped && !shutdown_) {
            std::optional<Restart> restart;
            {
                std::lock_guard lock(mutex_);
                restart = std::exchange(restart_, std::nullopt);
                if (!restart || cancelled_)
                    break;
                trained_ = false; // commands are held for the next trainer
                // What the stopped trainer had not made is lost with it: the record asks the
                // restart's changes only (resize refuses others while it restarts).
                asked_resizes_.assign(restart->changes.begin(), restart->changes.end());
            }
            auto checkpoint = db::RunReader(database_).job_checkpoint(summary.run, id_);
            if (!checkpoint)
                throw std::runtime_error("kill-restart: the job stopped without a checkpoint to restart from");
            restart->stopped_at = checkpoint->iteration;
            // Its checkpoint's policy names were confined when a client set them; a local
            // operator's absolute ones stand.
            std::optional<train::JobControl::LinkModel> links;
            {
                std::lock_guard lock(mutex_);
                if (contention_)
                    links = contention_->link;
            }
            options.resume = run::RunOptions::Resume { summary.run, std::move(*checkpoint), &restart_paths_, links };
            if (restart->requeue) { // its GPUs go back; placed again, it goes on from the checkpoint
                std::lock_guard lock(mutex_);
                resume_ = options.resume;
                requeued_ = "stopped at its checkpoint at iteration " + std::to_string(restart->stopped_at) + " ("
                    + restart->reason + ", by " + restart->actor.line() + ")";
                break;
            }
            options.recorded_before.clear();
            {
                std::lock_guard lock(mutex_);
                restarting_ = restart;
            }
            // Modelled modes: the restart pauses the job once (elastic.pause_s.restart), at its
            // first change, instead of each change's own pause.
            bool first = true;
            for (train::ResizeRequest request : restart->changes) {
                request.pause_s = std::exchange(first, false) ? scenario_.elastic.pause_s.restart_s : 0.0;
                apply_or_hold(std::string(action_name(request.action)) + " by " + restart->actor.line(),
                    [request](train::Trainer& t) { t.control().request_resize(request); });
            }
            {
                std::lock_guard lock(mutex_); // a cancel while it read the checkpoint stands
                if (cancelled_)
                    break;
                stop_ = false;
            }
            set_state(JobState::Running,
                "restarting from its checkpoint at iteration " + std::to_string(restart->stopped_at) + " ("
                    + restart->reason + ")");
            summary = run::run_scenario(scenario, options);
        }
        {
            std::lock_guard lock(mutex_);
            status_.run = summary.run;
            status_.model = summary.model;
            status_.policy = summary.policy;
            status_.sync_model = summary.sync;
            status_.accuracy = summary.final_accuracy;
        }
        if (summary.stopped && shutdown_)
            set_state(JobState::Interrupted,
                "interrupted by fulcrumd's shutdown after " + std::to_string(summary.iterations)
                    + " iterations; it goes on from its checkpoint when fulcrumd starts again");
        else if (const std::optional<std::string> why = requeue_reason())
            set_state(JobState::Queued, *why + "; queued again, it goes on from there when placed");
        else
            set_state(summary.stopped ? JobState::Stopped : JobState::Finished,
                std::to_string(summary.iterations) + " iterations, test accuracy "
                    + std::to_string(summary.final_accuracy));
    } catch (const train::RankLost& e) {
        set_state(JobState::Lost, e.what());
    } catch (const std::exception& e) {
        set_state(JobState::Failed, folders_.for_clients(e.what()));
    }
    if (watch_)
        watch_->started(id_); // ended: whatever it was, its start did not stop fulcrumd
    if (remote_)
        remote_->finish(status());
    if (ranks_) { // a job that failed before its trainer ran: no rank waits for ever
        train::RankPlan plan;
        plan.state = train::RankPlan::State::Stopped;
        plan.message = status().message;
        ranks_->finish(plan);
    }
    // The jobs its end lets start (on_done_) start at its end on the daemon's clock: it holds
    // the others there until they are placed, and only then no live job waits for it.
    if (on_done_) {
        try {
            on_done_(id_);
        } catch (const RefusedRequest&) {
            // fulcrumd's core has stopped: nothing is placed after it any more
        }
    }
    if (shared_clock_)
        shared_clock_->leave(id_);
}

run::RunSummary JobRuntime::run_attempts(const scenario::Scenario& scenario, run::RunOptions& options)
{
    const int allowed = scenario.external->max_restarts;
    for (int restart = 1;; ++restart) {
        try {
            return run::run_scenario(scenario, options);
        } catch (const train::RankLost& e) {
            if (restart > allowed || stop_)
                throw;
            {
                std::lock_guard lock(mutex_);
                trained_ = false; // before the ranks may join again: their notes wait for the next trainer
            }
            ranks_->reopen();
            const std::string why = std::string(e.what()) + "; restart " + std::to_string(restart) + " of "
                + std::to_string(allowed) + ": waiting for its " + std::to_string(ranks_->ranks())
                + " ranks to join again";
            JobEvent restarted;
            {
                std::lock_guard lock(mutex_);
                trained_ = false; // commands are held for the next attempt's trainer
                restarted
                    = job_event(EventKind::JobRestarted, status_.iteration, 0, why, EventActor::system("rank lost"));
            }
            restarted.job = id_;
            publish_event(hub_, restarted);
            options.recorded_before = { restarted }; // the first event of the next attempt's run
            set_state(JobState::Running, why);
        }
    }
}

void JobRuntime::set_daemon_arrival(double at)
{
    std::lock_guard lock(mutex_);
    status_.daemon_clock = protocol::JobStatus::DaemonClock { at, std::nullopt, std::nullopt };
    republish(); // list-jobs shows it before the job is queued; the stream follows from then
}

void JobRuntime::set_daemon_start(double at)
{
    {
        std::lock_guard lock(mutex_);
        if (!status_.daemon_clock || status_.daemon_clock->start_s)
            return;
        status_.daemon_clock->start_s = at;
    }
    publish_status();
}

void JobRuntime::set_state(JobState state, std::string message)
{
    const bool ended = state != JobState::Queued && state != JobState::Running && state != JobState::Paused;
    const std::optional<double> end = ended && shared_clock_ ? shared_clock_->last_time(id_) : std::nullopt;
    protocol::JobStatus logged;
    {
        std::lock_guard lock(mutex_);
        status_.state = state;
        if (end && status_.daemon_clock && status_.daemon_clock->start_s)
            status_.daemon_clock->finish_s = *end;
        if (!message.empty())
            status_.message = std::move(message);
        status_.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
        logged = status_;
    }
    log::write(state == JobState::Failed ? log::Level::Error : log::Level::Info, "job state",
        { { "job", static_cast<std::int64_t>(id_) }, { "name", logged.name }, { "state", protocol::to_string(state) },
            { "iteration", logged.iteration }, { "why", logged.message } });
    publish_status();
}

void JobRuntime::publish_status()
{
    protocol::JobUpdate update;
    {
        std::lock_guard lock(mutex_);
        update.status = status_;
        republish();
    }
    hub_.publish(update);
}

void JobRuntime::publish_workers()
{
    std::shared_ptr<const protocol::WorkerUpdate> workers;
    {
        std::lock_guard lock(mutex_);
        workers = workers_update_locked();
        republish(workers);
    }
    hub_.publish(*workers);
}

std::shared_ptr<const protocol::WorkerUpdate> JobRuntime::workers_update_locked() const
{
    auto update = std::make_shared<protocol::WorkerUpdate>();
    update->job = id_;
    update->workers = worker_states_locked();
    return update;
}

void JobRuntime::republish(const std::shared_ptr<const protocol::WorkerUpdate>& workers,
    const std::shared_ptr<const protocol::IterationRows>& rows)
{
    const std::shared_ptr<const Published> last = published_.load();
    published_.store(std::make_shared<const Published>(
        Published { status_, workers ? workers : last->workers, rows ? rows : last->rows }));
}

double remaining_run_s(const protocol::JobStatus& status)
{
    const double per_iteration = status.iteration > 0 ? status.time_s / static_cast<double>(status.iteration) : 1.0;
    return static_cast<double>(std::max<std::int64_t>(0, status.iterations - status.iteration)) * per_iteration;
}

// Wang et al.'s communication scheduling on fulcrumd's one clock (LinkSchedule::schedule).
std::optional<train::CommGrant> JobRuntime::schedule_transfer(
    const train::CommTransfer& transfer, const std::atomic<bool>* stop)
{
    if (!links_->scheduling())
        return std::nullopt;
    LinkSchedule::Transfer asked { id_, transfer.bytes, {}, transfer.alone_s };
    double service = 0;
    {
        std::lock_guard lock(mutex_);
        for (const WorkerId w : transfer.workers) {
            const auto i = static_cast<std::size_t>(w);
            if (scenario_.mode == scenario::Mode::Real) // a remote worker's pulls and pushes cross fulcrumd's link
                asked.gpus.push_back(
                    i < scenario_.workers.size() && scenario_.workers[i].remote ? LinkSchedule::kDaemonHost : -1);
            else
                asked.gpus.push_back(i < status_.placement.size() ? status_.placement[i] : -1);
        }
        // SRSF's key, the simulator's: the compute still to run times the GPUs it runs on (all
        // of them: an asp or ssp worker's transfer is its own, a barrier's is every member's).
        const auto gpus = std::count_if(
            status_.placement.begin(), status_.placement.end(), [](std::int32_t gpu) { return gpu >= 0; });
        service = remaining_run_s(status_) * static_cast<double>(std::max<std::ptrdiff_t>(1, gpus));
    }
    const LinkSchedule::Scheduled scheduled = scenario_.mode == scenario::Mode::Virtual
        ? links_->schedule(*shared_clock_, asked, transfer.now, service, stop)
        : links_->schedule_paced(asked, scenario_.mode == scenario::Mode::Paced ? scenario_.pace : 1.0, service, stop);
    std::lock_guard lock(mutex_);
    if (!status_.link)
        status_.link = protocol::JobStatus::LinkUse {};
    ++status_.link->transfers;
    status_.link->held += scheduled.asked > 1 ? 1 : 0;
    status_.link->wait_s += scheduled.wait_s;
    return train::CommGrant { scheduled.wait_s, scheduled.stretch };
}

protocol::JobStatus JobRuntime::status() const
{
    std::lock_guard lock(mutex_);
    return status_;
}

std::vector<protocol::WorkerState> JobRuntime::worker_states() const
{
    std::lock_guard lock(mutex_);
    return worker_states_locked();
}

std::vector<protocol::WorkerState> JobRuntime::worker_states_locked() const
{
    std::vector<balance::WorkerOverride> overrides;
    std::vector<double> slowdowns;
    if (trainer_) {
        overrides = trainer_->control().workers();
        slowdowns = trainer_->control().straggler_slowdowns();
    }
    std::vector<protocol::WorkerState> out;
    out.reserve(scenario_.workers.size());
    for (std::size_t i = 0; i < scenario_.workers.size(); ++i) {
        protocol::WorkerState w;
        w.worker = static_cast<WorkerId>(i);
        w.name = scenario_.workers[i].name;
        w.device = perf::to_string(scenario_.workers[i].device);
        w.sms = scenario_.workers[i].device.sms;
        w.batch_size = batch_sizes_[i];
        if (trainer_ && i < overrides.size()) {
            const balance::WorkerOverride& o = overrides[i];
            w.pinned = o.pinned;
            w.excluded = o.excluded;
            w.excluded_until = o.excluded_until;
            w.member = o.member;
            w.slowdown = i < slowdowns.size() ? slowdowns[i] : 1.0;
        } else if (i < fold_.members().size()) { // not started yet: the members it will start with
            w.member = fold_.members()[i];
        }
        if (i < fold_.holds().size() && fold_.holds()[i].stalled_since) {
            w.stalled_since = fold_.holds()[i].stalled_since;
            w.predicted_s = fold_.holds()[i].stall_predicted_s;
        }
        out.push_back(std::move(w));
    }
    return out;
}

void JobRuntime::check_worker(WorkerId worker) const
{
    if (worker < 0 || static_cast<std::size_t>(worker) >= scenario_.workers.size())
        throw RefusedRequest("unknown-worker",
            "job " + std::to_string(id_) + " has no worker " + std::to_string(worker) + " (it has "
                + std::to_string(scenario_.workers.size()) + ")");
}

void JobRuntime::apply_or_hold(
    std::string what, std::function<void(train::Trainer&)> apply, bool note, std::uint64_t resize_ticket)
{
    std::lock_guard lock(mutex_);
    if (trainer_) {
        apply(*trainer_);
        return;
    }
    // Queued, waiting for its workers or loading: the trainer takes it when it starts.
    const bool before_training = !trained_
        && (status_.state == JobState::Queued || status_.state == JobState::Running
            || status_.state == JobState::Paused);
    if (!before_training)
        throw RefusedRequest("job-not-running",
            "job " + std::to_string(id_) + " (" + scenario_.name + ") is "
                + std::string(protocol::to_string(status_.state)) + (trained_ ? " (its training has ended)" : ""));
    held_.push_back({ std::move(what), std::move(apply), note, resize_ticket });
}

void JobRuntime::trainer_started(train::Trainer* trainer)
{
    std::vector<std::string> refused;
    {
        std::lock_guard lock(mutex_);
        trainer_ = trainer;
        if (!trainer) {
            trained_ = true;
            return;
        }
        std::vector<bool> members(fold_.members().size()); // a resumed job's are its checkpoint's
        for (std::size_t w = 0; w < members.size(); ++w)
            members[w] = trainer->control().worker(static_cast<WorkerId>(w)).member;
        // In effect from its first barrier. Told even when alone: a recovered job follows what
        // its crashed attempt recorded, then this (JobControl::RecordedShares).
        const std::size_t workers = members.size();
        if (scenario_.mode != scenario::Mode::Real && workers == scenario_.workers.size()) {
            trainer->control().set_gpu_sharing(sharing_.empty() ? std::vector<int>(workers, 1) : sharing_);
            if (contention_)
                trainer->control().set_link_contention(*contention_);
            else if (resume_ && resume_->links)
                trainer->control().set_link_contention({ std::vector<int>(workers, 1), *resume_->links });
        }
        if (!cluster_.empty())
            trainer->control().record_cluster({ id_, cluster_ });
        if (const auto r = std::exchange(restarting_, std::nullopt)) {
            std::ostringstream cost;
            cost.precision(3);
            cost << "kill-restart: stopped at iteration " << r->stopped_at
                 << " with a checkpoint and started again from it (data, model and trainer rebuilt) "
                 << std::chrono::duration<double>(std::chrono::steady_clock::now() - r->asked).count()
                 << " s after it was asked; " << r->reason;
            trainer->control().record({ EventKind::JobRestarted, cost.str(), r->actor, std::nullopt });
        }
        for (HeldCommand& held : std::exchange(held_, {})) {
            if (stop_ && !held.note) { // cancelled while it loaded: a held pause must not keep it from stopping
                std::erase_if(asked_resizes_, [&](const train::ResizeRequest& r) {
                    return held.resize_ticket && r.ticket == held.resize_ticket;
                });
                continue;
            }
            try {
                held.apply(*trainer);
            } catch (const std::exception& e) {
                refused.push_back(held.what + ", held until the job started, was refused: " + e.what());
            }
        }
        // The names the run records, as later changes will give them.
        fold_.restart(trainer->manager().policy().name(), trainer->control().sync_model(), std::move(members));
        status_.policy = fold_.policy();
        status_.sync_model = fold_.sync_model();
        republish();
    }
    for (const std::string& why : refused) {
        JobEvent e = job_event(EventKind::CommandRefused, 0, 0, why);
        e.job = id_;
        publish_event(hub_, e);
    }
    if (!refused.empty())
        publish_workers();
}

void JobRuntime::interrupted(std::optional<run::RunOptions::Resume> resume, const std::string& why)
{
    {
        std::lock_guard lock(mutex_);
        status_.state = JobState::Interrupted;
        if (resume) {
            status_.iteration = resume->checkpoint.iteration + 1;
            status_.time_s = resume->checkpoint.time_s;
            status_.run = resume->run;
        }
        status_.message = why;
        resume_ = std::move(resume);
    }
    publish_status();
}

bool JobRuntime::has_checkpoint() const
{
    std::lock_guard lock(mutex_);
    return resume_.has_value();
}

bool JobRuntime::resumable() const
{
    std::lock_guard lock(mutex_);
    return status_.state == JobState::Interrupted;
}

void JobRuntime::cancel(const EventActor& actor)
{
    if (actor.is_shutdown())
        shutdown_ = true;
    std::lock_guard lock(mutex_); // with cancelled_: a kill-restart's new start sees one or both
    stop_ = true;
    cancelled_ = true; // a restart asked for does not happen
    if (trainer_)
        trainer_->control().resume(actor); // a paused job must reach its stop check
}

void JobRuntime::cancel_queued(const EventActor& actor)
{
    stop_ = true;
    scheduler_event(EventKind::JobCancelled, "cancelled in the queue by " + actor.line());
    set_state(JobState::Stopped, "cancelled in the queue by " + actor.line());
}

void JobRuntime::pause(const EventActor& actor)
{
    apply_or_hold("pause-job by " + actor.line(), [actor](train::Trainer& t) { t.control().pause(actor); });
}

void JobRuntime::resume(const EventActor& actor)
{
    apply_or_hold("resume-job by " + actor.line(), [actor](train::Trainer& t) { t.control().resume(actor); });
}

void JobRuntime::change(protocol::JobSetting setting, const std::string& spec_json, const EventActor& actor)
{
    const std::string source = std::string(protocol::to_string(setting)) + " for job " + std::to_string(id_);
    if (setting == protocol::JobSetting::SyncModel) {
        const sync::SyncSpec spec = scenario::parse_sync_section(spec_json, scenario_, source);
        apply_or_hold("set-sync-model by " + actor.line(),
            [spec, actor](train::Trainer& t) { t.control().set_sync_model(spec, actor); });
        return;
    }
    balance::PolicySpec spec = scenario::parse_policy_section(spec_json, scenario_, source, folders_);
    std::unique_ptr<balance::BatchSizePolicy> policy;
    try {
        policy = balance::make_policy(spec);
    } catch (const std::exception& e) { // a warm-start file that is no NARX model, say
        throw InputError(source, "policy", folders_.for_clients(e.what()));
    }
    // One policy object, moved into the trainer once: the command is applied at most once.
    auto shared = std::make_shared<std::unique_ptr<balance::BatchSizePolicy>>(std::move(policy));
    apply_or_hold(
        "set-policy by " + actor.line(), [shared, options = spec.manager, actor, spec_json](train::Trainer& t) {
            t.control().set_policy(std::move(*shared), options, actor, spec_json);
        });
}

void JobRuntime::command(const protocol::WorkerCommand& c, const EventActor& actor)
{
    check_worker(c.worker);
    apply_or_hold(std::string(protocol::to_string(c.action)) + " " + std::to_string(c.worker) + " by " + actor.line(),
        [c, actor](train::Trainer& t) {
            train::JobControl& control = t.control();
            switch (c.action) {
            case WorkerAction::Pin:
                control.pin(c.worker, c.batch_size, actor);
                break;
            case WorkerAction::Unpin:
                control.unpin(c.worker, actor);
                break;
            case WorkerAction::Exclude:
                control.exclude(c.worker, c.for_s, actor); // a barrier it holds goes on at once
                break;
            case WorkerAction::Include:
                control.include(c.worker, actor);
                break;
            case WorkerAction::InjectStraggler:
                control.inject_straggler(c.worker, c.slowdown, actor);
                break;
            case WorkerAction::ClearStraggler:
                control.inject_straggler(c.worker, 1.0, actor);
                break;
            }
        });
}

void JobRuntime::forget_asked(const JobEvent& e)
{
    std::erase_if(asked_resizes_, [&](const train::ResizeRequest& r) { return r.ticket == e.answers; });
}

train::Membership JobRuntime::membership_locked() const
{
    const scenario::ElasticScenarioSpec& e = scenario_.elastic;
    train::Membership m { id_, fold_.members(),
        trainer_ ? trainer_->control().servers() : start_servers_.value_or(scenario_.server_shards), 0, e.min_workers,
        e.max_workers };
    for (const train::ResizeRequest& asked : asked_resizes_)
        m.apply(asked);
    return m;
}

std::optional<ElasticJob::Holdings> JobRuntime::holdings() const
{
    std::lock_guard lock(mutex_);
    if (resizes_in_flight_locked() > 0)
        return std::nullopt;
    return Holdings { fold_.members(), membership_locked().members };
}

train::Membership JobRuntime::membership() const
{
    std::lock_guard lock(mutex_);
    return membership_locked();
}

void JobRuntime::resize(const train::ResizeRequest& resolved)
{
    train::ResizeRequest asked = resolved;
    {
        // On the record before it is asked: the trainer may apply it (and its event come
        // back) before apply_or_hold returns.
        std::lock_guard lock(mutex_);
        if (restart_ || restarting_) // its trainer is stopping or its next one starting (kill-restart)
            throw RefusedRequest("job-restarting",
                "job " + std::to_string(id_) + " is restarting from its checkpoint; resize it once it trains again");
        asked.ticket = ++last_ticket_;
        asked_resizes_.push_back(asked);
    }
    try {
        apply_or_hold(
            std::string(action_name(resolved.action)) + " by " + resolved.actor.line(),
            [asked](train::Trainer& t) { t.control().request_resize(asked); }, false, asked.ticket);
    } catch (...) {
        std::lock_guard lock(mutex_);
        std::erase_if(asked_resizes_, [&](const train::ResizeRequest& r) { return r.ticket == asked.ticket; });
        throw;
    }
}

void JobRuntime::restart(
    const std::vector<protocol::ResizeJob>& changes, const EventActor& actor, const std::string& reason)
{
    const scenario::CheckpointSpec& c = scenario_.checkpoint;
    if (c.every_iterations <= 0 && c.every_seconds <= 0)
        throw RefusedRequest("no-checkpoints",
            "job " + std::to_string(id_) + " keeps no checkpoints: it cannot be killed and restarted where it was");
    std::lock_guard lock(mutex_);
    if (!trainer_ || restart_ || restarting_ || status_.state != JobState::Running)
        throw RefusedRequest("job-not-running", "job " + std::to_string(id_) + " is not training now");
    train::Membership record = membership_locked();
    std::vector<train::ResizeRequest> resolved;
    for (const protocol::ResizeJob& change : changes) {
        resolved.push_back(
            train::resolve_resize(record, train::ResizeRequest { change.action, change.worker, actor, reason, {}, 0 }));
        resolved.back().ticket = ++last_ticket_;
        record.apply(resolved.back());
    }
    asked_resizes_.insert(asked_resizes_.end(), resolved.begin(), resolved.end());
    restart_ = Restart { std::move(resolved), actor, reason, std::chrono::steady_clock::now(), 0 };
    stop_ = true; // at its next barrier, with a checkpoint
}

void JobRuntime::requeue(const EventActor& actor, const std::string& reason)
{
    if (remote_ || ranks_ || scenario_.external)
        throw RefusedRequest("not-requeueable",
            "job " + std::to_string(id_) + " has remote workers or external ranks, which no stop outlives");
    const scenario::CheckpointSpec& c = scenario_.checkpoint;
    if (c.every_iterations <= 0 && c.every_seconds <= 0)
        throw RefusedRequest("no-checkpoints",
            "job " + std::to_string(id_) + " keeps no checkpoints: it cannot stop and go on where it was");
    std::lock_guard lock(mutex_);
    if (!trainer_ || restart_ || restarting_ || status_.state != JobState::Running)
        throw RefusedRequest("job-not-running", "job " + std::to_string(id_) + " is not training now");
    restart_ = Restart { {}, actor, reason, std::chrono::steady_clock::now(), 0, true };
    stop_ = true; // at its next barrier, with a checkpoint
}

std::optional<std::string> JobRuntime::requeue_reason() const
{
    std::lock_guard lock(mutex_);
    return requeued_;
}

bool JobRuntime::cancelled() const
{
    std::lock_guard lock(mutex_);
    return cancelled_;
}

std::optional<std::string> JobRuntime::take_requeue()
{
    std::lock_guard lock(mutex_);
    return std::exchange(requeued_, std::nullopt);
}

void JobRuntime::note(
    EventKind kind, std::optional<WorkerId> worker, const std::string& message, const EventActor& actor)
{
    hold_note(train::JobControl::Note { kind, message, actor, worker });
}

void JobRuntime::hold_note(const train::JobControl::Note& note)
{
    const EventKind kind = note.kind;
    const EventActor actor = note.actor;
    apply_or_hold(
        std::string(to_string(kind)) + " by " + actor.line(), [note](train::Trainer& t) { t.control().record(note); },
        true); // recorded before the job's end even if it is cancelled before its trainer runs
}

void JobRuntime::set_frozen(bool frozen, const EventActor& actor)
{
    if (!scenario_.elastic.present)
        throw RefusedRequest("not-elastic",
            "job " + std::to_string(id_)
                + " has no elastic section: no scheduler resizes it, so there is nothing to freeze");
    note(frozen ? EventKind::JobFrozen : EventKind::JobUnfrozen, std::nullopt,
        frozen ? "the elastic scheduler leaves its workers as they are (an operator's resize-job still applies)"
               : "the elastic scheduler may grow it and take its workers for newcomers again",
        actor);
    {
        std::lock_guard lock(mutex_);
        status_.elastic->frozen = frozen;
    }
    publish_status();
}

bool JobRuntime::frozen() const
{
    std::lock_guard lock(mutex_);
    return status_.elastic && status_.elastic->frozen;
}

void JobRuntime::fold(const JobEvent& e)
{
    // On the trainer's thread, at the safe point that applied the change.
    const bool resized = e.kind == EventKind::AddWorker || e.kind == EventKind::RemoveWorker
        || e.kind == EventKind::AddServer || e.kind == EventKind::RemoveServer || e.kind == EventKind::ResizeRefused;
    const bool pause = e.kind == EventKind::JobPaused || e.kind == EventKind::JobResumed;
    const bool renamed = e.kind == EventKind::PolicyChange || e.kind == EventKind::SyncModelChange;
    const bool stall = e.kind == EventKind::WorkerStalled || e.kind == EventKind::WorkerRecovered;
    bool paused = false;
    {
        std::lock_guard lock(mutex_);
        fold_.apply(e);
        paused = fold_.paused();
        status_.policy = fold_.policy();
        status_.sync_model = fold_.sync_model();
        // The ask it answers, exactly (a scenario's own resizes were never asked here).
        if (resized && e.answers != 0)
            forget_asked(e);
    }
    if (pause && shared_clock_) {
        if (paused)
            shared_clock_->suspend(id_);
        else
            shared_clock_->resume(id_);
    }
    if (pause)
        set_state(paused ? JobState::Paused : JobState::Running);
    else if (renamed)
        publish_status();
    if (stall) // shown while it lasts, not at the next barrier (which it holds up)
        publish_workers();
}

JobRuntime::Work JobRuntime::work() const
{
    std::lock_guard lock(mutex_);
    return work_;
}

int JobRuntime::resizes_in_flight() const
{
    std::lock_guard lock(mutex_);
    return resizes_in_flight_locked();
}

int JobRuntime::resizes_in_flight_locked() const
{
    if (restart_ || restarting_) // a kill-restart's changes: in flight through the restart
        return static_cast<int>(asked_resizes_.size());
    // An ask held for a trainer not started yet (asked while queued, waiting for workers or
    // loading) is not in flight: until its trainer takes it, the book and the pool give the
    // members the job starts with theirs and keep what the ask took (holdings). Else a pooled
    // job asked to resize while queued would never be given the processes its trainer waits
    // for, and the ask would never be answered.
    const auto held = std::count_if(held_.begin(), held_.end(), [](const HeldCommand& h) { return h.resize_ticket; });
    return static_cast<int>(asked_resizes_.size()) - static_cast<int>(held);
}

std::int64_t JobRuntime::member_since(WorkerId worker) const
{
    std::lock_guard lock(mutex_);
    return fold_.member_since(worker);
}

std::optional<double> JobRuntime::samples_per_s(std::int64_t from, std::int64_t to) const
{
    std::lock_guard lock(mutex_);
    const auto at = [&](std::int64_t iteration) {
        const auto it = std::lower_bound(
            pace_.begin(), pace_.end(), iteration, [](const Pace& p, std::int64_t i) { return p.iteration < i; });
        return it != pace_.end() && it->iteration == iteration ? it : pace_.end();
    };
    const auto p0 = at(from);
    const auto p1 = at(to);
    // Barriers one after another: a job that recorded every one between them.
    if (p0 == pace_.end() || p1 == pace_.end() || to <= from || p1 - p0 != to - from || !(p1->time_s > p0->time_s))
        return std::nullopt;
    double samples = 0;
    for (auto p = std::next(p0); p != std::next(p1); ++p)
        samples += static_cast<double>(p->samples);
    return samples / (p1->time_s - p0->time_s);
}

// Kept here and handed to every trainer the job starts (a recovered or restarted job's
// too), and to the running one at once: a trainer starts with every GPU and link its own.
void JobRuntime::set_gpu_sharing(const std::vector<int>& jobs_per_gpu)
{
    if (scenario_.mode == scenario::Mode::Real || jobs_per_gpu.size() != scenario_.workers.size())
        return;
    std::lock_guard lock(mutex_);
    const bool alone = std::all_of(jobs_per_gpu.begin(), jobs_per_gpu.end(), [](int k) { return k <= 1; });
    if (jobs_per_gpu == sharing_ || (sharing_.empty() && alone))
        return;
    sharing_ = jobs_per_gpu;
    if (trainer_)
        trainer_->control().set_gpu_sharing(sharing_);
}

void JobRuntime::set_link_contention(const std::vector<int>& jobs_per_link, const sched::ContentionModel& link)
{
    if (scenario_.mode == scenario::Mode::Real || jobs_per_link.size() != scenario_.workers.size())
        return;
    const train::JobControl::LinkContention contention { jobs_per_link, { link.a, link.b, link.eta } };
    std::lock_guard lock(mutex_);
    const bool alone = std::all_of(jobs_per_link.begin(), jobs_per_link.end(), [](int k) { return k <= 1; });
    if (contention_ == contention || (!contention_ && alone))
        return;
    contention_ = contention;
    if (trainer_)
        trainer_->control().set_link_contention(*contention_);
}

void JobRuntime::record_cluster(const std::string& cluster_message)
{
    std::lock_guard lock(mutex_);
    if (cluster_message == cluster_)
        return;
    cluster_ = cluster_message;
    if (trainer_)
        trainer_->control().record_cluster({ id_, cluster_ });
}

void JobRuntime::place_worker(WorkerId worker, std::int32_t gpu)
{
    {
        std::lock_guard lock(mutex_);
        if (worker < 0 || static_cast<std::size_t>(worker) >= status_.placement.size())
            return;
        status_.placement[static_cast<std::size_t>(worker)] = gpu;
    }
    publish_status();
}

} // namespace fulcrum::daemon
