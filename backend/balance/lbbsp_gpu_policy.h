#pragma once

#include "balance/batch_size_policy.h"

#include <deque>
#include <map>
#include <set>

namespace fulcrum::balance {

struct GpuPhase {
    std::int32_t delta = 5; // samples moved from the straggler to the leader
    int window = 5; // D: the leader must have beaten the straggler this many iterations in a row
};

struct GpuPolicyOptions {
    GpuPhase fast_approach { 5, 5 };
    GpuPhase fine_tune { 1, 20 };
    double memory_ceiling = 0.95; // a leader must use at most this share of its GPU memory
};

// LB-BSP Algorithm 2 for GPU workers, where batch time is not proportional to batch size
// (launch overhead, saturation) so speeds cannot be divided: move Δ samples from the
// straggler (slowest) to the leader (fastest worker with memory to spare) once the leader
// has beaten the straggler in each of the last D iterations (all since the last move, so a
// move is judged only on times it produced). Fast-approach (Δ=5, D=5) until the first oscillation, a former
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
    bool save_state(StateWriter& out) const override;
    void load_state(StateReader& in) override;

    bool fine_tuning() const { return fine_tuning_; }

private:
    const GpuPhase& phase() const { return fine_tuning_ ? options_.fine_tune : options_.fast_approach; }

    GpuPolicyOptions options_;
    bool fine_tuning_ = false;
    int since_move_ = 0;
    std::map<WorkerId, std::int32_t> sizes_; // the policy's own last answer (it runs ahead of what ran)
    std::map<WorkerId, std::deque<double>> times_; // recent batch times, newest last
    std::set<WorkerId> former_leaders_, former_stragglers_;
    std::set<WorkerId> warned_;
};

} // namespace fulcrum::balance
