#include "ui/models/iteration_history.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <vector>

namespace fulcrum::ui {

double barrier_s(const protocol::IterationRows& rows)
{
    double barrier = 0;
    for (const IterationRecord& r : rows.rows)
        if (r.batch_size > 0)
            barrier = std::max(barrier, r.end_s + r.wait_s);
    return barrier;
}

JobHistory::JobHistory(std::size_t capacity)
    : capacity_(capacity)
    , iterations_(capacity)
{
}

void JobHistory::append(const protocol::IterationRows& rows)
{
    if (rows.rows.empty())
        return;
    IterationSummary summary;
    summary.iteration = rows.iteration;
    summary.start_s = std::numeric_limits<double>::infinity();
    double slowest = -1, fastest = std::numeric_limits<double>::infinity(), total = 0;
    std::vector<double> times;
    std::vector<std::int32_t> sizes;
    for (const IterationRecord& r : rows.rows) {
        if (r.worker < 0)
            continue;
        const auto w = static_cast<std::size_t>(r.worker);
        while (workers_.size() <= w)
            workers_.emplace_back(capacity_);
        WorkerSample s;
        s.iteration = r.iteration;
        s.start_s = r.start_s;
        s.end_s = r.end_s;
        s.batch_size = r.batch_size;
        s.compute_s = static_cast<float>(r.compute_s);
        s.comm_s = static_cast<float>(r.comm_s);
        s.wait_s = static_cast<float>(r.wait_s);
        s.speed = static_cast<float>(r.speed);
        s.predicted_speed = r.predicted_speed ? static_cast<float>(*r.predicted_speed) : NAN;
        s.cpu_share = static_cast<float>(r.cpu_share);
        RingBuffer<WorkerSample>& ring = workers_[w];
        if (!ring.empty() && ring.back().iteration >= s.iteration)
            continue; // already have it (a snapshot repeating the last iteration)
        ring.push_back(s);
        if (r.batch_size == 0)
            continue; // it sat this iteration out

        const double t = s.batch_time_s();
        times.push_back(t);
        sizes.push_back(r.batch_size);
        total += t;
        fastest = std::min(fastest, t);
        summary.start_s = std::min(summary.start_s, r.start_s);
        summary.barrier_s = std::max(summary.barrier_s, r.end_s + r.wait_s);
        if (t > slowest) {
            slowest = t;
            summary.straggler = r.worker;
        }
    }
    if (summary.straggler < 0 || (!iterations_.empty() && iterations_.back().iteration >= rows.iteration))
        return;
    std::size_t ran = 0;
    for (const IterationRecord& r : rows.rows)
        ran += r.batch_size > 0 ? 1 : 0;
    summary.mean_batch_time_s = total / static_cast<double>(ran);
    summary.fastest_batch_time_s = fastest;
    summary.spread = summary.mean_batch_time_s > 0 ? (slowest - fastest) / summary.mean_batch_time_s : 0;
    summary.slowest_batch_time_s = slowest;
    const auto middle = [](auto& values) {
        const auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
        std::nth_element(values.begin(), mid, values.end());
        return *mid;
    };
    summary.median_batch_time_s = middle(times);
    if (times.size() > IterationSummary::kWholeRangeUpTo && summary.mean_batch_time_s > 0) {
        const auto at = [&times](double q) {
            const auto k
                = times.begin() + static_cast<std::ptrdiff_t>(std::lround(q * static_cast<double>(times.size() - 1)));
            std::nth_element(times.begin(), k, times.end());
            return *k;
        };
        const double p10 = at(0.1), p90 = at(0.9);
        summary.spread = std::max(p90 - p10, slowest - summary.median_batch_time_s) / summary.mean_batch_time_s;
        summary.robust_spread = true;
    }
    summary.least_batch = *std::min_element(sizes.begin(), sizes.end());
    summary.greatest_batch = *std::max_element(sizes.begin(), sizes.end());
    summary.median_batch = middle(sizes);
    iterations_.push_back(summary);
}

std::uint64_t JobHistory::next_generation()
{
    static std::atomic<std::uint64_t> counter { 0 };
    return ++counter;
}

void JobHistory::truncate_after(double time_s)
{
    generation_ = next_generation();
    while (!iterations_.empty() && iterations_.back().barrier_s > time_s + 1e-9)
        iterations_.pop_back();
    const std::int64_t last
        = iterations_.empty() ? std::numeric_limits<std::int64_t>::min() : iterations_.back().iteration;
    for (RingBuffer<WorkerSample>& ring : workers_)
        while (!ring.empty() && ring.back().iteration > last)
            ring.pop_back();
}

void JobHistory::clear()
{
    generation_ = next_generation();
    workers_.clear();
    iterations_.clear();
}

std::optional<std::int64_t> JobHistory::first_iteration() const
{
    return iterations_.empty() ? std::nullopt : std::optional(iterations_.front().iteration);
}

std::optional<std::int64_t> JobHistory::last_iteration() const
{
    return iterations_.empty() ? std::nullopt : std::optional(iterations_.back().iteration);
}

std::size_t JobHistory::position_of(std::int64_t iteration) const
{
    return iterations_.partition_point([iteration](const IterationSummary& s) { return s.iteration < iteration; });
}

std::size_t JobHistory::position_of(WorkerId worker, std::int64_t iteration) const
{
    return workers_.at(static_cast<std::size_t>(worker)).partition_point([iteration](const WorkerSample& s) {
        return s.iteration < iteration;
    });
}

std::vector<Equilibrium> equilibria(const JobHistory& history, double threshold, std::size_t window)
{
    std::vector<Equilibrium> out;
    const auto& its = history.iterations();
    std::size_t run_start = 0, run = 0;
    for (std::size_t i = 0; i <= its.size(); ++i) {
        if (i < its.size() && its[i].spread < threshold) {
            if (run++ == 0)
                run_start = i;
            continue;
        }
        if (run >= window)
            out.push_back({ its[run_start].iteration, its[i - 1].iteration });
        run = 0;
    }
    return out;
}

} // namespace fulcrum::ui
