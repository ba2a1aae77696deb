#pragma once

#include "balance/batch_size_policy.h"

namespace fulcrum::balance {

// Sizes given by the scenario, never changed (e.g. the paper's 89/21/12/6 split).
class FixedPolicy final : public BatchSizePolicy {
public:
    explicit FixedPolicy(std::vector<std::int32_t> batch_sizes);
    std::string name() const override { return "fixed"; }
    Allocation initial(int workers, std::int32_t total_batch) override;
    Allocation next(const std::vector<WorkerObservation>& observations, std::int32_t total_batch) override;
    bool save_state(StateWriter&) const override { return true; } // its sizes are the scenario's
    void load_state(StateReader&) override { }

private:
    std::vector<std::int32_t> batch_sizes_;
};

} // namespace fulcrum::balance
