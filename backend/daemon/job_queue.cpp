#include "daemon/job_queue.h"

#include "archive/job_files.h"
#include "archive/run_catalogue.h"
#include "common/error.h"
#include "daemon/daemon_options.h"
#include "daemon/event_log.h"
#include "daemon/job_runtime.h"
#include "db/run_reader.h"
#include "db/run_recorder.h"
#include "gpu/device_check.h"
#include "protocol/codec.h"
#include "scenario/job_footprint.h"
#include "scenario/scenario.h"
#include "serve/metrics.h"
#include "serve/thread_role.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

namespace fulcrum::daemon {

using archive::RunCatalogue;
using archive::ServerFolders;
using serve::Client;
using serve::DaemonMetrics;
using serve::StreamHub;

using namespace protocol;

namespace {

// The running jobs as the elastic scheduling sees them.
std::vector<ElasticJob*> as_elastic(const std::vector<JobRuntime*>& jobs)
{
    return { jobs.begin(), jobs.end() };
}

// The jobs fulcrumd's one virtual clock orders: virtual mode, every worker on the cluster
// (remote workers and external ranks keep their own time).
bool on_shared_clock(const JobRuntime& job)
{
    return job.scenario().mode == scenario::Mode::Virtual && !job.remote() && !job.ranks();
}

} // namespace

JobQueue::JobQueue(
    const DaemonOptions& options, const ServerFolders& folders, const RunCatalogue& catalogue, StreamHub& hub)
    : options_(options)
    , folders_(folders)
    , catalogue_(catalogue)
    , hub_(hub)
    , journal_(options.data_dir / "jobs")
    , links_(options.cluster, options.comm)
    , resources_({ options.resources.memory_bytes > 0 ? options.resources.memory_bytes : default_memory_budget(),
          options.resources.threads })
    , start_watch_(options.data_dir / "jobs")
    , cluster_(options.cluster, options.placement, 1, std::string(sched::policy_name(options.elastic.policy)))
    , elastic_(options.elastic, cluster_, worker_pool_)
{
    JobId next = std::max(catalogue_.first_free_job_id(), journal_.last_added() + 1);
    for (const JobJournal::Entry& e : journal_.entries())
        next = std::max(next, e.job + 1);
    next_job_ = next;
    elastic_.set_tenant_of([this](JobId id) {
        const auto it = jobs_.find(id);
        return it != jobs_.end() ? it->second->tenant() : std::string(protocol::kDefaultTenant);
    });
    publish_view(cluster_state()); // before any thread of its own: the cluster as it starts
    elastic_thread_ = std::thread([this] { // under static, for the pool (follow_pool)
        serve::take_role(serve::ThreadRole::scheduler);
        elastic_loop();
    });
}

JobQueue::~JobQueue()
{
    stop_all();
}

void JobQueue::post(std::function<void()> task)
{
    core_.post(std::move(task));
}

void JobQueue::wake_elastic()
{
    std::lock_guard lock(wake_mutex_); // a wait between its check and its sleep still wakes
    wake_elastic_.notify_all();
}

void JobQueue::stop_all()
{
    std::vector<JobRuntime*> running;
    core_.call([&] {
        stopping_ = true;
        elastic_stop_ = true;
        queued_.clear();
        for (auto& [id, job] : jobs_)
            running.push_back(job.get());
        publish_view();
    });
    wake_elastic();
    if (elastic_thread_.joinable())
        elastic_thread_.join();
    arrivals_stop_ = true;
    if (arrivals_thread_.joinable())
        arrivals_thread_.join();
    for (JobRuntime* job : running)
        job->cancel(EventActor::shutdown());
    for (JobRuntime* job : running)
        job->join();
}

bool JobQueue::elastic_on_shared_clock() const
{
    bool any = false;
    for (const JobRuntime* job : running_jobs()) {
        if (!elastic_.sizes(*job))
            continue;
        if (job->scenario().mode != scenario::Mode::Virtual)
            return false;
        any = true;
    }
    return any;
}

void JobQueue::elastic_loop()
{
    // Trials end and holders reach their early feedback between barriers: a tenth of a
    // second is finer than any barrier a person watches, and the work is a few statuses.
    constexpr auto kTick = std::chrono::milliseconds(100);
    // Virtual-mode jobs run far faster than wall time: the scheduler is then one more
    // participant of their shared clock (entered when such a job is placed), deciding every
    // tenth of a round of virtual time while no job goes past that instant, so that its
    // decisions fall at the same iterations on any machine.
    const double step = options_.elastic.round_s / 10;
    const auto at = [](double t) {
        return ElasticScheduling::Clock::time_point(
            std::chrono::duration_cast<ElasticScheduling::Clock::duration>(std::chrono::duration<double>(t)));
    };
    struct Wait { // where the scheduler waits next: an instant on the shared clock, or a tick
        bool stop = false;
        std::optional<double> at;
    };
    for (;;) {
        const Wait wait = core_.call([&] {
            if (stopping_)
                return Wait { true, std::nullopt };
            if (elastic_.active() && elastic_on_shared_clock()) {
                if (!scheduler_origin_) {
                    scheduler_origin_ = clock_.now();
                    scheduler_steps_ = 0;
                    elastic_.rebase(at(*scheduler_origin_));
                }
                // Counted, not summed: a round falls on its instant exactly.
                return Wait { false, *scheduler_origin_ + static_cast<double>(scheduler_steps_++) * step };
            }
            if (scheduler_origin_ || scheduler_entered_) { // back to wall time
                clock_.leave(kScheduler);
                scheduler_origin_.reset();
                scheduler_entered_ = false;
                elastic_.rebase(ElasticScheduling::Clock::now());
            }
            return Wait {};
        });
        if (wait.stop)
            break;
        ElasticScheduling::Clock::time_point now;
        if (wait.at) { // off the core: the jobs it waits for may end meanwhile
            clock_.advance(kScheduler, *wait.at, &elastic_stop_);
            now = at(*wait.at);
        } else {
            std::unique_lock lock(wake_mutex_);
            wake_elastic_.wait_for(lock, kTick, [this] { return stopping_ || scheduler_entered_; });
            now = ElasticScheduling::Clock::now();
        }
        core_.call([&] {
            if (stopping_ || (!wait.at && scheduler_entered_))
                return; // stopping, or a virtual job it sizes was placed: on its clock from now
            if (!elastic_.active()) { // static: no decisions; the pool follows an operator's resizes
                const std::uint64_t before = elastic_.changes();
                elastic_.follow_pool(as_elastic(running_jobs()));
                if (elastic_.changes() != before)
                    publish_cluster();
                return;
            }
            const std::uint64_t before = elastic_.changes();
            start_queued(); // a waiting job may now take workers of a job past early feedback
            elastic_.tick(as_elastic(running_jobs()), !waits_for_idle_gpus(), remaining_work(), now);
            if (elastic_.changes() != before)
                publish_cluster();
        });
    }
    core_.call([&] {
        if (scheduler_origin_ || scheduler_entered_)
            clock_.leave(kScheduler);
    });
}

std::vector<JobRuntime*> JobQueue::running_jobs() const
{
    std::vector<JobRuntime*> running;
    for (const auto& [id, job] : jobs_) {
        const JobState state = job->status().state;
        if ((state == JobState::Running || state == JobState::Paused)
            && std::find(queued_.begin(), queued_.end(), id) == queued_.end())
            running.push_back(job.get());
    }
    return running;
}

void JobQueue::set_cluster_policy(const SetClusterPolicy& policies, const EventActor& actor)
{
    constexpr const char* kSource = "set-cluster-policy";
    const std::optional<std::string>& placement = policies.placement;
    const std::optional<std::string>& elastic = policies.elastic;
    const std::optional<std::string>& comm = policies.comm;
    if (!placement && !elastic && !comm)
        throw InputError(kSource, "placement", "names no placement, elastic or communication (comm) policy to change");
    std::optional<sched::ElasticPolicy> policy;
    if (elastic) {
        policy = sched::parse_elastic_policy(*elastic);
        if (!policy)
            throw InputError(
                kSource, "elastic", "expected " + sched::elastic_policy_help() + ", got '" + *elastic + "'");
    }
    if (comm) { // checked before anything changes
        try {
            LinkSchedule::check_policy(*comm);
        } catch (const std::invalid_argument& e) {
            throw InputError(kSource, "comm", e.what());
        }
    }
    core_.call([&] {
        if (placement) {
            try {
                cluster_.set_placement(*placement);
            } catch (const std::invalid_argument& e) {
                throw InputError(kSource, "placement", e.what());
            }
        }
        if (comm)
            links_.set_policy(*comm);
        if (policy) {
            elastic_.set_policy(*policy, as_elastic(running_jobs()));
            cluster_.set_elastic_name(std::string(sched::policy_name(*policy)));
        }
        // Each running job's run store says when the rules it ran under changed, and who changed them.
        const std::string now = "the cluster's policies are now placement " + cluster_.placement() + ", elastic "
            + std::string(sched::policy_name(elastic_.policy())) + " and communication " + links_.policy();
        for (JobRuntime* job : running_jobs()) {
            try {
                job->note(EventKind::ClusterPolicy, std::nullopt, now, actor);
            } catch (const RefusedRequest&) {
                // it ended meanwhile
            }
        }
        start_queued(); // a new placement policy may place what the old one left waiting
        publish_cluster();
    });
}

void JobQueue::resize(const ResizeJob& r, const EventActor& actor)
{
    JobRuntime& runtime = job(r.job);
    core_.call([&] {
        const std::uint64_t before = elastic_.changes();
        elastic_.resize(runtime, r, actor, remaining_work());
        if (elastic_.changes() != before)
            publish_cluster();
    });
}

JobRuntime& JobQueue::job(JobId id) const
{
    const std::shared_ptr<const View> v = view();
    const auto it = v->jobs.find(id);
    if (it == v->jobs.end())
        throw RefusedRequest("unknown-job", "there is no job " + std::to_string(id));
    return *it->second;
}

std::optional<std::string> JobQueue::tenant_of(JobId id) const
{
    const std::shared_ptr<const View> view = view_.load();
    const auto it = view->jobs.find(id);
    if (it == view->jobs.end())
        return std::nullopt;
    return it->second->tenant();
}

std::vector<JobRuntime*> JobQueue::select(std::optional<JobId> job) const
{
    std::vector<JobRuntime*> selected;
    for (const auto& [id, j] : view()->jobs)
        if (!job || *job == id)
            selected.push_back(j);
    return selected;
}

std::vector<JobStatus> JobQueue::jobs() const
{
    std::vector<JobStatus> out;
    for (const auto& [id, j] : view()->jobs)
        out.push_back(j->published()->status);
    return out;
}

struct JobQueue::Submission {
    scenario::Scenario scenario;
    std::string tenant { protocol::kDefaultTenant }; // its submitter's, who owns it
};

std::string JobQueue::start_failure(const StartWatch::Record& record)
{
    constexpr int kStarts = 3; // a kill -9 or the OOM killer may fall in a start by chance
    if (record.crashed)
        return "fulcrumd crashed (a fatal signal) while starting this job; it is not started again, lest it crash "
               "fulcrumd at every restart: see fulcrumd's log, then submit it again";
    if (record.starts >= kStarts)
        return "fulcrumd stopped " + std::to_string(record.starts)
            + " times while starting this job (killed, or out of memory); it is not started again: see fulcrumd's "
              "log and --memory-budget, then submit it again";
    return {};
}

const PathPolicy& JobQueue::paths_of(JobJournal::Origin origin) const
{
    if (origin == JobJournal::Origin::Local)
        return local_paths_;
    return folders_;
}

JobQueue::Submission JobQueue::check_submission(
    const std::string& scenario_json, const std::string& source, Origin origin, const std::string& tenant) const
{
    // A client's path fields are confined as they are read; the local operator's file names any.
    scenario::Scenario s = scenario::parse_scenario(
        scenario_json, source, origin == Origin::Client ? static_cast<const PathPolicy&>(folders_) : paths_as_given());
    gpu::check_worker_devices(s.workers, source);
    const scenario::JobFootprint needs = footprint_of(s);
    if (const ResourceBook::Refusal refused = resources_.impossible(needs); !refused.why.empty())
        throw InputError(source, refused.field, refused.why);
    GpuDemand demand = demand_of(s, options_.cluster);
    if (s.elastic.present && s.elastic.initial_workers > 0 && demand.workers == static_cast<int>(s.workers.size()))
        demand.workers = s.elastic.initial_workers; // an elastic job of local workers asks for its initial members
    if (const std::string why = cluster_.impossible(demand); !why.empty())
        throw InputError(source,
            s.placement_memory_gb && demand.memory_gb > options_.cluster.gpu_memory_gb ? "placement.memory_gb"
                                                                                       : "workers",
            why);
    // A tenant that does not borrow: its quota must hold the job's start (elastic: its minimum).
    const sched::TenantQuota quota = options_.cluster.tenants.of(tenant);
    const bool sized = s.elastic.present && !s.external && options_.elastic.policy != sched::ElasticPolicy::StaticFifo;
    const int least
        = sized ? std::min(demand.workers, s.elastic.min_workers) + (demand.servers > 0 ? 1 : 0) : demand.gpus();
    if (options_.cluster.tenants.active() && !quota.borrow && least > quota.gpus)
        throw InputError(source, "workers",
            "needs " + std::to_string(least) + " GPUs to start; tenant " + tenant + "'s quota is "
                + std::to_string(quota.gpus) + " GPUs and it does not borrow (the cluster file's tenants section)");
    return Submission { std::move(s), tenant };
}

JobId JobQueue::journal_job(const std::string& scenario_json, Origin origin, const std::string& tenant)
{
    if (stopping_)
        throw RefusedRequest("shutting-down", "fulcrumd is shutting down");
    const JobId id = next_job_++;
    if (id > archive::kMaxJobId) // a job's files could not be named, nor found again at a restart
        throw RefusedRequest("job-ids-exhausted",
            "fulcrumd has given every job id up to " + std::to_string(archive::kMaxJobId)
                + "; start it with a new data folder");
    // On disk before the submission is answered: a crash from here on loses no job.
    journal_.add(
        id, origin == Origin::Local ? JobJournal::Origin::Local : JobJournal::Origin::Client, tenant, scenario_json);
    return id;
}

JobRuntime& JobQueue::add_job(JobId id, Submission submission)
{
    if (stopping_) {
        journal_.remove(id);
        throw RefusedRequest("shutting-down", "fulcrumd is shutting down");
    }
    return table_job(id, std::move(submission));
}

JobRuntime& JobQueue::table_job(JobId id, Submission submission)
{
    if (!submission.scenario.worker_timeout_s)
        submission.scenario.worker_timeout_s = options_.worker_timeout_s;
    auto runtime = std::make_unique<JobRuntime>(id, std::move(submission.tenant), std::move(submission.scenario),
        catalogue_.job_store(id), folders_, hub_, [this](JobId done) { on_job_done(done); });
    runtime->use_shared_clock(&clock_);
    runtime->use_link_schedule(&links_);
    runtime->use_data_cache(&data_);
    runtime->use_start_watch(&start_watch_);
    runtime->set_niceness(options_.job_niceness);
    if (on_shared_clock(*runtime)) // a recovered workload's job that had not arrived is queued now
        runtime->set_daemon_arrival(clock_.now());
    JobRuntime& job = *runtime;
    jobs_[id] = std::move(runtime);
    publish_view(); // before its first event or status reaches a client, who may name it next
    return job;
}

std::string JobQueue::queued_message(const JobRuntime& job) const
{
    return placement_.asks(job, queued_.size());
}

JobId JobQueue::submit(
    const std::string& scenario_json, const std::string& source, Origin origin, const std::string& tenant)
{
    Submission checked = check_submission(scenario_json, source, origin, tenant);
    const JobId id = journal_job(scenario_json, origin, tenant);
    return core_.call([&] {
        JobRuntime& runtime = add_job(id, std::move(checked));
        runtime.scheduler_event(EventKind::JobQueued, "submitted: " + queued_message(runtime));
        queued_.push_back(runtime.id());
        start_queued();
        publish_cluster(); // the queue changed, whether or not the job was placed
        return runtime.id();
    });
}

std::vector<JobStatus> JobQueue::submit_workload(
    const std::vector<SubmitWorkload::Arrival>& jobs, const std::string& source, const std::string& tenant)
{
    if (jobs.empty())
        throw InputError(source, "jobs", "a workload needs at least one job");
    std::vector<Submission> checked;
    checked.reserve(jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        const std::string at = "jobs[" + std::to_string(i) + "]";
        try {
            checked.push_back(check_submission(jobs[i].scenario_json, source, Origin::Client, tenant));
        } catch (const OutsidePath& e) {
            throw OutsidePath(source, at + ".scenario." + e.field(), e.reason());
        } catch (const InputError& e) {
            throw InputError(source, at + ".scenario." + e.field(), e.reason());
        }
        const scenario::Scenario& s = checked.back().scenario;
        if (s.mode != scenario::Mode::Virtual)
            throw InputError(source, at + ".scenario.mode",
                "a workload's jobs arrive on fulcrumd's virtual clock: expected \"virtual\", not \""
                    + std::string(scenario::to_string(s.mode)) + "\"");
        if (s.external || std::any_of(s.workers.begin(), s.workers.end(), [](const auto& w) { return w.remote; }))
            throw InputError(source, at + ".scenario.workers",
                "a workload's jobs run on the cluster's GPUs: remote workers and external ranks keep their own "
                "clocks");
        if (!(jobs[i].arrival_s >= 0 && std::isfinite(jobs[i].arrival_s)))
            throw InputError(source, at + ".arrival_s", "expected seconds from the submission, 0 or more");
    }
    std::vector<JobId> ids; // all or none: a refusal takes back the entries written
    ids.reserve(jobs.size());
    const auto take_back = [&] {
        for (const JobId id : ids)
            journal_.remove(id);
    };
    try {
        for (const SubmitWorkload::Arrival& a : jobs)
            ids.push_back(journal_job(a.scenario_json, Origin::Client, tenant));
    } catch (...) {
        take_back();
        throw;
    }
    return core_.call([&] {
        if (stopping_) {
            take_back();
            throw RefusedRequest("shutting-down", "fulcrumd is shutting down");
        }
        std::vector<SharedVirtualClock::Arrival> arrivals;
        std::vector<JobRuntime*> added;
        for (std::size_t i = 0; i < jobs.size(); ++i) {
            JobRuntime& job = add_job(ids[i], std::move(checked[i]));
            arrivals.push_back({ job.id(), jobs[i].arrival_s });
            added.push_back(&job);
            arriving_.insert(job.id());
        }
        const double origin = clock_.expect(arrivals);
        std::vector<JobStatus> statuses;
        for (std::size_t i = 0; i < added.size(); ++i) {
            const double at = origin + jobs[i].arrival_s;
            added[i]->set_daemon_arrival(at);
            std::ostringstream when;
            when << "job " << i + 1 << " of a workload of " << jobs.size() << ": arrives at t=" << at
                 << " s on fulcrumd's virtual clock (now " << origin << " s)";
            added[i]->scheduler_event(EventKind::JobArriving, when.str());
            statuses.push_back(added[i]->status());
        }
        if (!arrivals_thread_.joinable())
            arrivals_thread_ = std::thread([this] {
                serve::take_role(serve::ThreadRole::scheduler);
                arrivals_loop();
            });
        publish_cluster();
        return statuses;
    });
}

void JobQueue::arrivals_loop()
{
    while (const std::optional<JobId> id = clock_.next_arrival(&arrivals_stop_)) {
        const bool go_on = core_.call([&] {
            if (stopping_)
                return false;
            if (arriving_.erase(*id) == 0) { // cancelled while it was due
                clock_.leave(*id);
                return true;
            }
            JobRuntime& job = *jobs_.at(*id);
            std::ostringstream arrived;
            arrived << "arrived at t=" << clock_.now() << " s on fulcrumd's virtual clock: " << queued_message(job);
            job.scheduler_event(EventKind::JobQueued, arrived.str());
            queued_.push_back(*id);
            start_queued();
            // Left waiting in the queue, it holds no one up until it is placed.
            if (std::find(queued_.begin(), queued_.end(), *id) != queued_.end())
                clock_.leave(*id);
            publish_cluster();
            return true;
        });
        if (!go_on)
            break;
    }
}

void JobQueue::cancel(JobId id, const EventActor& actor)
{
    JobRuntime& runtime = job(id);
    core_.call([&] {
        if (arriving_.erase(id) > 0) { // a workload's job that has not arrived
            clock_.leave(id);
            runtime.cancel_queued(actor);
            journal_.remove(id);
            publish_cluster();
            return;
        }
        if (const auto it = std::find(queued_.begin(), queued_.end(), id); it != queued_.end()) {
            queued_.erase(it);
            runtime.cancel_queued(actor); // it held no GPUs: nothing behind it fits any better now
            journal_.remove(id);
            publish_cluster();
            return;
        }
        if (runtime.resumable()) { // interrupted, waiting for an operator's resume-job
            runtime.cancel_queued(actor);
            journal_.remove(id);
            return;
        }
        runtime.cancel(actor);
    });
}

void JobQueue::resume(JobId id, const EventActor& actor)
{
    JobRuntime& runtime = job(id);
    if (!runtime.resumable()) {
        runtime.resume(actor);
        return;
    }
    core_.call([&] { // an interrupted job goes on from its checkpoint
        queue_resumed(id, actor);
        start_queued();
        publish_cluster();
    });
}

std::vector<JobQueue::Recovered> JobQueue::recover()
{
    std::vector<Recovered> found;
    std::vector<std::string> problems;
    const std::vector<JobJournal::Entry> entries = journal_.entries(&problems);
    found.reserve(problems.size() + entries.size());
    for (const std::string& p : problems)
        found.push_back({ 0, p });
    for (const JobJournal::Entry& entry : entries) {
        const JobId id = entry.job;
        const std::filesystem::path path = catalogue_.job_store(id);
        const std::string store_name = RunCatalogue::job_store_name(id);
        std::optional<run::RunOptions::Resume> resume;
        std::optional<RunId> abandoned; // a run without a checkpoint: the job starts again in a new one
        if (std::filesystem::exists(path)) {
            try {
                db::RunReader reader(path);
                const auto runs = reader.runs();
                if (!runs.empty()) {
                    const db::RunInfo& last = runs.back(); // the job's run (a restarted job's newest)
                    if (last.status != "running" && last.status != "interrupted") {
                        journal_.remove(id); // it ended; only the journal did not know yet
                        continue;
                    }
                    if (auto checkpoint = reader.job_checkpoint(last.id, id))
                        resume = run::RunOptions::Resume { last.id, std::move(*checkpoint), {},
                            train::JobControl::LinkModel { options_.cluster.network.a, options_.cluster.network.b,
                                options_.cluster.network.eta } };
                    else
                        abandoned = last.id;
                }
            } catch (const std::exception& e) {
                found.push_back(
                    { id, "its run store cannot be read (" + folders_.for_clients(e.what()) + "); not recovered" });
                continue;
            }
        }
        if (abandoned) {
            try {
                db::RunRecorder(path).end_run(*abandoned, "interrupted");
            } catch (const std::exception& e) {
                found.push_back(
                    { id, "its run store cannot be written (" + folders_.for_clients(e.what()) + "); not recovered" });
                continue;
            }
        }
        scenario::Scenario s;
        try {
            s = scenario::parse_scenario(entry.scenario_json, store_name, paths_of(entry.origin));
            gpu::check_worker_devices(s.workers, store_name); // a GPU this fulcrumd's machine no longer has
        } catch (const std::exception& e) {
            found.push_back(
                { id, "its scenario no longer loads (" + folders_.for_clients(e.what()) + "); not recovered" });
            continue;
        }
        const bool external = s.external.has_value();
        if (external && abandoned) {
            try {
                db::RunRecorder(path).end_run(*abandoned, "lost");
            } catch (const std::exception&) {
                // recorded as interrupted above; the job is reported lost all the same
            }
        }
        if (!s.worker_timeout_s)
            s.worker_timeout_s = options_.worker_timeout_s;
        core_.call([&] {
            JobRuntime& job = table_job(id, Submission { std::move(s), entry.tenant });
            if (external) { // its ranks' connections closed with the fulcrumd that ran it
                journal_.remove(id);
                job.set_lost("an external job's ranks cannot outlive the fulcrumd they reported to; its rows are kept");
                found.push_back({ id, "an external job: recorded as lost (its ranks went with fulcrumd's restart)" });
                return;
            }
            if (const std::string why = start_failure(start_watch_.record(id)); !why.empty()) {
                journal_.remove(id); // never started again: a crash loop under Restart=on-failure
                start_watch_.forget(id);
                job.set_failed(why);
                found.push_back({ id, why });
                return;
            }
            const bool automatic = options_.resume == DaemonOptions::Resume::Automatic;
            if (!resume && abandoned && !automatic) { // resume_jobs: manual holds a job that ran
                job.interrupted(std::nullopt,
                    "interrupted when fulcrumd stopped, before its first checkpoint: resume-job starts it again from "
                    "the beginning (rows it recorded before stay in its run store)");
                found.push_back({ id, job.status().message });
                return;
            }
            if (!resume) {
                job.scheduler_event(EventKind::JobQueued,
                    "queued again from the beginning after fulcrumd's restart: it had no checkpoint yet "
                    "(or its policy keeps none); rows it recorded before stay in its run store");
                queued_.push_back(id);
                found.push_back({ id, "queued again from the beginning (no checkpoint)" });
                return;
            }
            resume->paths = &paths_of(entry.origin);
            const std::int64_t at = resume->checkpoint.iteration;
            job.interrupted(std::move(*resume),
                "interrupted when fulcrumd stopped; its checkpoint is at iteration " + std::to_string(at)
                    + (automatic ? ": resuming" : ": resume-job goes on from it"));
            found.push_back({ id, job.status().message });
            if (automatic)
                queue_resumed(id, EventActor::system("restart"));
        });
    }
    core_.call([&] {
        start_queued();
        publish_cluster();
    });
    return found;
}

void JobQueue::queue_resumed(JobId id, const EventActor& actor)
{
    JobRuntime& job = *jobs_.at(id);
    if (std::find(queued_.begin(), queued_.end(), id) != queued_.end())
        return;
    job.scheduler_event(EventKind::JobQueued,
        std::string(job.has_checkpoint() ? "resuming from its checkpoint" : "starting again from the beginning") + " ("
            + actor.line() + ")");
    queued_.push_back(id);
}

double JobQueue::remaining_s(JobId id) const
{
    const auto it = jobs_.find(id);
    if (it == jobs_.end())
        return 0;
    return remaining_run_s(it->second->status());
}

bool JobQueue::waits_for_idle_gpus() const
{
    return placement_.waits_for_idle_gpus(queued_jobs(), as_elastic(running_jobs()));
}

std::vector<ElasticJob*> JobQueue::queued_jobs() const
{
    std::vector<ElasticJob*> queued;
    for (const JobId id : queued_)
        queued.push_back(jobs_.at(id).get());
    return queued;
}

// Places what fits now (PlacementPass), then starts it: every job placed in one pass learns
// what it shares before its first barrier, and the virtual-mode ones enter the shared clock
// together.
void JobQueue::start_queued()
{
    if (stopping_)
        return; // a resume-job or a policy change after stop_all took its list starts nothing
    PlacementPass::Outcome pass = placement_.run(queued_jobs(), as_elastic(running_jobs()), remaining_work());
    // The processes the pass held for the pooled jobs it placed are theirs until they started,
    // however that ends (a start that failed or threw, or took fewer).
    const std::unique_ptr<WorkerPool, void (*)(WorkerPool*)> drop_holds(
        &worker_pool_, [](WorkerPool* pool) { pool->drop_holds(); });
    for (const PlacementPass::Requeue& r : pass.requeue) {
        try {
            jobs_.at(r.job)->requeue(
                EventActor::scheduler(std::string(sched::policy_name(elastic_.policy()))), r.reason);
        } catch (const RefusedRequest&) {
            // no checkpoints, remote workers, or it is ending anyway: it keeps its GPUs to its end
        }
    }
    for (const PlacementPass::Waits& w : pass.waiting)
        jobs_.at(w.job->id())->set_waiting(w.why);
    struct Placed {
        JobRuntime* job;
        PlacementPass::Placed placed;
    };
    std::vector<Placed> placed;
    for (PlacementPass::Placed& p : pass.placed) {
        JobRuntime* job = jobs_.at(p.job->id()).get();
        queued_.erase(std::find(queued_.begin(), queued_.end(), job->id()));
        ++placements_;
        placed.push_back({ job, std::move(p) });
    }
    if (placed.empty())
        return;
    // Every job placed in this pass knows what it shares before its first barrier, so that a
    // job recovered beside others records the same rows as before the crash.
    const ClusterState state = cluster_state();
    const auto on_server = jobs_on_servers(state);
    // ... and the virtual-mode ones start together on the daemon's one clock: each holds the
    // others from now until its first barrier.
    bool sized_virtual = false;
    for (Placed& p : placed)
        if (on_shared_clock(*p.job)) {
            p.job->set_daemon_start(clock_.enter(p.job->id()));
            sized_virtual = sized_virtual || elastic_.sizes(*p.job);
        }
    // The elastic scheduler decides on that clock too: it holds the jobs from their start
    // until its thread takes its place there.
    if (sized_virtual && !scheduler_entered_ && !scheduler_origin_) {
        clock_.enter(kScheduler);
        scheduler_entered_ = true;
        wake_elastic();
    }
    for (Placed& p : placed) {
        send_shares(*p.job, p.placed.placement, state, on_server);
        if (!p.job->start(std::move(p.placed.placement), p.placed.message, p.placed.size, p.placed.server_gpus)) {
            if (on_shared_clock(*p.job))
                clock_.leave(p.job->id());
            release_job(p.job->id());
            continue;
        }
        elastic_.started(*p.job);
    }
    publish_cluster();
}

std::vector<std::set<JobId>> JobQueue::jobs_on_servers(const ClusterState& state)
{
    std::vector<std::set<JobId>> on_server(static_cast<std::size_t>(std::max(0, state.servers)));
    for (const GpuUsage& g : state.gpus)
        if (g.server >= 0 && static_cast<std::size_t>(g.server) < on_server.size())
            on_server[static_cast<std::size_t>(g.server)].insert(g.jobs.begin(), g.jobs.end());
    return on_server;
}

JobQueue::ClusterShares JobQueue::shares_of(const std::vector<std::int32_t>& placement, const ClusterState& state,
    const std::vector<std::set<JobId>>& on_server)
{
    // The parameter servers run in fulcrumd: every push and pull crosses the worker's server link.
    ClusterShares shares { std::vector<int>(placement.size(), 1), std::vector<int>(placement.size(), 1) };
    for (std::size_t w = 0; w < placement.size(); ++w) {
        if (placement[w] < 0 || static_cast<std::size_t>(placement[w]) >= state.gpus.size())
            continue;
        const GpuUsage& g = state.gpus[static_cast<std::size_t>(placement[w])];
        shares.gpu[w] = std::max<int>(1, static_cast<int>(g.jobs.size()));
        if (g.server >= 0 && static_cast<std::size_t>(g.server) < on_server.size())
            shares.link[w] = std::max<int>(1, static_cast<int>(on_server[static_cast<std::size_t>(g.server)].size()));
    }
    return shares;
}

void JobQueue::send_shares(JobRuntime& job, const std::vector<std::int32_t>& placement, const ClusterState& state,
    const std::vector<std::set<JobId>>& on_server) const
{
    ClusterShares shares = shares_of(placement, state, on_server);
    job.set_gpu_sharing(shares.gpu);
    if (links_.scheduling() && job.scheduled_by_links())
        shares.link.assign(shares.link.size(), 1);
    job.set_link_contention(shares.link, options_.cluster.network);
}

void JobQueue::fill_metrics(DaemonMetrics& metrics) const
{
    const std::shared_ptr<const View> v = view();
    for (const auto& [id, job] : v->jobs) {
        const std::shared_ptr<const JobRuntime::Published> p = job->published();
        metrics.jobs.push_back({ p->status, p->workers->workers, p->rows ? std::optional(*p->rows) : std::nullopt });
    }
    metrics.queued_jobs = v->queued;
    metrics.placements = v->placements;
    metrics.pooled_idle = v->pooled_idle;
    metrics.pooled_assigned = v->pooled_assigned;
    metrics.memory_held_bytes = v->memory_held_bytes;
    metrics.memory_budget_bytes = v->memory_budget_bytes;
    metrics.threads_held = v->threads_held;
    metrics.threads_budget = v->threads_budget;
    metrics.data_sets_held = data_.sets_held();
}

RemainingWork JobQueue::remaining_work() const
{
    return [this](JobId id) { return remaining_s(id); };
}

ClusterState JobQueue::cluster_state() const
{
    ClusterState state = cluster_.state({ queued_.begin(), queued_.end() }, remaining_work());
    state.comm = links_.policy();
    for (const WorkerPool::Pooled& p : worker_pool_.workers())
        state.pool.push_back({ p.host, p.job.value_or(-1), p.worker, p.client->reach().tenant });
    for (GpuUsage& g : state.gpus)
        for (const JobId job : g.jobs)
            g.tenants.push_back(jobs_.contains(job) ? jobs_.at(job)->tenant() : std::string(protocol::kDefaultTenant));
    const sched::TenantQuotas& quotas = options_.cluster.tenants;
    if (!quotas.active())
        return state;
    std::map<std::string, TenantUsage> by_tenant;
    for (const auto& [name, quota] : quotas.named)
        by_tenant[name] = { name, quota.gpus, quota.borrow, quota.weight, true, 0, 0, 0, 0 };
    const auto row = [&](const std::string& tenant) -> TenantUsage& {
        auto [it, added] = by_tenant.try_emplace(tenant);
        if (added) {
            const sched::TenantQuota q = quotas.of(tenant);
            it->second = { tenant, q.gpus, q.borrow, q.weight, false, 0, 0, 0, 0 };
        }
        return it->second;
    };
    for (const GpuUsage& g : state.gpus)
        for (const std::string& tenant : g.tenants)
            row(tenant);
    for (const auto& [tenant, gpus] : elastic_.held(as_elastic(running_jobs())))
        row(tenant).held_gpus = gpus; // distinct GPUs, as the quotas count them
    for (JobRuntime* job : running_jobs())
        ++row(job->tenant()).running;
    for (const JobId id : queued_)
        ++row(jobs_.at(id)->tenant()).queued;
    for (auto& [name, t] : by_tenant) {
        t.borrowed_gpus = std::max(0, t.held_gpus - t.quota_gpus);
        state.tenants.push_back(t);
    }
    state.rigid_borrowers = std::string(sched::rigid_borrowers_name(quotas.rigid));
    return state;
}

void JobQueue::publish_cluster()
{
    const ClusterState state = cluster_state();
    // Every change of the cluster passes here: each live job learns how many jobs share
    // each of its workers' GPUs and server links.
    const auto on_server = jobs_on_servers(state);
    const ClusterUpdate update { state };
    // As its tenant is shown it, encoded once for the stores of each tenant's jobs.
    std::map<std::string, std::string> recorded;
    for (JobRuntime* job : running_jobs()) {
        send_shares(*job, job->status().placement, state, on_server);
        auto [it, added] = recorded.try_emplace(job->tenant());
        if (added)
            it->second = protocol::encode(
                ServerMessage { ClusterUpdate { access::shown_to(state, { job->tenant(), false }) } });
        job->record_cluster(it->second);
    }
    publish_view(state); // before the hub: a client told of the change reads it
    hub_.publish(update);
}

void JobQueue::publish_view(std::optional<ClusterState> cluster)
{
    auto v = std::make_shared<View>();
    for (const auto& [id, job] : jobs_)
        v->jobs.emplace(id, job.get());
    v->workers = remote_workers_;
    if (cluster)
        v->cluster = std::move(*cluster);
    else
        v->cluster = view()->cluster;
    v->queued = queued_.size();
    v->placements = placements_;
    v->pooled_idle = static_cast<std::size_t>(worker_pool_.idle());
    v->pooled_assigned = static_cast<std::size_t>(worker_pool_.size() - worker_pool_.idle());
    v->memory_held_bytes = resources_.held_bytes();
    v->memory_budget_bytes = resources_.budget().memory_bytes;
    v->threads_held = resources_.held_threads();
    v->threads_budget = resources_.budget().threads;
    view_.store(std::move(v));
}

ClusterState JobQueue::cluster() const
{
    return view()->cluster;
}

void JobQueue::on_job_done(JobId id)
{
    catalogue_.run_ended(catalogue_.job_store(id)); // its store's end is listed at once
    core_.call([&] {
        release_job(id);
        const auto it = jobs_.find(id);
        if (const std::optional<std::string> requeued = it == jobs_.end() ? std::nullopt : it->second->take_requeue();
            requeued && !stopping_) {
            // Queued again after this call, once the thread that runs this one has ended (it
            // leaves the shared clock after this call: placed again, the job enters it anew).
            post([this, id, why = *requeued] {
                if (stopping_)
                    return;
                JobRuntime& job = *jobs_.at(id);
                job.join();
                if (job.cancelled()) { // a cancel-job while it stopped: it is not queued again
                    job.cancel_queued(EventActor::system("cancel-job while it was being requeued"));
                    journal_.remove(id);
                    publish_cluster();
                    return;
                }
                for (WorkerId w = 0; w < job.workers(); ++w) // its GPUs went back with release_job
                    job.place_worker(w, -1);
                job.scheduler_event(EventKind::JobQueued, "requeued: " + why + "; " + queued_message(job));
                if (std::find(queued_.begin(), queued_.end(), id) == queued_.end())
                    queued_.push_front(id); // first in line, as fulcrum-sim puts it at its tenant's head
                start_queued();
                publish_cluster();
            });
        }
        if (!stopping_)
            start_queued();
        publish_cluster();
    });
}

void JobQueue::release_job(JobId id)
{
    if (const auto it = jobs_.find(id); it != jobs_.end()) {
        // Ended: nothing to recover (a requeued job, Queued, goes on from its checkpoint).
        if (const JobState state = it->second->status().state;
            state != JobState::Interrupted && state != JobState::Queued)
            journal_.remove(id);
        std::vector<int> gpus;
        for (const std::int32_t g : it->second->status().placement)
            if (g >= 0)
                gpus.push_back(g);
        // At the job's last iteration and run clock, where its end is: the console lists it
        // after job-finished, not at 0 s.
        const protocol::JobStatus ended = it->second->status();
        JobEvent released = job_event(EventKind::JobReleased, std::max<std::int64_t>(0, ended.iteration - 1),
            ended.time_s, cluster_.describe(gpus) + " free again", EventActor::scheduler({}, db::utc_timestamp()));
        released.job = id;
        publish_event(hub_, released);
    }
    if (const auto it = jobs_.find(id); it != jobs_.end())
        release_pooled_workers(*it->second);
    cluster_.release(id);
    resources_.release(id);
    elastic_.ended(id);
}

void JobQueue::release_pooled_workers(JobRuntime& job)
{
    for (const WorkerPool::Pooled& p : worker_pool_.assigned_to(job.id())) {
        if (job.remote())
            job.remote()->release(p.worker);
        worker_pool_.release(p.client->id());
        p.client->send(WorkerReleased {
            job.id(), p.worker, "job " + std::to_string(job.id()) + " " + std::string(to_string(job.status().state)) });
    }
}

WorkerAssignment JobQueue::join(const std::shared_ptr<Client>& client, const JoinJob& join, const EventActor& by)
{
    return core_.call([&] {
        if (const auto it = remote_workers_.find(client->id()); it != remote_workers_.end())
            throw RefusedRequest("already-joined",
                "this connection already computes for job " + std::to_string(it->second)
                    + "; one connection is one worker");
        if (worker_pool_.contains(client->id()))
            throw RefusedRequest(
                "already-joined", "this connection waits in fulcrumd's worker pool; one connection is one worker");
        JobRuntime& j = job(join.job);
        if (!j.remote() && !j.ranks())
            throw RefusedRequest("no-remote-slot",
                "job " + std::to_string(join.job)
                    + " has no remote worker slots (a scenario marks them \"remote\": true)");
        const std::string host = join.host.empty() ? client->name() : join.host;
        const WorkerId worker
            = j.ranks() ? j.ranks()->join(client, join.worker, host) : j.remote()->join(client, join.worker, host);
        remote_workers_[client->id()] = join.job;
        publish_view(); // its reports find the job from now
        try { // for post-mortems: which process on which host took which slot
            j.note(EventKind::WorkerJoined, worker,
                host + " joined as " + (j.ranks() ? "rank " : "worker ") + std::to_string(worker) + " ("
                    + client->name() + ")",
                by);
        } catch (const RefusedRequest&) {
            // the job ended meanwhile
        }
        if (!stopping_ && j.status().state == JobState::Queued && elastic_.fed_by_pool(j))
            start_queued(); // a pooled job counts the workers started by hand for its slots as its own
        return WorkerAssignment { join.job, worker, j.scenario().json, 0 };
    });
}

void JobQueue::report(const std::shared_ptr<Client>& client, const ReportIteration& report)
{
    std::shared_ptr<RankPool> ranks;
    {
        const std::shared_ptr<const View> v = view();
        const auto it = v->workers.find(client->id());
        if (it == v->workers.end() || it->second != report.job)
            throw RefusedRequest("not-joined",
                "this connection has not joined job " + std::to_string(report.job) + "; send join-job first");
        if (const auto job_it = v->jobs.find(it->second); job_it != v->jobs.end())
            ranks = job_it->second->ranks();
    }
    if (!ranks)
        throw RefusedRequest("not-external",
            "job " + std::to_string(report.job) + " is not an external job; its workers answer tasks, not reports");
    ranks->report(client, report);
}

void JobQueue::join_pool(const std::shared_ptr<Client>& client, const JoinPool& join)
{
    core_.call([&] {
        if (const auto it = remote_workers_.find(client->id()); it != remote_workers_.end())
            throw RefusedRequest("already-joined",
                "this connection already computes for job " + std::to_string(it->second)
                    + "; one connection is one worker");
        worker_pool_.join(client, join.host.empty() ? client->name() : join.host);
        if (!stopping_)
            start_queued(); // a job may wait for pooled workers
        publish_cluster();
    });
}

void JobQueue::client_left(const Client& client)
{
    std::shared_ptr<RemotePool> pool;
    std::shared_ptr<RankPool> ranks;
    core_.call([&] {
        if (const auto it = remote_workers_.find(client.id()); it != remote_workers_.end()) {
            if (const auto job_it = jobs_.find(it->second); job_it != jobs_.end()) {
                pool = job_it->second->remote();
                ranks = job_it->second->ranks();
            }
            remote_workers_.erase(it);
            publish_view();
        }
        if (const auto left = worker_pool_.leave(client.id())) {
            if (left->job)
                if (const auto job_it = jobs_.find(*left->job); job_it != jobs_.end())
                    pool = job_it->second->remote(); // lost: the scheduler gives its slot another
            publish_cluster();
        }
    });
    if (ranks)
        ranks->leave(client); // the rank is lost: the job ends at its barrier, the others are told
    if (pool)
        pool->leave(client); // a task in flight is lost: the trainer drops the worker from its barrier
}

} // namespace fulcrum::daemon
