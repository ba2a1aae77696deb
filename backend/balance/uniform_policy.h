#pragma once

#include "balance/batch_size_policy.h"

namespace fulcrum::balance {

// Plain BSP: every worker gets X / n, the remainder to the first workers.
class UniformPolicy final : public BatchSizePolicy {
public:
    std::string name() const override { return "uniform"; }
    Allocation initial(int workers, std::int32_t total_batch) override;
    Allocation next(const std::vector<WorkerObservation>& observations, std::int32_t total_batch) override;
    bool save_state(StateWriter&) const override { return true; } // it learns nothing
    void load_state(StateReader&) override { }
};

} // namespace fulcrum::balance
