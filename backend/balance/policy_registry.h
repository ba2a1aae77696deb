#pragma once

#include "balance/batch_size_manager.h"
#include "balance/lbbsp_gpu_policy.h"
#include "common/named_values.h"
#include "predict/predictor_registry.h"

#include <memory>

namespace fulcrum::balance {

struct PolicySpec {
    std::string type = "uniform"; // uniform, fixed, lbbsp-cpu, lbbsp-gpu
    std::vector<std::int32_t> batch_sizes; // fixed
    predict::PredictorSpec predictor; // lbbsp-cpu
    GpuPolicyOptions gpu; // lbbsp-gpu
    ManagerOptions manager; // damping, blocking
};

// Builds a policy by name; adding a policy is a new file plus one line here.
// Throws std::invalid_argument for an unknown name.
std::unique_ptr<BatchSizePolicy> make_policy(const PolicySpec& spec);
const std::vector<std::string>& policy_names();
// Every policy with what it does (list-capabilities).
std::vector<CatalogueEntry> policy_catalogue();

// The policy wrapped in its manager for a job of `workers` (limits: x_o per worker, 0 = none).
std::unique_ptr<BatchSizeManager> make_manager(
    const PolicySpec& spec, int workers, std::int32_t total_batch, std::vector<std::int32_t> batch_limits = {});

} // namespace fulcrum::balance
