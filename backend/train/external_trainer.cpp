#include "train/external_trainer.h"

#include "common/error.h"
#include "train/stall_watch.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <stdexcept>

namespace fulcrum::train {

std::string_view to_string(RankPlan::State state)
{
    return name_of(kRankPlanStates, state);
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

} // namespace

ExternalTrainer::ExternalTrainer(ExternalJobConfig config, std::unique_ptr<balance::BatchSizeManager> manager,
    std::shared_ptr<ExternalRanks> ranks, TrainingObserver& observer)
    : config_(std::move(config))
    , manager_(std::move(manager))
    , ranks_(std::move(ranks))
    , observer_(observer)
    , slowdowns_(config_.ranks.size(), 1.0)
    , measured_speed_(config_.ranks.size(), 0.0)
{
    const int n = static_cast<int>(config_.ranks.size());
    if (!manager_ || manager_->workers() != n)
        throw std::invalid_argument("the batch-size manager was made for a different number of ranks");
    if (!ranks_)
        throw std::invalid_argument("an external job needs its ranks");
    sync::SyncSpec bsp;
    control_ = std::make_unique<JobControl>(*manager_, n, bsp, [](const sync::SyncSpec&) {
        throw RefusedRequest("sync-model-not-switchable",
            "an external job's ranks synchronise by their framework's all-reduce at every iteration (bsp)");
    });
    mail_ = std::make_unique<SafePointMail>(config_.job, *control_, *manager_, observer_);
}

ExternalTrainer::~ExternalTrainer() = default;

void ExternalTrainer::resume_from_checkpoint(const std::string& /*state*/)
{
    throw InputError("external job " + std::to_string(config_.job), "checkpoint",
        "an external job keeps no checkpoint: its parameters live in its framework's ranks");
}

void ExternalTrainer::emit(std::int64_t at, double now, EventKind kind, std::string message, const EventActor& actor,
    std::optional<WorkerId> worker)
{
    mail_->emit(at, now, kind, std::move(message), actor, worker);
}

void ExternalTrainer::lose(const GatheredReports& gathered, std::int64_t at, double now)
{
    std::string names;
    for (const WorkerId rank : gathered.lost) {
        const std::string& name = config_.ranks[static_cast<std::size_t>(rank)];
        emit(at, now, EventKind::WorkerLost, "rank " + std::to_string(rank) + " (" + name + "): " + gathered.lost_why,
            EventActor::system(), rank);
        names += (names.empty() ? "" : ", ") + std::to_string(rank) + " (" + name + ")";
    }
    const std::string why = "rank " + names + " lost at iteration " + std::to_string(at) + ": " + gathered.lost_why;
    emit(at, now, EventKind::JobLost, why, EventActor::system());
    RankPlan plan;
    plan.state = RankPlan::State::Lost;
    plan.iteration = at;
    plan.message = why;
    ranks_->finish(plan);
    throw RankLost(why);
}

std::vector<IterationRecord> ExternalTrainer::rows_of(const GatheredReports& gathered, const balance::Allocation& given,
    std::int64_t k, double opened, double closed) const
{
    // The all-reduce's time holds the wait for the slowest rank's compute as well as the
    // transfer: the transfer is what is left once that wait is taken off.
    double slowest = 0;
    for (const RankReport& r : gathered.reports)
        slowest = std::max(slowest, r.compute_s);
    std::vector<IterationRecord> rows;
    for (std::size_t i = 0; i < gathered.reports.size(); ++i) {
        const RankReport& r = gathered.reports[i];
        IterationRecord row;
        row.job = config_.job;
        row.worker = static_cast<WorkerId>(i);
        row.iteration = k;
        row.batch_size = r.batch_size;
        row.compute_s = r.compute_s;
        row.comm_s = std::max(0.0, r.sync_s - (slowest - r.compute_s));
        row.start_s = opened;
        row.end_s = opened + row.compute_s + row.comm_s;
        // The barrier closes when the last report arrives; what a rank spends neither
        // computing nor communicating (its optimizer step, waiting) is its wait.
        row.wait_s = std::max(0.0, closed - row.end_s);
        row.cpu_share = r.cpu_share;
        row.memory_share = r.memory_share;
        row.gpu.memory_gb = r.gpu_memory_gb; // PyTorch's own allocations on the rank's GPU
        row.speed = r.compute_s > 0 ? r.batch_size / r.compute_s : 0;
        if (i < given.predicted_speeds.size())
            row.predicted_speed = given.predicted_speeds[i];
        row.loss = r.loss;
        row.decision = i < given.decisions.size() && !given.decisions[i].empty() ? given.decisions[i] : given.decision;
        rows.push_back(std::move(row));
    }
    return rows;
}

double ExternalTrainer::answer(std::int64_t k, const std::vector<balance::WorkerObservation>& observations,
    double closed, balance::Allocation& allocation, Clock::time_point start)
{
    // planned_ holds the allocations of iterations k .. k + plan_ahead: the manager sizes
    // the last of them from the reports of k - 1.
    if (k == first_) {
        planned_.assign(static_cast<std::size_t>(config_.plan_ahead) + 1, allocation); // the initial one
    } else {
        planned_.push_back(manager_->next(observations, k - 1, closed));
        // The manager's decisions (a pin, an exclusion, new sizes) apply to the iteration just
        // sized, and are marked there; the notes and the cluster came now.
        const std::int64_t sized = std::min(k + config_.plan_ahead, std::max<std::int64_t>(k, config_.iterations - 1));
        mail_->forward_manager_events(k, closed, sized);
    }
    allocation = planned_.front();
    planned_.pop_front();
    for (const JobControl::Slowdown& d : control_->take<JobControl::Slowdown>()) {
        double& factor = slowdowns_[static_cast<std::size_t>(d.worker)];
        if (factor == d.factor)
            continue;
        factor = d.factor;
        emit(k, closed, d.factor == 1 ? EventKind::StragglerCleared : EventKind::StragglerInjected,
            d.factor == 1 ? "rank " + std::to_string(d.worker) + " runs at its own speed again"
                          : "rank " + std::to_string(d.worker) + " sleeps to take " + std::to_string(d.factor)
                    + "x its compute time",
            d.actor, d.worker);
    }
    RankPlan plan;
    plan.iteration = k;
    plan.batch_sizes = allocation.batch_sizes;
    plan.slowdowns = slowdowns_;
    for (std::size_t j = 0; j < planned_.size() && k + 1 + static_cast<std::int64_t>(j) < config_.iterations; ++j)
        plan.ahead.push_back(planned_[j].batch_sizes);
    const double opened = seconds_since(start);
    ranks_->answer(plan);
    return opened;
}

std::optional<double> ExternalTrainer::predicted_s(std::size_t r, const balance::Allocation& given) const
{
    const double speed
        = r < given.predicted_speeds.size() && given.predicted_speeds[r] && *given.predicted_speeds[r] > 0
        ? *given.predicted_speeds[r]
        : measured_speed_[r];
    if (speed <= 0 || r >= given.batch_sizes.size() || given.batch_sizes[r] <= 0)
        return std::nullopt;
    return given.batch_sizes[r] / speed;
}

std::string ExternalTrainer::who(std::size_t r) const
{
    return "rank " + std::to_string(r) + " (" + config_.ranks[r] + ")";
}

GatheredReports ExternalTrainer::gather_watching(std::int64_t k, const std::atomic<bool>* stop,
    const balance::Allocation& given, double opened, std::vector<bool>& stalled)
{
    std::vector<double> limits(config_.ranks.size(), 0.0);
    for (std::size_t r = 0; r < limits.size(); ++r)
        if (const std::optional<double> p = predicted_s(r, given))
            limits[r] = config_.stall.threshold_s(*p);
    stalled.assign(config_.ranks.size(), false);
    for (;;) {
        GatheredReports gathered = ranks_->gather(k, stop, limits);
        if (gathered.stalled.empty())
            return gathered;
        for (const auto& [rank, since_plan] : gathered.stalled) {
            const auto r = static_cast<std::size_t>(rank);
            stalled[r] = true;
            emit(k, opened + since_plan, EventKind::WorkerStalled,
                stall_message(who(r), given.batch_sizes[r], since_plan, predicted_s(r, given).value_or(0), limits[r]),
                EventActor::system(), rank);
        }
    }
}

TrainingResult ExternalTrainer::run(const std::atomic<bool>* stop)
{
    const Clock::time_point start = Clock::now();
    TrainingResult result;
    const auto stopped = [&](std::int64_t at) {
        RankPlan plan;
        plan.state = RankPlan::State::Stopped;
        plan.iteration = at;
        plan.message = "the job was stopped at iteration " + std::to_string(at);
        ranks_->finish(plan);
        result.stopped = true;
    };

    GatheredReports gathered = ranks_->gather(-1, stop, {});
    if (gathered.stopped) {
        stopped(0);
        return result;
    }
    if (!gathered.lost.empty())
        lose(gathered, 0, seconds_since(start));
    // A group that restarted from its own checkpoint (torchrun --max_restarts) goes on from
    // the iteration after it: rank 0's word, every rank having read the same checkpoint.
    first_ = std::clamp<std::int64_t>(
        gathered.reports.empty() ? 0 : gathered.reports.front().resume_from.value_or(0), 0, config_.iterations);
    for (std::size_t r = 1; r < gathered.reports.size(); ++r)
        if (gathered.reports[r].resume_from.value_or(0) != gathered.reports.front().resume_from.value_or(0))
            throw std::runtime_error("the ranks would resume from different iterations: " + who(0) + " from "
                + std::to_string(gathered.reports.front().resume_from.value_or(0)) + ", " + who(r) + " from "
                + std::to_string(gathered.reports[r].resume_from.value_or(0))
                + " (their state folder must be one they share)");
    control_->policy_in_effect(manager_->policy().name());
    balance::Allocation allocation = manager_->initial();
    mail_->forward_manager_events(first_, 0);
    emit(first_, seconds_since(start), EventKind::RanksReady,
        std::to_string(config_.ranks.size()) + " ranks joined; training "
            + (first_ > 0 ? "iterations " + std::to_string(first_) + " to " + std::to_string(config_.iterations - 1)
                        + " (from the ranks' checkpoint)"
                          : std::to_string(config_.iterations) + " iterations")
            + " of " + std::to_string(config_.total_batch) + " samples",
        EventActor::system());

    double closed = 0;
    double sample_loss = 0;
    double opened = 0;
    bool answered = false; // iteration k's plan went out at the end of k - 1
    std::vector<balance::WorkerObservation> observations;
    for (std::int64_t k = first_; k < config_.iterations; ++k) {
        if (!answered) {
            mail_->hold_if_paused(k, closed, stop, "held before iteration " + std::to_string(k),
                [start](double) { return seconds_since(start); });
            if (stop && stop->load()) {
                stopped(k);
                break;
            }
            // Sized after a pause, so what an operator asked meanwhile is in this very plan
            // (with plan_ahead d, in the plan of d iterations later: this one was sized before).
            opened = answer(k, observations, closed, allocation, start);
        }
        std::vector<bool> stalled;
        gathered = gather_watching(k, stop, allocation, opened, stalled);
        if (gathered.stopped) {
            stopped(k);
            break;
        }
        closed = seconds_since(start);
        if (!gathered.lost.empty())
            lose(gathered, k, closed);
        // A rank trains on what it was given; one that says otherwise is recorded as it says.
        const std::vector<IterationRecord> rows = rows_of(gathered, allocation, k, opened, closed);
        for (std::size_t r = 0; r < stalled.size(); ++r)
            if (stalled[r])
                emit(k, closed, EventKind::WorkerRecovered,
                    recovery_message(
                        who(r), allocation.batch_sizes[r], closed - opened, predicted_s(r, allocation).value_or(0)),
                    EventActor::system(), static_cast<WorkerId>(r));
        for (const IterationRecord& row : rows)
            if (row.speed > 0)
                measured_speed_[static_cast<std::size_t>(row.worker)] = row.speed;
        observations.clear();
        double loss = 0;
        std::int64_t batch = 0;
        std::optional<RankReport> evaluated;
        for (const IterationRecord& row : rows) {
            const RankReport& r = gathered.reports[static_cast<std::size_t>(row.worker)];
            if (r.test_accuracy)
                evaluated = r;
            if (row.batch_size <= 0)
                continue;
            balance::WorkerObservation o;
            o.worker = row.worker;
            o.batch_size = row.batch_size;
            o.compute_s = row.compute_s;
            o.comm_s = row.comm_s;
            o.cpu_share = row.cpu_share;
            o.memory_share = row.memory_share;
            o.next_cpu_share = row.cpu_share;
            o.next_memory_share = row.memory_share;
            observations.push_back(o);
            loss += row.loss * row.batch_size;
            batch += row.batch_size;
        }
        // Nothing holds the next iteration: its plan goes out before this one is recorded and
        // streamed, so the ranks wait for the batch-size manager alone.
        answered = k + 1 < config_.iterations && !control_->pause_requested() && !(stop && stop->load());
        if (answered)
            opened = answer(k + 1, observations, closed, allocation, start);
        observer_.on_iteration(rows);
        sample_loss = batch > 0 ? loss / static_cast<double>(batch) : sample_loss;
        if (evaluated) {
            EvaluationRecord e;
            e.job = config_.job;
            e.iteration = k;
            e.time_s = closed;
            e.wall_s = closed;
            e.train_loss = sample_loss;
            e.test_accuracy = *evaluated->test_accuracy;
            e.test_loss = evaluated->test_loss.value_or(0);
            observer_.on_evaluation(e);
            result.final_evaluation = e;
            result.best_accuracy = std::max(result.best_accuracy, e.test_accuracy);
        }
        ++result.iterations;
    }
    if (!result.stopped) {
        RankPlan plan;
        plan.state = RankPlan::State::Finished;
        plan.iteration = config_.iterations;
        plan.message = std::to_string(result.iterations) + " iterations trained";
        ranks_->finish(plan);
    }
    result.updates = result.iterations;
    result.time_s = closed;
    result.wall_s = seconds_since(start);
    result.mean_iteration_s = result.iterations > 0 ? closed / static_cast<double>(result.iterations) : 0;
    return result;
}

} // namespace fulcrum::train
