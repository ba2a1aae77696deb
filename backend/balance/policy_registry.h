#pragma once

#include "balance/batch_size_manager.h"
#include "balance/lbbsp_gpu_policy.h"
#include "common/named_values.h"
#include "predict/predictor_registry.h"

#include <memory>

namespace fulcrum {
class JsonFields;
}

namespace fulcrum::balance {

struct PolicySpec {
    std::string type = "uniform"; // a name in the policies' registry: uniform, fixed, lbbsp-cpu, lbbsp-gpu
    std::vector<std::int32_t> batch_sizes; // fixed
    predict::PredictorSpec predictor; // lbbsp-cpu
    GpuPolicyOptions gpu; // lbbsp-gpu
    ManagerOptions manager; // damping, blocking
};

// What a policy's section is checked against.
struct PolicyJobShape {
    int workers = 0;
    std::int64_t total_batch = 0;
};

// Reads a "policy" section (a scenario's, or a set-policy's): its type, the fields that
// policy's registry entry reads, and the manager's damping and blocking. A field another
// policy takes is refused naming that policy. Throws JsonFieldError.
PolicySpec parse_policy_spec(const JsonFields& section, const PolicyJobShape& job);

// Builds a policy by name; adding a policy is a new file plus one entry in the registry.
// Throws std::invalid_argument for an unknown name.
std::unique_ptr<BatchSizePolicy> make_policy(const PolicySpec& spec);
std::vector<std::string> policy_names();
// Every policy with what it does (list-capabilities).
std::vector<CatalogueEntry> policy_catalogue();
// Whether the policy sizes workers apart at barriers (all but uniform): a free-running sync
// model has no barrier, so it runs only under a policy that does not. Throws
// std::invalid_argument for an unknown name.
bool balances_at_barriers(std::string_view policy);

// The policy wrapped in its manager for a job of `workers` (limits: x_o per worker, 0 = none).
std::unique_ptr<BatchSizeManager> make_manager(
    const PolicySpec& spec, int workers, std::int32_t total_batch, std::vector<std::int32_t> batch_limits = {});

} // namespace fulcrum::balance
