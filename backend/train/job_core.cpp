#include "train/job_core.h"

#include "balance/policy_registry.h"
#include "common/error.h"

#include <sstream>
#include <utility>

namespace fulcrum::train {

namespace {

// What a running job can switch to: the free-running models need an unchanging worker set;
// bsp and backup run any job.
void check_switchable(const TrainerConfig& config, const sync::SyncSpec& spec)
{
    if (sync::closes_every_iteration(spec.type))
        return;
    if (config.elastic.enabled())
        throw RefusedRequest("sync-model-not-switchable",
            "this job is elastic (Elastic PS resizes between barriers); " + sync::describe(spec)
                + " has no barrier to resize at");
}

} // namespace

JobCore::JobCore(TrainerConfig c, std::unique_ptr<balance::BatchSizeManager> m, TrainingObserver& o)
    : job_(std::move(c))
    , manager_(std::move(m))
    , observer_(o)
    , pacer_(config().mode == ClockMode::Paced ? config().pace : 0.0)
    , sync_model_(config().sync)
{
    const int n = static_cast<int>(job_.workers.size());
    if (!manager_)
        manager_ = balance::make_manager({}, n, config().total_batch, job_.batch_limits());
    if (manager_->workers() != n)
        throw std::invalid_argument("the batch-size manager was made for a different number of workers");
    manager_->set_batch_limits(job_.batch_limits()); // GPU workers' x_o, measured on their devices
    sync::validate(config().sync, n);
    slowdown_.assign(job_.workers.size(), 1.0);
    sharing_.assign(job_.workers.size(), 1.0);
    contention_.assign(job_.workers.size(), 1.0);
    control_ = std::make_unique<JobControl>(
        *manager_, n, sync_model_,
        [&config = job_.config](const sync::SyncSpec& spec) { check_switchable(config, spec); }, job_.release.get());
    mail_ = std::make_unique<SafePointMail>(config().job, *control_, *manager_, observer_);
}

void JobCore::replace_control(std::unique_ptr<JobControl> replacement)
{
    control_ = std::move(replacement);
    mail_ = std::make_unique<SafePointMail>(config().job, *control_, *manager_, observer_);
}

void JobCore::emit(std::int64_t at, double now, EventKind kind, std::string message, const EventActor& actor,
    std::optional<WorkerId> worker)
{
    mail_->emit(at, now, kind, std::move(message), actor, worker);
}

void JobCore::hold_if_paused(std::int64_t at, double now, const std::atomic<bool>* stop, const std::string& where)
{
    mail_->hold_if_paused(at, now, stop, "held " + where, [this, now](double held) {
        pacer_.shift(held);
        return now;
    });
}

double JobCore::link_stretch(int k, const JobControl::LinkModel& link) const
{
    // Wang et al. eq. 5 for this job's model: k transfers of M bytes over one link take
    // a + k·b·M + (k−1)·η·M, one alone a + b·M.
    const auto m = static_cast<double>(job_.model_bytes);
    return (link.a + (k * link.b + (k - 1) * link.eta) * m) / (link.a + link.b * m);
}

void JobCore::contend_links(std::int64_t at, double now, const JobControl::LinkContention& link)
{
    for (std::size_t i = 0; i < link.jobs.size() && i < contention_.size(); ++i) {
        const int k = link.jobs[i];
        const double stretch = link_stretch(k, link.link);
        if (contention_[i] == stretch)
            continue;
        contention_[i] = stretch;
        std::ostringstream text;
        text.precision(3);
        if (k > 1)
            text << "worker " << i << "'s pushes and pulls cross its server's link with " << k - 1
                 << (k == 2 ? " other live job's" : " other live jobs'") << " (eq. 5): they take " << stretch
                 << "x as long";
        else
            text << "worker " << i << "'s server link carries only its own job's pushes and pulls again";
        emit(at, now, k > 1 ? EventKind::LinkContended : EventKind::LinkFree, text.str(), EventActor::scheduler({}),
            static_cast<WorkerId>(i));
    }
}

void JobCore::share_gpus(std::int64_t at, double now, const JobControl::GpuSharing& asked)
{
    const std::vector<int>& shared = asked.jobs_per_gpu;
    for (std::size_t i = 0; i < shared.size() && i < sharing_.size(); ++i) {
        const auto k = static_cast<double>(shared[i]);
        if (sharing_[i] == k)
            continue;
        sharing_[i] = k;
        emit(at, now, k > 1 ? EventKind::GpuShared : EventKind::GpuExclusive,
            k > 1 ? "worker " + std::to_string(i) + "'s GPU is time-shared by " + std::to_string(shared[i])
                    + " live jobs: its batches take " + std::to_string(shared[i]) + "x longer"
                  : "worker " + std::to_string(i) + " has its GPU to itself again",
            EventActor::scheduler({}), static_cast<WorkerId>(i));
    }
}

void JobCore::apply_slowdowns(std::int64_t at, double now)
{
    if (std::optional<JobControl::RecordedShares> recorded = control_->take_one<JobControl::RecordedShares>()) {
        // Already recorded before the checkpoint: in effect again without a new event.
        for (std::size_t i = 0; i < sharing_.size(); ++i)
            sharing_[i] = static_cast<double>(recorded->gpu.jobs_per_gpu.at(i));
        if (recorded->link)
            for (std::size_t i = 0; i < contention_.size(); ++i)
                contention_[i] = link_stretch(recorded->link->jobs.at(i), recorded->link->link);
        replaying_ = std::move(recorded);
        replayed_ = 0;
    }
    if (replaying_ && now < replaying_->until_s) {
        // The live cluster's messages wait in the mailbox: the newest applies once the rows
        // the first attempt recorded are recorded again.
        const std::vector<JobControl::RecordedShares::Change>& changes = replaying_->changes;
        const auto due = [&](const JobControl::RecordedShares::Change& c) {
            return c.time_s < now || (c.time_s == now && c.at <= at);
        };
        for (; replayed_ < changes.size() && due(changes[replayed_]); ++replayed_) {
            if (changes[replayed_].link)
                contend_links(at, now, *changes[replayed_].link);
            if (changes[replayed_].gpu)
                share_gpus(at, now, *changes[replayed_].gpu);
        }
    } else {
        std::optional<JobControl::LinkContention> link = control_->take_one<JobControl::LinkContention>();
        std::optional<JobControl::GpuSharing> gpu = control_->take_one<JobControl::GpuSharing>();
        if (replaying_) { // its end: no live cluster told (a resume outside fulcrumd) is one alone
            const std::size_t n = sharing_.size();
            if (!gpu)
                gpu = JobControl::GpuSharing { std::vector<int>(n, 1) };
            if (!link && replaying_->link)
                link = JobControl::LinkContention { std::vector<int>(n, 1), replaying_->link->link };
            replaying_.reset();
        }
        if (link)
            contend_links(at, now, *link);
        if (gpu)
            share_gpus(at, now, *gpu);
    }
    for (const JobControl::Slowdown& d : control_->take<JobControl::Slowdown>()) {
        double& factor = slowdown_[static_cast<std::size_t>(d.worker)];
        if (factor == d.factor)
            continue;
        factor = d.factor;
        emit(at, now, d.factor == 1 ? EventKind::StragglerCleared : EventKind::StragglerInjected,
            d.factor == 1
                ? "worker " + std::to_string(d.worker) + " runs at its own speed again"
                : "worker " + std::to_string(d.worker) + "'s batches take " + std::to_string(d.factor) + "x longer",
            d.actor, d.worker);
    }
}

std::optional<sync::SyncSpec> JobCore::switch_sync_model(std::int64_t at, double now)
{
    const std::optional<JobControl::SyncChange> change = control_->take_one<JobControl::SyncChange>();
    if (!change)
        return std::nullopt;
    sync::SyncSpec before = std::exchange(sync_model_, change->spec);
    control_->sync_in_effect(sync_model_);
    emit(at, now, EventKind::SyncModelChange, sync::describe(before) + " -> " + sync::describe(sync_model_),
        change->actor);
    return before;
}

void JobCore::forward_manager_events(std::int64_t at, double now)
{
    mail_->forward_manager_events(at, now);
}

void JobCore::record_notes(std::int64_t at, double now)
{
    mail_->record_notes(at, now);
}

} // namespace fulcrum::train

namespace fulcrum::train {

void save_progress(StateWriter& out, const TrainingProgress& p)
{
    out.put(p.next);
    out.put(p.now);
    out.put(p.samples);
    out.put(p.train_loss);
    const EvaluationRecord& e = p.result.final_evaluation;
    out.put(e.iteration);
    for (const double v : { e.time_s, e.wall_s, e.epoch, e.train_loss, e.test_loss, e.test_accuracy })
        out.put(v);
    out.put(p.result.best_accuracy);
    out.put(p.result.target_time_s);
    out.put(p.result.target_updates);
    out.put(static_cast<std::uint64_t>(p.observations.size()));
    for (const balance::WorkerObservation& o : p.observations) {
        out.put(o.worker);
        out.put(o.batch_size);
        for (const double v : { o.compute_s, o.comm_s, o.cpu_share, o.memory_share, o.next_cpu_share,
                 o.next_memory_share, o.device_memory })
            out.put(v);
        out.put(o.batch_limit);
    }
}

void load_progress(StateReader& in, TrainingProgress& p, JobId job)
{
    p.next = in.get<std::int64_t>("next iteration");
    p.now = in.get<double>("run clock");
    p.samples = in.get<std::int64_t>("samples");
    p.train_loss = in.get<double>("train loss");
    EvaluationRecord& e = p.result.final_evaluation;
    e.job = job;
    e.iteration = in.get<std::int64_t>("last evaluation");
    for (double* v : { &e.time_s, &e.wall_s, &e.epoch, &e.train_loss, &e.test_loss, &e.test_accuracy })
        *v = in.get<double>("last evaluation");
    p.result.best_accuracy = in.get<double>("best accuracy");
    in.get(p.result.target_time_s, "target time");
    in.get(p.result.target_updates, "target updates");
    p.observations.resize(in.array_size("observations", 1));
    for (balance::WorkerObservation& o : p.observations) {
        o.worker = in.get<WorkerId>("observation");
        o.batch_size = in.get<std::int32_t>("observation");
        for (double* v : { &o.compute_s, &o.comm_s, &o.cpu_share, &o.memory_share, &o.next_cpu_share,
                 &o.next_memory_share, &o.device_memory })
            *v = in.get<double>("observation");
        o.batch_limit = in.get<std::int32_t>("observation");
    }
}

void save_totals(StateWriter& out, const TrainingProgress& p)
{
    out.put(p.updates);
    out.put(p.max_staleness);
    out.put(p.supersteps);
    out.put(p.free_running_ran);
}

void load_totals(StateReader& in, TrainingProgress& p)
{
    p.updates = in.get<std::int64_t>("updates");
    p.max_staleness = in.get<std::int64_t>("largest staleness");
    p.supersteps = in.get<std::int64_t>("supersteps");
    p.free_running_ran = in.get_bool("free-running segments");
}

void JobCore::save_sync(StateWriter& out) const
{
    out.put(slowdown_);
    out.put(std::string(sync::to_string(sync_model_.type)));
    for (const int v : { sync_model_.staleness, sync_model_.backups, sync_model_.range, sync_model_.history })
        out.put(v);
    out.put(sync_model_.algorithm);
}

void JobCore::load_sync(StateReader& in)
{
    in.get(slowdown_, "stragglers");
    if (slowdown_.size() != job_.workers.size())
        in.fail("stragglers", "name another number of workers than this job's");
    control_->slowdowns_in_effect(slowdown_);
    const std::optional<sync::SyncType> type = sync::parse_sync_type(in.get_string("sync model"));
    if (!type)
        in.fail("sync model", "names no sync model of this Fulcrum");
    sync_model_.type = *type;
    for (int* v : { &sync_model_.staleness, &sync_model_.backups, &sync_model_.range, &sync_model_.history })
        *v = in.get<int>("sync model");
    sync_model_.algorithm = in.get_string("sync model");
    try {
        sync::validate(sync_model_, static_cast<int>(job_.workers.size()));
    } catch (const std::invalid_argument& e) {
        in.fail("sync model", e.what());
    }
    control_->sync_in_effect(sync_model_);
}

void JobCore::request_scheduled(std::int64_t at, double now)
{
    const std::vector<ScheduledRequest>& scheduled = config().scheduled;
    while (next_scheduled_ < scheduled.size() && scheduled[next_scheduled_].before_iteration <= at) {
        const ScheduledRequest& r = scheduled[next_scheduled_++];
        try {
            r.make(*control_);
        } catch (const RefusedRequest& e) {
            emit(at, now, EventKind::ScheduledChangeRefused, r.what + " refused (" + e.code() + "): " + e.what(),
                EventActor::scenario());
        }
    }
}

void JobCore::scheduled_done_before(std::int64_t at)
{
    while (next_scheduled_ < config().scheduled.size() && config().scheduled[next_scheduled_].before_iteration < at)
        ++next_scheduled_;
}

} // namespace fulcrum::train
