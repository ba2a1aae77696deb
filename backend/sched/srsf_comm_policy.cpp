#include "sched/comm_policy.h"
#include "sched/policy_name.h"

#include <stdexcept>

namespace fulcrum::sched {

SrsfCommPolicy::SrsfCommPolicy(int n)
    : n_(n)
{
    if (n < 1)
        throw std::invalid_argument("srsf-N needs N >= 1");
}

bool SrsfCommPolicy::admit(double, std::span<const int> servers, const LinkState& links) const
{
    for (int s : servers)
        if (links.tasks_on(s) >= n_)
            return false;
    return true;
}

std::unique_ptr<CommPolicy> make_comm_policy(const std::string& name, const ContentionModel& model)
{
    if (name == "ada-srsf")
        return std::make_unique<AdaDualCommPolicy>(model);
    if (const auto n = numbered_name(name, "srsf-"))
        return std::make_unique<SrsfCommPolicy>(*n);
    throw std::invalid_argument(
        "unknown communication scheduler '" + name + "' (expected srsf-N with N >= 1, e.g. srsf-1, or ada-srsf)");
}

} // namespace fulcrum::sched
