#include "balance/batch_size_manager.h"

#include "balance/rounding.h"

#include <algorithm>
#include <iterator>
#include <numeric>
#include <sstream>
#include <utility>

namespace fulcrum::balance {

namespace {

WorkerOverride departed()
{
    WorkerOverride o;
    o.member = false;
    return o;
}

} // namespace

BatchSizeManager::BatchSizeManager(std::unique_ptr<BatchSizePolicy> policy, int workers, std::int32_t total_batch,
    std::vector<std::int32_t> batch_limits, ManagerOptions options)
    : policy_(std::move(policy))
    , workers_(workers)
    , total_batch_(total_batch)
    , limits_(std::move(batch_limits))
    , options_(options)
    , blocking_(options.blocking.value_or(policy_->blocking()))
    , overrides_(static_cast<std::size_t>(workers))
    , applied_(static_cast<std::size_t>(workers))
{
    if (workers < 1)
        throw std::invalid_argument("a job needs at least one worker");
    if (total_batch < workers)
        throw std::invalid_argument("total batch " + std::to_string(total_batch) + " is smaller than the "
            + std::to_string(workers) + " workers");
    limits_.resize(static_cast<std::size_t>(workers), 0);
    if (!(options.damping >= 0 && options.damping < 1))
        throw std::invalid_argument("damping must be in [0, 1)");
}

void BatchSizeManager::set_batch_limits(const std::vector<std::int32_t>& limits)
{
    for (std::size_t i = 0; i < limits.size() && i < limits_.size(); ++i)
        if (limits[i] > 0)
            limits_[i] = limits[i];
}

void BatchSizeManager::check_worker(WorkerId worker) const
{
    if (worker < 0 || worker >= workers_)
        throw OverrideError("unknown-worker",
            "worker " + std::to_string(worker) + " does not exist (this job has workers 0 to "
                + std::to_string(workers_ - 1) + ")");
}

void BatchSizeManager::pin(WorkerId worker, std::int32_t batch_size, const EventActor& actor)
{
    check_worker(worker);
    std::lock_guard lock(mutex_);
    check_member(worker);
    if (overrides_[static_cast<std::size_t>(worker)].excluded)
        throw OverrideError(
            "worker-excluded", "worker " + std::to_string(worker) + " is excluded; include it before pinning");
    std::int64_t other_pins = 0;
    int free_others = 0;
    int may_return = 0; // excluded members: an include or a time limit brings them back unpinned
    for (int i = 0; i < workers_; ++i) {
        const WorkerOverride& o = overrides_[static_cast<std::size_t>(i)];
        if (i != worker && o.member && o.excluded && !o.pinned)
            ++may_return;
        if (i == worker || o.idle())
            continue;
        if (o.pinned)
            other_pins += *o.pinned;
        else
            ++free_others;
    }
    if (free_others == 0)
        throw OverrideError("no-free-worker",
            "pinning worker " + std::to_string(worker)
                + " would leave no unpinned worker to take the rest of the total batch "
                + std::to_string(total_batch_));
    // Room for the job's least batch on every other free worker, and on each excluded one,
    // which comes back into what the pins leave (else X could not give them that much).
    const std::int64_t most
        = total_batch_ - other_pins - static_cast<std::int64_t>(free_others + may_return) * min_batch_;
    if (batch_size < min_batch_ || batch_size > most)
        throw OverrideError("pin-out-of-range",
            "pin of " + std::to_string(batch_size) + " samples for worker " + std::to_string(worker) + " is outside "
                + std::to_string(min_batch_) + " to " + std::to_string(std::max<std::int64_t>(min_batch_, most))
                + " (total batch " + std::to_string(total_batch_) + ", the job's least batch of "
                + std::to_string(min_batch_) + " for each other free or excluded worker, other pins "
                + std::to_string(other_pins) + ")");
    const std::int32_t limit = limits_[static_cast<std::size_t>(worker)];
    if (limit > 0 && batch_size > limit)
        throw OverrideError("over-memory-limit",
            "pin of " + std::to_string(batch_size) + " samples for worker " + std::to_string(worker)
                + " exceeds its memory limit of " + std::to_string(limit) + " samples");
    overrides_[static_cast<std::size_t>(worker)].pinned = batch_size;
    requests_.push_back({ Request::Kind::Pin, worker, batch_size, std::nullopt, actor });
}

void BatchSizeManager::unpin(WorkerId worker, const EventActor& actor)
{
    check_worker(worker);
    std::lock_guard lock(mutex_);
    check_member(worker);
    if (!overrides_[static_cast<std::size_t>(worker)].pinned)
        throw OverrideError(
            "not-pinned", "worker " + std::to_string(worker) + " is not pinned (an exclusion drops a worker's pin)");
    overrides_[static_cast<std::size_t>(worker)].pinned.reset();
    requests_.push_back({ Request::Kind::Unpin, worker, 0, std::nullopt, actor });
}

void BatchSizeManager::exclude(WorkerId worker, std::optional<double> for_s, const EventActor& actor)
{
    check_worker(worker);
    if (for_s && !(*for_s > 0))
        throw OverrideError("bad-value", "exclusion time must be positive seconds");
    std::lock_guard lock(mutex_);
    check_member(worker);
    WorkerOverride& target = overrides_[static_cast<std::size_t>(worker)];
    if (target.excluded)
        throw OverrideError("already-excluded", "worker " + std::to_string(worker) + " is already excluded");
    int free_others = 0, active_others = 0;
    for (int i = 0; i < workers_; ++i) {
        const WorkerOverride& o = overrides_[static_cast<std::size_t>(i)];
        if (i == worker || o.idle())
            continue;
        ++active_others;
        if (!o.pinned)
            ++free_others;
    }
    if (active_others == 0)
        throw OverrideError(
            "last-worker", "worker " + std::to_string(worker) + " is the last active worker of the job");
    if (free_others == 0)
        throw OverrideError("no-free-worker",
            "excluding worker " + std::to_string(worker) + " would leave only pinned workers; unpin one first");
    target.excluded = true;
    // An excluded worker has no batch to pin; its pin does not come back with it, and the
    // exclusion's event says so, so that a later unpin's refusal is no surprise.
    const std::optional<std::int32_t> dropped_pin = target.pinned;
    target.pinned.reset();
    requests_.push_back({ Request::Kind::Exclude, worker, dropped_pin.value_or(0), for_s, actor });
}

void BatchSizeManager::include(WorkerId worker, const EventActor& actor)
{
    check_worker(worker);
    std::lock_guard lock(mutex_);
    check_member(worker);
    WorkerOverride& target = overrides_[static_cast<std::size_t>(worker)];
    if (!target.excluded)
        throw OverrideError("not-excluded", "worker " + std::to_string(worker) + " is not excluded");
    target.excluded = false;
    target.excluded_until.reset();
    requests_.push_back({ Request::Kind::Include, worker, 0, std::nullopt, actor });
}

void BatchSizeManager::set_policy(
    std::unique_ptr<BatchSizePolicy> policy, ManagerOptions options, const EventActor& actor, std::string spec_json)
{
    if (!policy)
        throw std::invalid_argument("set_policy needs a policy");
    if (!(options.damping >= 0 && options.damping < 1))
        throw OverrideError("illegal-value", "damping must be in [0, 1)");
    std::vector<WorkerObservation> askers;
    std::int32_t total = 0;
    {
        std::lock_guard lock(mutex_); // as the next barrier will see them
        askers = initial_askers(overrides_);
        total = total_batch_;
    }
    const Allocation start = policy->initial(static_cast<int>(askers.size()), total);
    for (std::size_t k = 0; k < start.batch_sizes.size() && k < askers.size(); ++k) {
        const auto i = static_cast<std::size_t>(askers[k].worker);
        if (limits_[i] > 0 && start.batch_sizes[k] > limits_[i])
            throw OverrideError("over-memory-limit",
                "policy " + policy->name() + " gives worker " + std::to_string(i) + " a batch of "
                    + std::to_string(start.batch_sizes[k]) + " samples, above its memory limit of "
                    + std::to_string(limits_[i]) + " samples");
    }
    std::lock_guard lock(mutex_);
    policy_request_ = PolicyRequest { std::move(policy), options, actor, std::move(spec_json) };
}

void BatchSizeManager::check_member(WorkerId worker) const
{
    if (!overrides_[static_cast<std::size_t>(worker)].member)
        throw OverrideError("not-a-member", "worker " + std::to_string(worker) + " is not a worker of this job now");
}

void BatchSizeManager::start_with_members(const std::vector<bool>& members)
{
    if (members.size() != static_cast<std::size_t>(workers_))
        throw std::invalid_argument("membership given for " + std::to_string(members.size()) + " slots, the job has "
            + std::to_string(workers_));
    if (std::none_of(members.begin(), members.end(), [](bool m) { return m; }))
        throw std::invalid_argument("a job needs at least one worker");
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < members.size(); ++i)
        overrides_[i].member = applied_[i].member = members[i];
    follow_membership();
}

void BatchSizeManager::follow_members(std::int32_t batch_per_member)
{
    if (batch_per_member < 0)
        throw std::invalid_argument("a batch per worker cannot be negative");
    std::lock_guard lock(mutex_);
    batch_per_member_ = batch_per_member;
    follow_membership();
}

void BatchSizeManager::follow_membership()
{
    if (batch_per_member_ <= 0)
        return;
    const auto members
        = std::count_if(applied_.begin(), applied_.end(), [](const WorkerOverride& o) { return o.member; });
    total_batch_ = static_cast<std::int32_t>(std::max<std::int64_t>(1, members) * batch_per_member_);
}

std::int32_t BatchSizeManager::total_batch() const
{
    std::lock_guard lock(mutex_);
    return total_batch_;
}

void BatchSizeManager::join(WorkerId worker)
{
    check_worker(worker);
    std::lock_guard lock(mutex_);
    WorkerOverride& target = overrides_[static_cast<std::size_t>(worker)];
    if (target.member)
        throw OverrideError("already-member", "worker " + std::to_string(worker) + " is already a worker of this job");
    target = WorkerOverride {};
    requests_.push_back({ Request::Kind::Join, worker, 0, std::nullopt, EventActor::elastic() });
}

void BatchSizeManager::leave(WorkerId worker)
{
    check_worker(worker);
    std::lock_guard lock(mutex_);
    check_member(worker);
    int others = 0;
    for (int i = 0; i < workers_; ++i)
        if (i != worker && !overrides_[static_cast<std::size_t>(i)].idle())
            ++others;
    if (others == 0)
        throw OverrideError(
            "last-worker", "worker " + std::to_string(worker) + " is the last active worker of the job");
    overrides_[static_cast<std::size_t>(worker)] = departed();
    requests_.push_back({ Request::Kind::Leave, worker, 0, std::nullopt, EventActor::elastic() });
}

WorkerOverride BatchSizeManager::state(WorkerId worker) const
{
    check_worker(worker);
    std::lock_guard lock(mutex_);
    return applied_[static_cast<std::size_t>(worker)];
}

std::vector<WorkerOverride> BatchSizeManager::states() const
{
    std::lock_guard lock(mutex_);
    return applied_;
}

bool BatchSizeManager::changes_due(double now_s) const
{
    std::lock_guard lock(mutex_);
    if (!requests_.empty() || policy_request_)
        return true;
    return std::any_of(applied_.begin(), applied_.end(),
        [now_s](const WorkerOverride& o) { return o.excluded && o.excluded_until && *o.excluded_until <= now_s; });
}

std::vector<JobEvent> BatchSizeManager::take_events()
{
    std::lock_guard lock(mutex_);
    return std::exchange(events_, {});
}

void BatchSizeManager::emit(std::int64_t iteration, double now_s, EventKind kind, std::optional<WorkerId> worker,
    std::string message, const EventActor& actor)
{
    events_.push_back(job_event(kind, iteration, now_s, std::move(message), actor, worker));
}

void BatchSizeManager::apply_requests(std::int64_t iteration, double now_s)
{
    std::lock_guard lock(mutex_);
    for (const Request& r : requests_) {
        WorkerOverride& a = applied_[static_cast<std::size_t>(r.worker)];
        const std::string who = "worker " + std::to_string(r.worker);
        switch (r.kind) {
        case Request::Kind::Pin:
            a.pinned = r.batch_size;
            emit(iteration, now_s, EventKind::Pin, r.worker, who + " pinned at batch " + std::to_string(r.batch_size),
                r.actor);
            break;
        case Request::Kind::Unpin:
            a.pinned.reset();
            emit(iteration, now_s, EventKind::Unpin, r.worker, who + " unpinned", r.actor);
            break;
        case Request::Kind::Exclude: {
            a.excluded = true;
            a.pinned.reset();
            std::ostringstream text;
            text << who << " excluded";
            if (r.for_s) {
                a.excluded_until = now_s + *r.for_s;
                overrides_[static_cast<std::size_t>(r.worker)].excluded_until = a.excluded_until;
                text << " for " << *r.for_s << " s";
            }
            if (r.batch_size > 0)
                text << "; its pin at batch " << r.batch_size << " is dropped";
            emit(iteration, now_s, EventKind::Exclude, r.worker, text.str(), r.actor);
            break;
        }
        case Request::Kind::Include:
            a.excluded = false;
            a.excluded_until.reset();
            emit(iteration, now_s, EventKind::Include, r.worker, who + " re-included", r.actor);
            break;
        case Request::Kind::Join:
            a = WorkerOverride {};
            break;
        case Request::Kind::Leave:
            a = departed();
            break;
        }
    }
    requests_.clear();
    const std::int32_t total_before = total_batch_;
    follow_membership();
    if (total_batch_ != total_before)
        emit(iteration, now_s, EventKind::TotalBatch, std::nullopt,
            "X = " + std::to_string(total_batch_) + " (" + std::to_string(batch_per_member_)
                + " per worker, elastic.batch_per_worker, x " + std::to_string(total_batch_ / batch_per_member_)
                + " workers); was " + std::to_string(total_before),
            EventActor::elastic());
    if (policy_request_) {
        PolicyRequest change = std::move(*policy_request_);
        policy_request_.reset();
        const std::string before = policy_->name();
        policy_ = std::move(change.policy);
        options_ = change.options;
        policy_spec_json_ = std::move(change.spec_json);
        blocking_ = options_.blocking.value_or(policy_->blocking());
        pending_.reset(); // the old policy's answer for the next iteration is not this policy's
        emit(iteration, now_s, EventKind::PolicyChange, std::nullopt, before + " -> " + policy_->name(), change.actor);
    }
    for (int i = 0; i < workers_; ++i) {
        WorkerOverride& a = applied_[static_cast<std::size_t>(i)];
        if (a.excluded && a.excluded_until && *a.excluded_until <= now_s) {
            a.excluded = false;
            a.excluded_until.reset();
            overrides_[static_cast<std::size_t>(i)] = a;
            emit(iteration, now_s, EventKind::Readmit, i,
                "worker " + std::to_string(i) + " re-admitted: its exclusion time ran out");
        }
    }
}

double BatchSizeManager::predicted_time(
    const std::vector<std::int32_t>& sizes, const std::vector<double>& speeds, const std::vector<double>& comm) const
{
    double worst = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i)
        if (sizes[i] > 0 && speeds[i] > 0)
            worst = std::max(worst, sizes[i] / speeds[i] + comm[i]);
    return worst;
}

BatchSizeManager::Proposal BatchSizeManager::index_by_worker(
    const Allocation& allocation, const std::vector<WorkerObservation>& observations) const
{
    Proposal p;
    p.size.resize(static_cast<std::size_t>(workers_));
    p.predicted.resize(static_cast<std::size_t>(workers_));
    p.decision = allocation.decision;
    for (std::size_t i = 0; i < observations.size() && i < allocation.batch_sizes.size(); ++i) {
        const auto w = static_cast<std::size_t>(observations[i].worker);
        p.size[w] = allocation.batch_sizes[i];
        if (i < allocation.predicted_speeds.size())
            p.predicted[w] = allocation.predicted_speeds[i];
    }
    return p;
}

bool BatchSizeManager::fits_limits(const std::vector<std::int32_t>& sizes) const
{
    for (std::size_t i = 0; i < sizes.size(); ++i)
        if (limits_[i] > 0 && sizes[i] > limits_[i])
            return false;
    return true;
}

std::vector<WorkerObservation> BatchSizeManager::initial_askers(const std::vector<WorkerOverride>& states) const
{
    // Following the members, X may be smaller than the slots: only the members are split.
    std::vector<WorkerObservation> askers;
    for (int i = 0; i < workers_; ++i)
        if (batch_per_member_ <= 0 || states[static_cast<std::size_t>(i)].member)
            askers.emplace_back().worker = i;
    return askers;
}

Allocation BatchSizeManager::initial()
{
    apply_requests(0, 0);
    const std::vector<WorkerObservation> askers = initial_askers(applied_);
    const Allocation proposal = policy_->initial(static_cast<int>(askers.size()), total_batch_);
    if (proposal.batch_sizes.size() != askers.size())
        throw std::logic_error("policy " + policy_->name() + " returned the wrong number of batch sizes");
    for (std::size_t k = 0; k < askers.size(); ++k) {
        const int i = askers[k].worker;
        const std::int32_t limit = limits_[static_cast<std::size_t>(i)];
        if (limit > 0 && proposal.batch_sizes[k] > limit)
            throw std::invalid_argument("policy " + policy_->name() + " gives worker " + std::to_string(i)
                + " a batch of " + std::to_string(proposal.batch_sizes[k]) + " samples, above its memory limit of "
                + std::to_string(limit) + " samples");
    }
    return assemble(index_by_worker(proposal, askers), 0, 0);
}

Allocation BatchSizeManager::next(
    const std::vector<WorkerObservation>& observations, std::int64_t iteration, double now_s)
{
    apply_requests(iteration, now_s);
    const auto runs = [&](const WorkerObservation& o) {
        return o.worker >= 0 && o.worker < workers_ && !applied_[static_cast<std::size_t>(o.worker)].idle();
    };
    // Copy only when someone must be left out: this runs at every barrier.
    std::vector<WorkerObservation> filtered;
    const bool everyone = std::all_of(observations.begin(), observations.end(), runs);
    if (!everyone)
        std::copy_if(observations.begin(), observations.end(), std::back_inserter(filtered), runs);
    const std::vector<WorkerObservation>& running = everyone ? observations : filtered;
    if (running.empty()) // everyone who ran was just excluded: split evenly among the rest
        return assemble(index_by_worker({}, {}), iteration, now_s);

    Allocation answer = policy_->next(running, total_batch_);
    if (answer.batch_sizes.size() != running.size())
        throw std::logic_error("policy " + policy_->name() + " returned the wrong number of batch sizes");
    {
        std::lock_guard lock(mutex_);
        for (const auto& e : answer.events)
            emit(iteration, now_s, e.kind, e.worker, e.message);
    }

    // Damping: keep the sizes in effect unless the new ones are predicted to be faster by
    // the threshold (only policies that predict speeds can be damped).
    if (options_.damping > 0 && answer.predicted_speeds.size() == running.size() && !current_.empty()) {
        std::vector<std::int32_t> in_effect;
        std::vector<double> speeds, comm;
        for (std::size_t i = 0; i < running.size(); ++i) {
            in_effect.push_back(current_[static_cast<std::size_t>(running[i].worker)]);
            speeds.push_back(answer.predicted_speeds[i].value_or(0));
            comm.push_back(running[i].comm_s);
        }
        const double keep = predicted_time(in_effect, speeds, comm);
        const double change = predicted_time(answer.batch_sizes, speeds, comm);
        if (std::accumulate(in_effect.begin(), in_effect.end(), std::int64_t { 0 }) == total_batch_
            && change > keep * (1 - options_.damping)) {
            answer.batch_sizes = in_effect;
            answer.decision += "/damped";
        }
    }

    Proposal proposal = index_by_worker(answer, running);
    if (!blocking_) {
        // The workers already started with the previous answer; this one serves the next iteration.
        Proposal fresh = std::move(proposal);
        if (pending_) {
            proposal = std::move(*pending_);
        } else { // no earlier answer: the sizes in effect stay
            proposal = fresh;
            for (std::size_t i = 0; i < current_.size(); ++i)
                proposal.size[i] = current_[i] > 0 ? std::optional<std::int32_t>(current_[i]) : std::nullopt;
        }
        pending_ = std::move(fresh);
    }
    return assemble(proposal, iteration, now_s);
}

Allocation BatchSizeManager::assemble(const Proposal& proposal, std::int64_t iteration, double now_s)
{
    const auto n = static_cast<std::size_t>(workers_);
    std::vector<std::int32_t> sizes(n, 0);
    std::int64_t pinned_total = 0;
    std::vector<std::size_t> free;
    free.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        const WorkerOverride& o = applied_[i];
        if (o.idle())
            continue;
        if (o.pinned) {
            sizes[i] = *o.pinned;
            pinned_total += *o.pinned;
        } else {
            free.push_back(i);
        }
    }
    const auto spare = static_cast<std::int32_t>(total_batch_ - pinned_total);
    std::int64_t proposed_total = 0;
    bool complete = true;
    double known_sum = 0;
    int known = 0;
    for (std::size_t i : free) {
        if (proposal.size[i]) {
            proposed_total += *proposal.size[i];
            known_sum += *proposal.size[i];
            ++known;
        } else {
            complete = false;
        }
    }
    // The job's least batch for every free worker, where X leaves that much for each.
    const std::int32_t floor = free.empty()
        ? 1
        : std::max<std::int32_t>(1, std::min<std::int32_t>(min_batch_, spare / static_cast<std::int32_t>(free.size())));
    const bool above_floor = std::all_of(
        free.begin(), free.end(), [&](std::size_t i) { return !proposal.size[i] || *proposal.size[i] >= floor; });
    if (complete && proposed_total == spare && above_floor) {
        for (std::size_t i : free)
            sizes[i] = *proposal.size[i];
    } else if (!free.empty()) {
        // Balance the free workers around the pins in the policy's proportions; a worker the
        // policy has not seen (just re-admitted) starts at the average.
        const double average = known > 0 ? known_sum / known : 1.0;
        std::vector<double> weights;
        weights.reserve(free.size());
        for (std::size_t i : free)
            weights.push_back(proposal.size[i] ? static_cast<double>(*proposal.size[i]) : average);
        const std::vector<std::int32_t> split = proportional_split(weights, spare, floor);
        for (std::size_t k = 0; k < free.size(); ++k)
            sizes[free[k]] = split[k];
    }

    std::string refused;
    if (!fits_limits(sizes)) {
        for (std::size_t i = 0; i < n; ++i)
            if (limits_[i] > 0 && sizes[i] > limits_[i]) {
                refused = "policy " + policy_->name() + " asked for " + std::to_string(sizes[i]) + " samples on worker "
                    + std::to_string(i) + ", above its memory limit of " + std::to_string(limits_[i]) + " samples";
                break;
            }
        bool same_shape = current_.size() == n;
        for (std::size_t i = 0; same_shape && i < n; ++i)
            same_shape
                = (current_[i] > 0) == (sizes[i] > 0) && (!applied_[i].pinned || current_[i] == *applied_[i].pinned);
        if (same_shape && fits_limits(current_)) {
            sizes = current_;
            refused += "; the allocation in effect is kept";
        } else {
            // Water-fill: cap at the limits and hand the excess to workers with room.
            for (int round = 0; round < workers_ && !fits_limits(sizes); ++round) {
                std::int64_t excess = 0;
                for (std::size_t i : free)
                    if (limits_[i] > 0 && sizes[i] > limits_[i]) {
                        excess += sizes[i] - limits_[i];
                        sizes[i] = limits_[i];
                    }
                for (std::size_t i : free)
                    if (excess > 0 && (limits_[i] == 0 || sizes[i] < limits_[i])) {
                        const std::int64_t room
                            = limits_[i] == 0 ? excess : std::min<std::int64_t>(excess, limits_[i] - sizes[i]);
                        sizes[i] += static_cast<std::int32_t>(room);
                        excess -= room;
                    }
            }
            refused += "; capped at the limits";
        }
        std::lock_guard lock(mutex_);
        emit(iteration, now_s, EventKind::Warning, std::nullopt, refused);
    }

    current_ = sizes;
    Allocation a;
    a.batch_sizes = std::move(sizes);
    a.predicted_speeds = proposal.predicted;
    a.decision = proposal.decision.empty() ? policy_->name() : proposal.decision;
    // Per-worker tags only when an override makes them differ.
    const bool overridden
        = std::any_of(applied_.begin(), applied_.end(), [](const WorkerOverride& o) { return o.idle() || o.pinned; });
    if (overridden) {
        a.decisions.resize(n, a.decision);
        for (std::size_t i = 0; i < n; ++i) {
            if (!applied_[i].member)
                a.decisions[i] = "not-a-member";
            else if (applied_[i].excluded)
                a.decisions[i] = "excluded";
            else if (applied_[i].pinned)
                a.decisions[i] = "pinned";
        }
    }
    return a;
}

namespace {

void put_override(StateWriter& out, const WorkerOverride& o)
{
    out.put(o.pinned);
    out.put(o.excluded);
    out.put(o.excluded_until);
    out.put(o.member);
}

WorkerOverride get_override(StateReader& in)
{
    WorkerOverride o;
    in.get(o.pinned, "pin");
    o.excluded = in.get_bool("exclusion");
    in.get(o.excluded_until, "exclusion end");
    o.member = in.get_bool("membership");
    return o;
}

} // namespace

bool BatchSizeManager::save_state(StateWriter& out) const
{
    out.put(policy_->name());
    out.put(options_.damping);
    out.put(options_.blocking);
    out.put(blocking_);
    {
        std::lock_guard lock(mutex_);
        for (const WorkerOverride& o : overrides_)
            put_override(out, o);
    }
    for (const WorkerOverride& o : applied_)
        put_override(out, o);
    out.put(current_);
    out.put(pending_.has_value());
    if (pending_) {
        out.put(pending_->size);
        out.put(pending_->predicted);
        out.put(pending_->decision);
    }
    return policy_->save_state(out);
}

void BatchSizeManager::load_state(StateReader& in)
{
    const std::string policy = in.get_string("policy name");
    if (policy != policy_->name())
        in.fail("policy name",
            "the checkpoint was written under policy " + policy + ", this job's manager runs " + policy_->name());
    options_.damping = in.get<double>("damping");
    in.get(options_.blocking, "blocking");
    blocking_ = in.get_bool("blocking in effect");
    {
        std::lock_guard lock(mutex_);
        for (WorkerOverride& o : overrides_)
            o = get_override(in);
    }
    for (WorkerOverride& o : applied_)
        o = get_override(in);
    in.get(current_, "batch sizes in effect");
    if (current_.size() != static_cast<std::size_t>(workers_))
        in.fail("batch sizes in effect",
            "names " + std::to_string(current_.size()) + " workers; the job has " + std::to_string(workers_));
    if (in.get_bool("pending answer")) {
        Proposal p;
        const std::size_t n = in.array_size("pending sizes", 1);
        p.size.resize(n);
        for (auto& s : p.size)
            in.get(s, "pending sizes");
        const std::size_t m = in.array_size("pending predictions", 1);
        p.predicted.resize(m);
        for (auto& v : p.predicted)
            in.get(v, "pending predictions");
        p.decision = in.get_string("pending decision");
        pending_ = std::move(p);
    } else {
        pending_.reset();
    }
    policy_->load_state(in);
    std::lock_guard lock(mutex_);
    follow_membership();
}

} // namespace fulcrum::balance
