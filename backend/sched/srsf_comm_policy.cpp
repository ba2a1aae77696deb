#include "common/registry.h"
#include "sched/comm_policy.h"

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

namespace {

struct CommEntry {
    KindInfo kind;
    std::unique_ptr<CommPolicy> (*make)(int number, const ContentionModel& model);
};

// "none" is a live cluster's only: fulcrumd's transfers then start at once and share the
// links; the simulator always schedules (Simulator refuses it).
constexpr CommEntry kCommPolicies[] = {
    { { "none", "no schedule: every transfer starts at once and shares its links" },
        [](int, const ContentionModel&) -> std::unique_ptr<CommPolicy> { return nullptr; } },
    { { "srsf-N", "shortest remaining service first, at most N transfers on a link", true },
        [](int n, const ContentionModel&) -> std::unique_ptr<CommPolicy> {
            return std::make_unique<SrsfCommPolicy>(n);
        } },
    { { "ada-srsf",
          "Ada-SRSF (the scheduling paper's Algorithm 3): SRSF order, and a small transfer beside one running task "
          "only when AdaDUAL's bound says it gains" },
        [](int, const ContentionModel& model) -> std::unique_ptr<CommPolicy> {
            return std::make_unique<AdaDualCommPolicy>(model);
        } },
};

constexpr Registry<CommEntry> kRegistry { "communication scheduler", kCommPolicies };

} // namespace

std::unique_ptr<CommPolicy> make_comm_policy(const std::string& name, const ContentionModel& model)
{
    const auto found = kRegistry.at(name);
    return found.entry.make(found.number, model);
}

std::unique_ptr<CommPolicy> make_scheduled_comm_policy(const std::string& name, const ContentionModel& model)
{
    std::unique_ptr<CommPolicy> policy = make_comm_policy(name, model);
    if (!policy)
        throw std::invalid_argument("the simulator schedules every transfer: expected srsf-N with N >= 1 (e.g. "
                                    "srsf-1) or ada-srsf, not '"
            + name + "'");
    return policy;
}

std::vector<CatalogueEntry> comm_catalogue()
{
    return kRegistry.catalogue();
}

} // namespace fulcrum::sched
