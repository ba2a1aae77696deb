#include "perf/resource_timeline.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fulcrum::perf {

ResourceTimeline::ResourceTimeline(std::vector<ResourcePoint> scripted, std::optional<ColocatedLoad> colocated,
    std::uint64_t seed, std::optional<CompetingProcess> competing)
    : scripted_(std::move(scripted))
    , colocated_(colocated)
    , competing_(competing)
    , seed_(seed)
    , rng_(seed)
{
    if (competing_ && (competing_->run_probability <= 0 || competing_->period_s <= 0))
        competing_.reset();
    // Each worker's process keeps its own rhythm: periods start at a seeded offset, so the
    // workers of a cluster do not all change state at the same instant.
    if (competing_)
        competing_offset_
            = static_cast<double>(splitmix64(seed ^ 0xc0ffeeULL) >> 11) * 0x1.0p-53 * competing_->period_s;
    std::stable_sort(scripted_.begin(), scripted_.end(), [](const auto& a, const auto& b) { return a.at_s < b.at_s; });
    if (colocated_ && colocated_->arrivals_per_hour <= 0)
        colocated_.reset();
    if (colocated_)
        next_arrival_ = -std::log(1.0 - uniform01(rng_)) * 3600.0 / colocated_->arrivals_per_hour;
}

void ResourceTimeline::generate_until(double t)
{
    if (!colocated_)
        return;
    const ColocatedLoad& load = *colocated_;
    // Look ahead one mean duration so that next_change_after sees upcoming arrivals.
    const double horizon = t + load.mean_duration_s;
    while (next_arrival_ <= horizon) {
        Task task {};
        task.start = next_arrival_;
        task.end = task.start - std::log(1.0 - uniform01(rng_)) * load.mean_duration_s;
        task.cpu = load.cpu_min + (load.cpu_max - load.cpu_min) * uniform01(rng_);
        task.memory = load.memory_min + (load.memory_max - load.memory_min) * uniform01(rng_);
        tasks_.push_back(task);
        next_arrival_ += -std::log(1.0 - uniform01(rng_)) * 3600.0 / load.arrivals_per_hour;
    }
    generated_until_ = horizon;
    // Forget tasks that ended long ago; queries only move forward in time in practice.
    std::erase_if(tasks_, [&](const Task& task) { return task.end < t - 4 * load.mean_duration_s; });
}

void ResourceTimeline::save_state(StateWriter& out) const
{
    out.put(competing_offset_);
    out.put(rng_);
    std::vector<double> tasks;
    for (const Task& task : tasks_)
        tasks.insert(tasks.end(), { task.start, task.end, task.cpu, task.memory });
    out.put(tasks);
    out.put(generated_until_);
    out.put(next_arrival_);
}

void ResourceTimeline::load_state(StateReader& in)
{
    competing_offset_ = in.get<double>("competing offset");
    in.get(rng_, "resource stream");
    std::vector<double> tasks;
    in.get(tasks, "co-located tasks");
    if (tasks.size() % 4 != 0)
        in.fail("co-located tasks", "is not a list of (start, end, cpu, memory)");
    tasks_.clear();
    for (std::size_t i = 0; i < tasks.size(); i += 4)
        tasks_.push_back({ tasks[i], tasks[i + 1], tasks[i + 2], tasks[i + 3] });
    generated_until_ = in.get<double>("resources generated until");
    next_arrival_ = in.get<double>("next co-located arrival");
}

ResourceShare ResourceTimeline::at(double t)
{
    ResourceShare share;
    for (const auto& point : scripted_) {
        if (point.at_s > t)
            break;
        share = point.share;
    }
    if (colocated_) {
        if (t >= generated_until_)
            generate_until(t);
        double cpu_taken = 0, memory_taken = 0;
        for (const auto& task : tasks_)
            if (task.start <= t && t < task.end) {
                cpu_taken += task.cpu;
                memory_taken += task.memory;
            }
        share.cpu *= std::max(0.0, 1.0 - cpu_taken);
        share.memory *= std::max(0.0, 1.0 - memory_taken);
    }
    if (competing_
        && competing_runs(static_cast<std::int64_t>(std::floor((t + competing_offset_) / competing_->period_s)))) {
        share.cpu *= 1.0 - competing_->cpu;
        share.memory *= 1.0 - competing_->memory;
    }
    share.cpu = std::clamp(share.cpu, kMinimumShare, 1.0);
    share.memory = std::clamp(share.memory, kMinimumShare, 1.0);
    return share;
}

bool ResourceTimeline::competing_runs(std::int64_t period) const
{
    if (competing_->run_probability >= 1)
        return true;
    // Random access by period: a hash of (seed, period), so no state and no horizon.
    const std::uint64_t h = splitmix64(seed_ ^ splitmix64(static_cast<std::uint64_t>(period) + 0x5bd1e995ULL));
    return static_cast<double>(h >> 11) * 0x1.0p-53 < competing_->run_probability;
}

double ResourceTimeline::next_change_after(double t)
{
    double next = std::numeric_limits<double>::infinity();
    if (competing_ && competing_->run_probability < 1)
        next = (std::floor((t + competing_offset_) / competing_->period_s) + 1) * competing_->period_s
            - competing_offset_;
    for (const auto& point : scripted_)
        if (point.at_s > t) {
            next = std::min(next, point.at_s);
            break;
        }
    if (colocated_) {
        if (t >= generated_until_)
            generate_until(t);
        next = std::min(next, next_arrival_);
        for (const auto& task : tasks_) {
            if (task.start > t)
                next = std::min(next, task.start);
            if (task.end > t)
                next = std::min(next, task.end);
        }
    }
    return next;
}

} // namespace fulcrum::perf
