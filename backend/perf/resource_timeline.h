#pragma once

#include "common/random.h"
#include "common/state_archive.h"

#include <optional>
#include <vector>

namespace fulcrum::perf {

// The CPU and memory shares a worker can use, as fractions of its machine (0..1].
struct ResourceShare {
    double cpu = 1.0;
    double memory = 1.0;
    bool operator==(const ResourceShare&) const = default;
};

// A step in a scripted trace: from `at_s` on, the worker has this share.
struct ResourcePoint {
    double at_s = 0;
    ResourceShare share;
};

// Co-located tasks of other tenants that start and stop at random (Poisson arrivals,
// exponential durations) and each take a CPU and memory share while they run, as in the
// trace-driven set-up of the LB-BSP paper.
struct ColocatedLoad {
    double arrivals_per_hour = 0;
    double mean_duration_s = 600;
    double cpu_min = 0.1, cpu_max = 0.5;
    double memory_min = 0.0, memory_max = 0.3;
};

// The LB-BSP paper's injected competing process: in every period it runs with a fixed
// probability (otherwise sleeps) and, while running, takes this CPU and memory share.
// A worker's run probability sets its heterogeneity level (see cluster_profiles.h).
struct CompetingProcess {
    double run_probability = 0;
    double cpu = 0.5;
    double memory = 0.0;
    double period_s = 1.0;
};

// A worker's resource share over time: a scripted piecewise-constant trace, reduced by
// whatever co-located tasks and competing processes are running. Deterministic for a seed; generated lazily so
// an unbounded run needs no horizon.
class ResourceTimeline {
public:
    ResourceTimeline(std::vector<ResourcePoint> scripted, std::optional<ColocatedLoad> colocated, std::uint64_t seed,
        std::optional<CompetingProcess> competing = std::nullopt);

    ResourceShare at(double t);
    // The first time after t at which the share may change (infinity if never).
    double next_change_after(double t);

    // A checkpoint: the generated co-located tasks and the stream that makes the next ones.
    void save_state(StateWriter& out) const;
    void load_state(StateReader& in);

    // The smallest share handed out, so a worker never stops completely.
    static constexpr double kMinimumShare = 0.02;

private:
    struct Task {
        double start, end, cpu, memory;
    };
    void generate_until(double t);
    bool competing_runs(std::int64_t period) const;

    std::vector<ResourcePoint> scripted_;
    std::optional<ColocatedLoad> colocated_;
    std::optional<CompetingProcess> competing_;
    std::uint64_t seed_;
    double competing_offset_ = 0;
    Rng rng_;
    std::vector<Task> tasks_;
    double generated_until_ = 0;
    double next_arrival_ = 0;
};

} // namespace fulcrum::perf
