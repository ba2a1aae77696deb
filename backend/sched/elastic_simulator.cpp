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
            if (auto reason = check_ps_submission(job, cluster_))
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
                queue_.push_back(pending_[next_arrival++]);
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
        if (!queue_.empty() || running_.empty())
            return;
        for (const std::size_t i : eps_growth_order(running_.size(), round_)) {
            if (free_slots() < 2)
                break;
            Running& r = running_[i];
            if (r.capped || r.trial || r.paused_until > now_)
                continue;
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
    void release_for(int wanted)
    {
        std::vector<EpsHolder> holders;
        holders.reserve(running_.size());
        for (const Running& r : running_) {
            EpsHolder h;
            h.held = { r.workers, r.servers };
            h.request = { std::max(1, spec(r).workers), std::max(1, spec(r).servers) };
            h.minimum = { 1, 1 };
            h.may_release = outcomes_[r.outcome].feedback_s >= 0 && !r.trial && r.paused_until <= now_;
            holders.push_back(h);
        }
        const std::vector<SlotCount> taken = eps_release(holders, free_slots(), wanted);
        for (std::size_t i = 0; i < taken.size(); ++i) {
            if (taken[i].slots() == 0)
                continue;
            resize(running_[i], -taken[i].workers, -taken[i].servers);
            outcomes_[running_[i].outcome].released += taken[i].slots();
        }
    }

    void start(PsJobSpec job, int workers, int servers)
    {
        PsJobOutcome o;
        o.job = std::move(job);
        o.start_s = now_;
        o.peak_workers = workers;
        o.peak_servers = servers;
        outcomes_.push_back(std::move(o));
        Running r;
        r.outcome = outcomes_.size() - 1;
        r.workers = workers;
        r.servers = servers;
        r.paused_until = now_;
        r.feedback_samples = options_.feedback.samples_needed(outcomes_.back().job);
        running_.push_back(r);
        used_ += workers + servers;
    }

    void admit()
    {
        while (!queue_.empty()) {
            const PsJobSpec& job = queue_.front();
            if (free_slots() < job.slots() && elastic())
                release_for(job.slots());
            const auto size = eps_start_size(free_slots(), { job.workers, job.servers }, { 1, 1 }, elastic());
            if (!size)
                return; // FIFO: the head waits, and so does everyone behind it
            start(job, size->workers, size->servers);
            queue_.pop_front();
        }
    }

    const PsClusterModel& cluster_;
    const ElasticOptions& options_;
    Rng rng_;
    std::vector<PsJobSpec> pending_; // accepted, by arrival
    std::deque<PsJobSpec> queue_;
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
