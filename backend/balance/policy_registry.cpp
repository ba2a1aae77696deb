#include "balance/policy_registry.h"

#include "balance/fixed_policy.h"
#include "balance/lbbsp_cpu_policy.h"
#include "balance/uniform_policy.h"

#include <stdexcept>

namespace fulcrum::balance {

const std::vector<std::string>& policy_names()
{
    static const std::vector<std::string> names { "uniform", "fixed", "lbbsp-cpu", "lbbsp-gpu" };
    return names;
}

std::unique_ptr<BatchSizePolicy> make_policy(const PolicySpec& spec)
{
    if (spec.type == "uniform")
        return std::make_unique<UniformPolicy>();
    if (spec.type == "fixed")
        return std::make_unique<FixedPolicy>(spec.batch_sizes);
    if (spec.type == "lbbsp-cpu")
        return std::make_unique<LbBspCpuPolicy>(spec.predictor);
    if (spec.type == "lbbsp-gpu")
        return std::make_unique<LbBspGpuPolicy>(spec.gpu);
    throw std::invalid_argument(
        "unknown batch-size policy '" + spec.type + "' (expected uniform, fixed, lbbsp-cpu or lbbsp-gpu)");
}

std::unique_ptr<BatchSizeManager> make_manager(
    const PolicySpec& spec, int workers, std::int32_t total_batch, std::vector<std::int32_t> batch_limits)
{
    return std::make_unique<BatchSizeManager>(
        make_policy(spec), workers, total_batch, std::move(batch_limits), spec.manager);
}

} // namespace fulcrum::balance
