#include "sched/elastic_simulator.h"

#include "common/random.h"
#include "common/registry.h"
#include "sched/eps_rules.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <stdexcept>

namespace fulcrum::sched {

namespace {

struct ElasticEntry {
    KindInfo kind;
    ElasticPolicy policy;
};

constexpr ElasticEntry kPolicies[] = {
    { { "eps",
          "Elastic Parameter Server: jobs grow on idle slots, a step that made a job slower is rolled back, and a "
          "newcomer takes slots from jobs past their early feedback; in place" },
        ElasticPolicy::Eps },
    { { "static", "a static FIFO parameter server: each job keeps the slots it started with" },
        ElasticPolicy::StaticFifo },
    { { "kill-restart", "EPS's decisions, each carried out by a checkpoint, a stop and a restart" },
        ElasticPolicy::KillRestart },
};

constexpr Registry<ElasticEntry> kRegistry { "elastic policy", kPolicies };

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Running {
    std::size_t outcome = 0; // index into outcomes
    int workers = 0, servers = 0;
    double done = 0; // samples processed
    double feedback_samples = 0; // samples at the early-feedback point (+inf: never)
    double paused_until = 0;
    bool capped = false; // a growth step was rolled back: grow no further
    bool trial = false; // a growth step is being watched
    double trial_until = kInf;
    double trial_baseline = 0;
};

// A job waiting for slots: a newcomer, or a rigid borrower stopped at a checkpoint to give a
// quota's owner its slots back, which goes on from there.
struct Waiting {
    PsJobSpec job;
    std::optional<std::size_t> outcome; // requeued: its outcome so far
    double done = 0; // samples it had processed
};

class Simulation {
public:
    Simulation(const PsClusterModel& cluster, const ElasticOptions& options)
        : cluster_(cluster)
        , options_(options)
        , rng_(make_rng(options.seed, Stream::Noise, 77))
    {
    }

    ElasticResult run(std::vector<PsJobSpec> jobs)
    {
        std::stable_sort(
            jobs.begin(), jobs.end(), [](const PsJobSpec& a, const PsJobSpec& b) { return a.arrival_s < b.arrival_s; });
        for (PsJobSpec& job : jobs) {
            if (auto reason = check_ps_submission(job, cluster_); reason || (reason = beyond_quota(job)))
                result_.rejected.push_back({ std::move(job), *reason });
            else
                pending_.push_back(std::move(job));
        }
        total_ = pending_.size();
        outcomes_.reserve(total_);
        std::size_t next_arrival = 0;
        double next_round = options_.round_s;
        while (finished_ < total_) {
            double next = std::min(next_arrival < pending_.size() ? pending_[next_arrival].arrival_s : kInf,
                elastic() && !running_.empty() ? std::max(next_round, now_) : kInf);
            for (const Running& r : running_)
                next = std::min(next, next_event(r));
            if (!std::isfinite(next))
                throw std::logic_error(
                    "elastic simulation stalled with " + std::to_string(total_ - finished_) + " jobs left");
            advance(next);
            while (next_arrival < pending_.size() && pending_[next_arrival].arrival_s <= now_)
                queue_.push_back({ pending_[next_arrival++], std::nullopt, 0 });
            settle_running();
            admit();
            if (elastic() && now_ >= next_round) {
                grow_round();
                next_round = now_ + options_.round_s;
            }
        }
        result_.makespan = now_;
        const double capacity = cluster_.slots * std::max(now_, 1e-9);
        result_.cpu_util = training_slot_s_ / capacity;
        result_.allocated_util = allocated_slot_s_ / capacity;
        for (const auto& [change, cost] : changes_)
            result_.changes.push_back(cost);
        std::sort(outcomes_.begin(), outcomes_.end(),
            [](const PsJobOutcome& a, const PsJobOutcome& b) { return a.job.id < b.job.id; });
        result_.jobs = std::move(outcomes_);
        return std::move(result_);
    }

private:
    bool elastic() const { return options_.policy != ElasticPolicy::StaticFifo; }
    bool quotas() const { return options_.tenants.active(); }
    TenantHeld held() const
    {
        TenantHeld h;
        for (const Running& r : running_)
            h[spec(r).tenant] += r.workers + r.servers;
        return h;
    }
    // A job of a tenant that does not borrow, asking for more than its quota could ever give.
    std::optional<std::string> beyond_quota(const PsJobSpec& job) const
    {
        const TenantQuota q = options_.tenants.of(job.tenant);
        const int least = elastic() ? 2 : job.slots();
        if (!quotas() || q.borrow || least <= q.gpus)
            return std::nullopt;
        return "needs " + std::to_string(least) + " slots to start; tenant " + job.tenant + "'s quota is "
            + std::to_string(q.gpus) + " and it does not borrow";
    }
    int free_slots() const { return cluster_.slots - used_; }
    const PsJobSpec& spec(const Running& r) const { return outcomes_[r.outcome].job; }
    double rate(const Running& r) const { return cluster_.throughput(spec(r).model, r.workers, r.servers); }

    double next_event(const Running& r) const
    {
        if (r.paused_until > now_)
            return r.paused_until;
        double t = now_ + (spec(r).samples() - r.done) / rate(r);
        const PsJobOutcome& o = outcomes_[r.outcome];
        if (o.feedback_s < 0)
            t = std::min(t, now_ + std::max(0.0, r.feedback_samples - r.done) / rate(r));
        if (r.trial)
            t = std::min(t, r.trial_until);
        return t;
    }

    void advance(double to)
    {
        for (Running& r : running_) {
            const double training = std::max(0.0, to - std::max(now_, r.paused_until));
            r.done = std::min(spec(r).samples(), r.done + rate(r) * training);
            training_slot_s_ += training * (r.workers + r.servers);
            allocated_slot_s_ += (to - now_) * (r.workers + r.servers);
        }
        now_ = to;
    }

    // Feedback, completions and the end of growth trials at the current time.
    void settle_running()
    {
        for (std::size_t i = 0; i < running_.size();) {
            Running& r = running_[i];
            PsJobOutcome& o = outcomes_[r.outcome];
            const double samples = spec(r).samples();
            const double eps = 1e-9 * samples;
            if (o.feedback_s < 0 && r.done >= r.feedback_samples - eps)
                o.feedback_s = now_;
            if (r.done >= samples - eps && r.paused_until <= now_) {
                o.finish_s = now_;
                if (o.feedback_s < 0) {
                    o.feedback_s = now_;
                    o.feedback_at_finish = true;
                }
                used_ -= r.workers + r.servers;
                running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(i));
                ++finished_;
                if (options_.progress)
                    options_.progress(static_cast<double>(finished_) / static_cast<double>(total_));
                continue;
            }
            if (r.trial && now_ >= r.trial_until)
                judge_trial(r);
            ++i;
        }
    }

    // A measured throughput: the model's, with the noise of a window of observed iterations.
    double measured(const Running& r)
    {
        const double spread = options_.iteration_noise / std::sqrt(std::max(1, options_.observe_iterations));
        return rate(r) * (1 + spread * standard_normal(rng_));
    }

    void record(const std::string& change, double seconds)
    {
        ChangeCost& c = changes_[change];
        c.change = change;
        c.count += 1;
        c.total_s += seconds;
    }

    // Applies a change of `dw` workers and `ds` servers: in place (EPS, each mechanism's cost
    // in turn) or by a restart. The job trains again when the pause ends.
    void resize(Running& r, int dw, int ds)
    {
        PsJobOutcome& o = outcomes_[r.outcome];
        const ModelTemplate& model = spec(r).model;
        double pause = 0;
        if (options_.policy == ElasticPolicy::KillRestart) {
            pause = cluster_.restart_cost(model);
            record("restart", pause);
            o.restarts += 1;
        } else {
            for (int k = 0; k < ds; ++k) {
                const double c = cluster_.add_server_cost(model, r.servers + k);
                record("add-server", c);
                pause += c;
            }
            for (int k = 0; k < -ds; ++k) {
                const double c = cluster_.remove_server_cost(model, r.servers - k);
                record("remove-server", c);
                pause += c;
            }
            for (int k = 0; k < dw; ++k) {
                const double c = cluster_.add_worker_cost(model);
                record("add-worker", c);
                pause += c;
            }
            for (int k = 0; k < -dw; ++k) {
                record("remove-worker", cluster_.remove_worker_s);
                pause += cluster_.remove_worker_s;
            }
        }
        r.workers += dw;
        r.servers += ds;
        used_ += dw + ds;
        r.paused_until = std::max(r.paused_until, now_) + pause;
        o.paused_s += pause;
        o.peak_workers = std::max(o.peak_workers, r.workers);
        o.peak_servers = std::max(o.peak_servers, r.servers);
    }

    void judge_trial(Running& r)
    {
        r.trial = false;
        r.trial_until = kInf;
        if (!eps_growth_kept(r.trial_baseline, measured(r))) { // the step made the job slower: undo it
            resize(r, -1, -1);
            r.capped = true;
            outcomes_[r.outcome].rolled_back += 1;
        }
    }

    // One round: every running job that may grow gets one server and one worker, in turn
    // from a rotating start, while idle slots last.
    void grow_round()
    {
        if (someone_waits() || running_.empty())
            return;
        std::vector<std::size_t> order = eps_growth_order(running_.size(), round_);
        if (quotas()) { // borrowers by weight: the tenant with the fewest borrowed per weight first
            const TenantHeld h = held();
            std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
                return serve_order(options_.tenants, h, spec(running_[a]).tenant, 2)
                    < serve_order(options_.tenants, h, spec(running_[b]).tenant, 2);
            });
        }
        for (const std::size_t i : order) {
            if (free_slots() < 2)
                break;
            Running& r = running_[i];
            if (r.capped || r.trial || r.paused_until > now_)
                continue;
            if (quota_room(options_.tenants, held(), spec(r).tenant, free_slots()) < 2)
                continue; // at a quota its tenant does not borrow beyond
            r.trial_baseline = measured(r);
            resize(r, +1, +1);
            r.trial = true;
            r.trial_until = r.paused_until
                + options_.observe_iterations * cluster_.iteration_s(spec(r).model, r.workers, r.servers);
            outcomes_[r.outcome].grown += 1;
        }
        ++round_;
    }

    // Frees slots for a newcomer from jobs past early feedback (eps_release): first what they
    // hold beyond their own request, then down to one server and one worker.
    // With quotas, only the jobs of `tenant` give (a newcomer takes from its own tenant's
    // jobs; other tenants' slots come back only by reclaim, reclaim_for).
    void release_for(int wanted, const std::string* tenant = nullptr, int free = -1, bool reclaim = false)
    {
        std::vector<EpsHolder> holders;
        holders.reserve(running_.size());
        for (const Running& r : running_) {
            EpsHolder h;
            h.held = { r.workers, r.servers };
            h.request = { std::max(1, spec(r).workers), std::max(1, spec(r).servers) };
            h.minimum = { 1, 1 };
            h.may_release = outcomes_[r.outcome].feedback_s >= 0 && !r.trial && r.paused_until <= now_
                && (!tenant || spec(r).tenant == *tenant);
            holders.push_back(h);
        }
        const std::vector<SlotCount> taken = eps_release(holders, free < 0 ? free_slots() : free, wanted);
        for (std::size_t i = 0; i < taken.size(); ++i) {
            if (taken[i].slots() == 0)
                continue;
            resize(running_[i], -taken[i].workers, -taken[i].servers);
            (reclaim ? outcomes_[running_[i].outcome].reclaimed : outcomes_[running_[i].outcome].released)
                += taken[i].slots();
        }
    }

    // Reclaim (tenant_quota.h): the slots borrowers hold beyond their quotas come back for a job
    // of `job.tenant` within its quota. Elastic borrowers shrink past early feedback, down to one
    // server and one worker; rigid ones keep theirs (wait) or are stopped at a checkpoint and
    // queued again (requeue), their latest-started job first.
    void reclaim_for(const PsJobSpec& job)
    {
        const TenantHeld plan = reclaim_plan(
            options_.tenants, held(), job.tenant, job.slots(), free_slots(), elastic() ? 2 : job.slots());
        for (const auto& [tenant, owed] : plan) {
            if (elastic()) {
                release_for(owed, &tenant, 0, true);
                continue;
            }
            if (options_.tenants.rigid != RigidBorrowers::Requeue)
                continue;
            int freed = 0;
            for (std::size_t i = running_.size(); i-- > 0 && freed < owed;)
                if (spec(running_[i]).tenant == tenant) {
                    freed += running_[i].workers + running_[i].servers;
                    requeue(i);
                }
        }
    }

    // A rigid borrower stops at a checkpoint and waits at the head of its tenant's queue; the
    // checkpoint and the restart cost it restart_cost when it starts again.
    void requeue(std::size_t i)
    {
        const Running r = running_[i];
        PsJobOutcome& o = outcomes_[r.outcome];
        o.requeued += 1;
        o.reclaimed += r.workers + r.servers;
        used_ -= r.workers + r.servers;
        running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(i));
        auto at = std::find_if(
            queue_.begin(), queue_.end(), [&](const Waiting& w) { return w.job.tenant == o.job.tenant; });
        queue_.insert(at, Waiting { o.job, r.outcome, r.done });
    }

    void start(Waiting waiting, int workers, int servers)
    {
        Running r;
        r.paused_until = now_;
        if (waiting.outcome) { // requeued: it goes on from its checkpoint, after a restart
            r.outcome = *waiting.outcome;
            r.done = waiting.done;
            const double cost = cluster_.restart_cost(waiting.job.model);
            record("requeue", cost);
            r.paused_until = now_ + cost;
            outcomes_[r.outcome].paused_s += cost;
        } else {
            PsJobOutcome o;
            o.job = std::move(waiting.job);
            o.start_s = now_;
            outcomes_.push_back(std::move(o));
            r.outcome = outcomes_.size() - 1;
        }
        PsJobOutcome& o = outcomes_[r.outcome];
        o.peak_workers = std::max(o.peak_workers, workers);
        o.peak_servers = std::max(o.peak_servers, servers);
        r.workers = workers;
        r.servers = servers;
        r.feedback_samples = options_.feedback.samples_needed(o.job);
        running_.push_back(r);
        used_ += workers + servers;
    }

    void admit()
    {
        if (quotas()) {
            admit_by_tenant();
            return;
        }
        while (!queue_.empty()) {
            const PsJobSpec& job = queue_.front().job;
            if (free_slots() < job.slots() && elastic())
                release_for(job.slots());
            const auto size = eps_start_size(free_slots(), { job.workers, job.servers }, { 1, 1 }, elastic());
            if (!size)
                return; // FIFO: the head waits, and so does everyone behind it
            Waiting head = std::move(queue_.front());
            queue_.pop_front();
            start(std::move(head), size->workers, size->servers);
        }
    }

    // With quotas: each tenant's queue in arrival order, the tenants' heads served in
    // serve_order (within quota first, then borrowers by borrowed slots per weight); a head
    // that cannot start holds up its own tenant only.
    void admit_by_tenant()
    {
        for (bool started = true; started;) {
            started = false;
            bool owner_waits = false;
            std::vector<std::size_t> heads;
            for (std::size_t i = 0; i < queue_.size(); ++i)
                if (std::none_of(heads.begin(), heads.end(),
                        [&](std::size_t h) { return queue_[h].job.tenant == queue_[i].job.tenant; }))
                    heads.push_back(i);
            const TenantHeld h = held();
            std::stable_sort(heads.begin(), heads.end(), [&](std::size_t a, std::size_t b) {
                return serve_order(options_.tenants, h, queue_[a].job.tenant, queue_[a].job.slots())
                    < serve_order(options_.tenants, h, queue_[b].job.tenant, queue_[b].job.slots());
            });
            // Once a job within its tenant's quota waits, borrowers start nothing: the slots
            // that idle or come back are its own.
            for (const std::size_t i : heads) {
                const bool borrowing
                    = serve_order(options_.tenants, h, queue_[i].job.tenant, queue_[i].job.slots()).borrowing;
                if (borrowing && owner_waits)
                    break;
                const std::size_t queued = queue_.size();
                if (try_start(i) || queue_.size() != queued) {
                    started = true; // the queue (a requeue) or the tenants' use changed: serve again
                    break;
                }
                owner_waits = owner_waits || !borrowing;
            }
        }
    }

    bool try_start(std::size_t i)
    {
        const PsJobSpec job = queue_[i].job;
        if (free_slots() < job.slots()) {
            reclaim_for(job);
            if (elastic() && free_slots() < job.slots())
                release_for(job.slots(), &job.tenant);
        }
        // A requeue in reclaim_for may have put a job before it in the queue.
        const auto at = std::find_if(queue_.begin(), queue_.end(),
            [&](const Waiting& w) { return w.job.id == job.id && w.job.tenant == job.tenant; });
        const int room = quota_room(options_.tenants, held(), job.tenant, free_slots());
        const auto size = eps_start_size(room, { job.workers, job.servers }, { 1, 1 }, elastic());
        if (!size || at == queue_.end())
            return false;
        Waiting taken = std::move(*at);
        queue_.erase(at);
        start(std::move(taken), size->workers, size->servers);
        return true;
    }

    // EPS grows only while no job waits; with quotas, only while none waits that idle slots
    // could serve (a job whose tenant is at a quota it does not borrow beyond waits for its own
    // tenant's slots).
    bool someone_waits() const
    {
        if (!quotas())
            return !queue_.empty();
        const TenantHeld h = held();
        return std::any_of(queue_.begin(), queue_.end(),
            [&](const Waiting& w) { return quota_room(options_.tenants, h, w.job.tenant, cluster_.slots) > 0; });
    }

    const PsClusterModel& cluster_;
    const ElasticOptions& options_;
    Rng rng_;
    std::vector<PsJobSpec> pending_; // accepted, by arrival
    std::deque<Waiting> queue_;
    std::vector<Running> running_;
    std::vector<PsJobOutcome> outcomes_;
    std::map<std::string, ChangeCost> changes_;
    ElasticResult result_;
    double now_ = 0;
    int used_ = 0;
    std::size_t total_ = 0, finished_ = 0, round_ = 0;
    double training_slot_s_ = 0, allocated_slot_s_ = 0;
};

} // namespace

std::string_view policy_name(ElasticPolicy policy)
{
    for (const ElasticEntry& e : kPolicies)
        if (e.policy == policy)
            return e.kind.name;
    return "unknown";
}

std::optional<ElasticPolicy> parse_elastic_policy(std::string_view name)
{
    const auto found = kRegistry.find(name);
    return found ? std::optional(found->entry.policy) : std::nullopt;
}

std::string elastic_policy_help()
{
    return kRegistry.expected();
}

std::vector<CatalogueEntry> elastic_catalogue()
{
    return kRegistry.catalogue();
}

ElasticResult simulate_elastic(
    const PsClusterModel& cluster, std::vector<PsJobSpec> jobs, const ElasticOptions& options)
{
    if (cluster.slots < 2)
        throw std::invalid_argument("an elastic cluster needs at least two slots (one server and one worker)");
    if (!(options.round_s > 0) || options.observe_iterations < 1)
        throw std::invalid_argument("elastic options: round_s > 0 and observe_iterations >= 1 are required");
    parse_early_feedback(to_string(options.feedback)); // the same checks as the command line
    return Simulation(cluster, options).run(std::move(jobs));
}

} // namespace fulcrum::sched
