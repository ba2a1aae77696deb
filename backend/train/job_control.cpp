#include "train/job_control.h"

#include "balance/policy_registry.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace fulcrum::train {

JobControl::JobControl(balance::BatchSizeManager& manager, int workers, const sync::SyncSpec& sync,
    std::function<void(const sync::SyncSpec&)> switchable, BatchRelease* release)
    : manager_(manager)
    , workers_(workers)
    , switchable_(std::move(switchable))
    , release_(release)
    , slowdown_view_(static_cast<std::size_t>(workers), 1.0)
    , sync_description_(sync::describe(sync))
    , free_running_(!sync::closes_every_iteration(sync.type))
    , uniform_policy_(!balance::balances_at_barriers(manager.policy().name()))
{
}

void JobControl::check_worker(WorkerId worker) const
{
    if (worker < 0 || worker >= workers_)
        throw RefusedRequest("unknown-worker",
            "the job has no worker " + std::to_string(worker) + " (it has " + std::to_string(workers_) + ")");
}

void JobControl::pin(WorkerId worker, std::int32_t batch_size, const EventActor& actor)
{
    manager_.pin(worker, batch_size, actor);
}

void JobControl::unpin(WorkerId worker, const EventActor& actor)
{
    manager_.unpin(worker, actor);
}

void JobControl::exclude(WorkerId worker, std::optional<double> for_s, const EventActor& actor)
{
    manager_.exclude(worker, for_s, actor);
    if (release_)
        release_->give_up(worker, actor.kind == EventActor::Kind::Person);
}

void JobControl::include(WorkerId worker, const EventActor& actor)
{
    manager_.include(worker, actor);
    if (release_)
        release_->keep(worker);
}

void JobControl::set_policy(std::unique_ptr<balance::BatchSizePolicy> policy, balance::ManagerOptions options,
    const EventActor& actor, std::string spec_json)
{
    if (!policy)
        throw std::invalid_argument("set_policy needs a policy");
    const bool uniform = !balance::balances_at_barriers(policy->name());
    std::lock_guard lock(mutex_);
    if (!policies_refused_.empty())
        throw RefusedRequest("policy-not-applicable", policies_refused_);
    if (!uniform && free_running_requested_.value_or(free_running_))
        throw RefusedRequest("policy-not-applicable",
            "this job's sync model (" + sync_description_
                + ") has no barrier to balance at, so only the uniform policy applies; switch it to bsp or backup "
                  "first");
    manager_.set_policy(std::move(policy), options, actor, std::move(spec_json));
    uniform_requested_ = uniform;
}

void JobControl::inject_straggler(WorkerId worker, double slowdown, const EventActor& actor)
{
    check_worker(worker);
    if (!(slowdown >= 1 && slowdown <= 1000))
        throw RefusedRequest(
            "illegal-value", "a straggler's slowdown must be from 1 to 1000, got " + std::to_string(slowdown));
    std::lock_guard lock(mutex_);
    slowdown_view_[static_cast<std::size_t>(worker)] = slowdown;
    mailbox_.emplace_back(Slowdown { worker, slowdown, actor });
}

void JobControl::set_sync_model(const sync::SyncSpec& spec, const EventActor& actor)
{
    try {
        sync::validate(spec, workers_);
    } catch (const std::invalid_argument& e) {
        throw RefusedRequest("illegal-value", e.what());
    }
    switchable_(spec);
    const bool free_running = !sync::closes_every_iteration(spec.type);
    std::lock_guard lock(mutex_);
    if (free_running && !uniform_requested_.value_or(uniform_policy_))
        throw RefusedRequest("policy-not-applicable",
            sync::describe(spec)
                + " has no barrier to balance at and this job's batch-size policy is not uniform; set the policy to "
                  "uniform first");
    replace(SyncChange { spec, actor });
    free_running_requested_ = free_running;
}

void JobControl::pause(const EventActor& actor)
{
    std::lock_guard lock(mutex_);
    pause_requested_ = true;
    pause_actor_ = actor;
}

void JobControl::resume(const EventActor& actor)
{
    {
        std::lock_guard lock(mutex_);
        pause_requested_ = false;
        pause_actor_ = actor;
    }
    pause_cv_.notify_all();
}

void JobControl::request_resize(ResizeRequest request)
{
    const WorkerId removed = request.action == ResizeAction::RemoveWorker ? request.target.value_or(-1) : -1;
    const bool by_a_person = request.actor.kind == EventActor::Kind::Person;
    {
        std::lock_guard lock(mutex_);
        mailbox_.emplace_back(std::move(request));
    }
    if (release_ && removed >= 0)
        release_->give_up(removed, by_a_person);
}

bool JobControl::paused() const
{
    std::lock_guard lock(mutex_);
    return pause_requested_;
}

double JobControl::straggler_slowdown(WorkerId worker) const
{
    std::lock_guard lock(mutex_);
    if (worker < 0 || static_cast<std::size_t>(worker) >= slowdown_view_.size())
        return 1;
    return slowdown_view_[static_cast<std::size_t>(worker)];
}

std::vector<double> JobControl::straggler_slowdowns() const
{
    std::lock_guard lock(mutex_);
    return slowdown_view_;
}

std::string JobControl::sync_model() const
{
    std::lock_guard lock(mutex_);
    return sync_description_;
}

void JobControl::record(Note note)
{
    std::lock_guard lock(mutex_);
    mailbox_.emplace_back(std::move(note));
}

void JobControl::set_gpu_sharing(std::vector<int> jobs_per_gpu)
{
    if (jobs_per_gpu.size() != static_cast<std::size_t>(workers_))
        throw std::invalid_argument("GPU sharing for " + std::to_string(jobs_per_gpu.size()) + " workers; the job has "
            + std::to_string(workers_));
    for (int& k : jobs_per_gpu)
        k = std::max(1, k);
    std::lock_guard lock(mutex_);
    replace(GpuSharing { std::move(jobs_per_gpu) });
}

void JobControl::set_link_contention(LinkContention contention)
{
    if (contention.jobs.size() != static_cast<std::size_t>(workers_))
        throw std::invalid_argument("link contention for " + std::to_string(contention.jobs.size())
            + " workers; the job has " + std::to_string(workers_));
    const LinkModel& link = contention.link;
    if (!(link.a >= 0) || !(link.b > 0) || !(link.eta >= 0))
        throw std::invalid_argument("link contention needs a >= 0, b > 0 and eta >= 0 (eq. 5)");
    for (int& k : contention.jobs)
        k = std::max(1, k);
    std::lock_guard lock(mutex_);
    replace(std::move(contention));
}

void JobControl::follow_recorded_shares(RecordedShares shares)
{
    const auto fits = [this](const std::vector<int>& per_worker) {
        return per_worker.size() == static_cast<std::size_t>(workers_)
            && std::all_of(per_worker.begin(), per_worker.end(), [](int k) { return k >= 1; });
    };
    bool sound = fits(shares.gpu.jobs_per_gpu) && (!shares.link || fits(shares.link->jobs));
    for (const RecordedShares::Change& c : shares.changes)
        sound = sound && (!c.gpu || fits(c.gpu->jobs_per_gpu)) && (!c.link || fits(c.link->jobs));
    if (!sound)
        throw std::invalid_argument("recorded shares name another number of workers than the job's "
            + std::to_string(workers_) + ", or fewer than 1 job on a GPU or link");
    std::lock_guard lock(mutex_);
    recorded_until_ = shares.until_s;
    replace(std::move(shares));
}

std::optional<double> JobControl::recorded_until() const
{
    std::lock_guard lock(mutex_);
    return recorded_until_;
}

void JobControl::record_cluster(ClusterChange change)
{
    std::lock_guard lock(mutex_);
    replace(std::move(change));
}

template <class T> void JobControl::replace(T state)
{
    std::erase_if(mailbox_, [](const Request& r) { return std::holds_alternative<T>(r); });
    mailbox_.emplace_back(std::move(state));
}

template <class T> bool JobControl::asked() const
{
    return std::any_of(mailbox_.begin(), mailbox_.end(), [](const Request& r) { return std::holds_alternative<T>(r); });
}

template <class T> std::vector<T> JobControl::take()
{
    std::vector<T> out;
    std::lock_guard lock(mutex_);
    std::erase_if(mailbox_, [&out](Request& r) {
        if (T* t = std::get_if<T>(&r)) {
            out.push_back(std::move(*t));
            return true;
        }
        return false;
    });
    return out;
}

template <class T> std::optional<T> JobControl::take_one()
{
    std::vector<T> taken = take<T>();
    if (taken.empty())
        return std::nullopt;
    return std::move(taken.back());
}

template std::vector<JobControl::Slowdown> JobControl::take();
template std::vector<ResizeRequest> JobControl::take();
template std::vector<JobControl::Note> JobControl::take();
template std::optional<JobControl::SyncChange> JobControl::take_one();
template std::optional<JobControl::ClusterChange> JobControl::take_one();
template std::optional<JobControl::GpuSharing> JobControl::take_one();
template std::optional<JobControl::LinkContention> JobControl::take_one();
template std::optional<JobControl::RecordedShares> JobControl::take_one();

int JobControl::servers() const
{
    std::lock_guard lock(mutex_);
    return servers_;
}

void JobControl::servers_in_effect(int servers)
{
    std::lock_guard lock(mutex_);
    servers_ = servers;
}

void JobControl::sync_in_effect(const sync::SyncSpec& spec)
{
    std::lock_guard lock(mutex_);
    sync_description_ = sync::describe(spec);
    free_running_ = !sync::closes_every_iteration(spec.type);
    if (!asked<SyncChange>())
        free_running_requested_.reset();
}

void JobControl::policy_in_effect(const std::string& name)
{
    std::lock_guard lock(mutex_);
    uniform_policy_ = !balance::balances_at_barriers(name);
    uniform_requested_.reset();
}

void JobControl::slowdowns_in_effect(const std::vector<double>& slowdowns)
{
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < slowdowns.size() && i < slowdown_view_.size(); ++i)
        slowdown_view_[i] = slowdowns[i];
}

std::optional<EventActor> JobControl::pause_requested() const
{
    std::lock_guard lock(mutex_);
    if (!pause_requested_)
        return std::nullopt;
    return pause_actor_;
}

std::pair<double, EventActor> JobControl::hold(const std::atomic<bool>* stop)
{
    std::unique_lock lock(mutex_);
    const auto since = std::chrono::steady_clock::now();
    while (pause_requested_ && !(stop && stop->load(std::memory_order_relaxed)))
        pause_cv_.wait_for(lock, std::chrono::milliseconds(50));
    return { std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count(), pause_actor_ };
}

void JobControl::refuse_policies(std::string why)
{
    std::lock_guard lock(mutex_);
    policies_refused_ = std::move(why);
}

} // namespace fulcrum::train
