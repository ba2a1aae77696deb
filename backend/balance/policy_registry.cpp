#include "balance/policy_registry.h"

#include "balance/fixed_policy.h"
#include "balance/uniform_policy.h"

#include <stdexcept>

namespace fulcrum::balance {

const std::vector<std::string>& policy_names()
{
    static const std::vector<std::string> names { "uniform", "fixed" };
    return names;
}

std::unique_ptr<BatchSizePolicy> make_policy(const PolicySpec& spec)
{
    if (spec.type == "uniform")
        return std::make_unique<UniformPolicy>();
    if (spec.type == "fixed")
        return std::make_unique<FixedPolicy>(spec.batch_sizes);
    throw std::invalid_argument("unknown batch-size policy '" + spec.type + "' (expected uniform or fixed)");
}

} // namespace fulcrum::balance
