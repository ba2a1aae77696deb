#include "balance/lbbsp_gpu_policy.h"

#include "balance/rounding.h"
#include "balance/uniform_policy.h"

#include <numeric>

namespace fulcrum::balance {

LbBspGpuPolicy::LbBspGpuPolicy(GpuPolicyOptions options)
    : options_(options)
{
}

Allocation LbBspGpuPolicy::initial(int workers, std::int32_t total_batch)
{
    Allocation a = UniformPolicy().initial(workers, total_batch);
    a.decision = "lbbsp-gpu/fast-approach";
    return a;
}

Allocation LbBspGpuPolicy::next(const std::vector<WorkerObservation>& observations, std::int32_t total_batch)
{
    Allocation a;
    const std::size_t n = observations.size();
    // Start from what each worker ran; if workers left or joined, rescale to the total.
    std::vector<double> ran;
    for (const auto& o : observations)
        ran.push_back(o.batch_size);
    const auto ran_total = std::accumulate(ran.begin(), ran.end(), 0.0);
    if (ran_total == total_batch) {
        for (const auto& o : observations)
            a.batch_sizes.push_back(o.batch_size);
    } else {
        a.batch_sizes = proportional_split(ran, total_batch);
    }

    std::optional<std::size_t> leader, straggler;
    const std::int32_t delta = phase().delta;
    for (std::size_t i = 0; i < n; ++i) {
        const WorkerObservation& o = observations[i];
        if (!straggler || o.batch_time_s() > observations[*straggler].batch_time_s())
            straggler = i;
        const bool has_memory = o.device_memory <= options_.memory_ceiling
            && (o.batch_limit == 0 || a.batch_sizes[i] + delta <= o.batch_limit);
        if (has_memory && (!leader || o.batch_time_s() < observations[*leader].batch_time_s()))
            leader = i;
    }
    const auto tag = [&] { return std::string(fine_tuning_ ? "lbbsp-gpu/fine-tune" : "lbbsp-gpu/fast-approach"); };
    if (n < 2 || !leader || !straggler || *leader == *straggler) {
        streak_ = 0;
        a.decision = tag();
        return a;
    }
    const WorkerId leader_id = observations[*leader].worker;
    const WorkerId straggler_id = observations[*straggler].worker;

    if (!fine_tuning_ && (former_leaders_.contains(straggler_id) || former_stragglers_.contains(leader_id))) {
        fine_tuning_ = true;
        streak_ = 0;
        a.events.push_back({ "phase-change", std::nullopt,
            "fast-approach -> fine-tune: worker " + std::to_string(former_leaders_.contains(straggler_id) ? straggler_id : leader_id)
                + " changed sides (delta " + std::to_string(options_.fine_tune.delta) + ", window "
                + std::to_string(options_.fine_tune.window) + ")" });
    }
    former_leaders_.insert(leader_id);
    former_stragglers_.insert(straggler_id);

    streak_ = (leader_id == last_leader_ && straggler_id == last_straggler_) ? streak_ + 1 : 1;
    last_leader_ = leader_id;
    last_straggler_ = straggler_id;

    if (streak_ >= phase().window) {
        streak_ = 0;
        const std::int32_t step = phase().delta;
        if (a.batch_sizes[*straggler] - step <= step) {
            if (warned_.insert(straggler_id).second)
                a.events.push_back({ "warning", straggler_id,
                    "remove this straggler: worker " + std::to_string(straggler_id) + " is the slowest even at batch "
                        + std::to_string(a.batch_sizes[*straggler]) + " and cannot shrink by another " + std::to_string(step) });
        } else {
            a.batch_sizes[*straggler] -= step;
            a.batch_sizes[*leader] += step;
        }
    }
    a.decision = tag();
    return a;
}

} // namespace fulcrum::balance
