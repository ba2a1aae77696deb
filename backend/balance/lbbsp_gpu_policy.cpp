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
    // Start from the policy's own last answer: used non-blocking, the sizes that ran lag it by
    // an iteration, and building on them would undo the last move.
    std::vector<double> base;
    double base_total = 0;
    for (const auto& o : observations) {
        const auto it = sizes_.find(o.worker);
        base.push_back(it != sizes_.end() ? it->second : o.batch_size);
        base_total += base.back();
    }
    if (base_total == total_batch) {
        for (double b : base)
            a.batch_sizes.push_back(static_cast<std::int32_t>(b));
    } else {
        a.batch_sizes = proportional_split(base, total_batch);
    }

    const std::size_t keep
        = static_cast<std::size_t>(std::max(options_.fast_approach.window, options_.fine_tune.window));
    for (const auto& o : observations) {
        auto& history = times_[o.worker];
        history.push_back(o.batch_time_s());
        while (history.size() > keep)
            history.pop_front();
    }
    ++since_move_;

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
    const auto finish = [&]() {
        a.decision = fine_tuning_ ? "lbbsp-gpu/fine-tune" : "lbbsp-gpu/fast-approach";
        for (std::size_t i = 0; i < n; ++i)
            sizes_[observations[i].worker] = a.batch_sizes[i];
        return a;
    };
    if (n < 2 || !leader || !straggler || *leader == *straggler)
        return finish();
    const WorkerId leader_id = observations[*leader].worker;
    const WorkerId straggler_id = observations[*straggler].worker;

    if (!fine_tuning_ && (former_leaders_.contains(straggler_id) || former_stragglers_.contains(leader_id))) {
        fine_tuning_ = true;
        since_move_ = 0;
        const WorkerId turned = former_leaders_.contains(straggler_id) ? straggler_id : leader_id;
        a.events.push_back({ EventKind::PhaseChange, turned,
            "fast-approach -> fine-tune: worker " + std::to_string(turned) + " changed sides (delta "
                + std::to_string(options_.fine_tune.delta) + ", window " + std::to_string(options_.fine_tune.window)
                + ")" });
    }
    former_leaders_.insert(leader_id);
    former_stragglers_.insert(straggler_id);

    const auto window = static_cast<std::size_t>(phase().window);
    const auto& lead_times = times_[leader_id];
    const auto& straggle_times = times_[straggler_id];
    bool led_throughout
        = since_move_ >= phase().window && lead_times.size() >= window && straggle_times.size() >= window;
    for (std::size_t j = 1; led_throughout && j <= window; ++j)
        led_throughout = lead_times[lead_times.size() - j] < straggle_times[straggle_times.size() - j];
    if (led_throughout) {
        since_move_ = 0;
        const std::int32_t step = phase().delta;
        if (a.batch_sizes[*straggler] - step <= step) {
            if (warned_.insert(straggler_id).second)
                a.events.push_back({ EventKind::Warning, straggler_id,
                    "remove this straggler: worker " + std::to_string(straggler_id) + " is the slowest even at batch "
                        + std::to_string(a.batch_sizes[*straggler]) + " and cannot shrink by another "
                        + std::to_string(step) });
        } else {
            a.batch_sizes[*straggler] -= step;
            a.batch_sizes[*leader] += step;
        }
    }
    return finish();
}

namespace {

void put_ids(StateWriter& out, const std::set<WorkerId>& ids)
{
    out.put(std::vector<WorkerId>(ids.begin(), ids.end()));
}

std::set<WorkerId> get_ids(StateReader& in, const char* what)
{
    std::vector<WorkerId> ids;
    in.get(ids, what);
    return { ids.begin(), ids.end() };
}

} // namespace

bool LbBspGpuPolicy::save_state(StateWriter& out) const
{
    out.put(fine_tuning_);
    out.put(since_move_);
    out.put(static_cast<std::uint64_t>(sizes_.size()));
    for (const auto& [worker, size] : sizes_) {
        out.put(worker);
        out.put(size);
    }
    out.put(static_cast<std::uint64_t>(times_.size()));
    for (const auto& [worker, times] : times_) {
        out.put(worker);
        out.put(std::vector<double>(times.begin(), times.end()));
    }
    put_ids(out, former_leaders_);
    put_ids(out, former_stragglers_);
    put_ids(out, warned_);
    return true;
}

void LbBspGpuPolicy::load_state(StateReader& in)
{
    fine_tuning_ = in.get_bool("phase");
    since_move_ = in.get<int>("iterations since the last move");
    sizes_.clear();
    for (std::size_t n = in.array_size("policy sizes", 1); n > 0; --n) {
        const auto worker = in.get<WorkerId>("policy sizes");
        sizes_[worker] = in.get<std::int32_t>("policy sizes");
    }
    times_.clear();
    for (std::size_t n = in.array_size("batch times", 1); n > 0; --n) {
        const auto worker = in.get<WorkerId>("batch times");
        std::vector<double> times;
        in.get(times, "batch times");
        times_[worker] = std::deque<double>(times.begin(), times.end());
    }
    former_leaders_ = get_ids(in, "former leaders");
    former_stragglers_ = get_ids(in, "former stragglers");
    warned_ = get_ids(in, "warned workers");
}

} // namespace fulcrum::balance
