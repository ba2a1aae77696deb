#pragma once

#include "balance/batch_size_policy.h"

#include <set>

namespace fulcrum::balance {

struct GpuPhase {
    std::int32_t delta = 5; // samples moved from the straggler to the leader
    int window = 5;         // D: the leader must have beaten the straggler this many iterations in a row
};

struct GpuPolicyOptions {
    GpuPhase fast_approach { 5, 5 };
    GpuPhase fine_tune { 1, 20 };
    double memory_ceiling = 0.95; // a leader must use at most this share of its GPU memory
};

// LB-BSP Algorithm 2 for GPU workers, where batch time is not proportional to batch size
// (launch overhead, saturation) so speeds cannot be divided: move Δ samples from the
// straggler (slowest) to the leader (fastest worker with memory to spare) once the leader
// has led for D iterations. Fast-approach (Δ=5, D=5) until the first oscillation, a former
// leader becoming the straggler or the reverse, then fine-tune (Δ=1, D=20). A straggler
// whose batch would fall to Δ or below is not shrunk; a "remove this straggler" warning
// is raised instead.
class LbBspGpuPolicy final : public BatchSizePolicy {
public:
    explicit LbBspGpuPolicy(GpuPolicyOptions options = {});
    std::string name() const override { return "lbbsp-gpu"; }
    Allocation initial(int workers, std::int32_t total_batch) override;
    Allocation next(const std::vector<WorkerObservation>& observations, std::int32_t total_batch) override;
    bool blocking() const override { return false; }

    bool fine_tuning() const { return fine_tuning_; }

private:
    const GpuPhase& phase() const { return fine_tuning_ ? options_.fine_tune : options_.fast_approach; }

    GpuPolicyOptions options_;
    bool fine_tuning_ = false;
    int streak_ = 0;
    WorkerId last_leader_ = -1, last_straggler_ = -1;
    std::set<WorkerId> former_leaders_, former_stragglers_;
    std::set<WorkerId> warned_;
};

} // namespace fulcrum::balance
