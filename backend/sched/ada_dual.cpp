#include "sched/comm_policy.h"

namespace fulcrum::sched {

AdaDualCommPolicy::AdaDualCommPolicy(const ContentionModel& model)
    : threshold_(model.b / (2 * (model.b + model.eta)))
{
}

bool AdaDualCommPolicy::admit(double bytes, std::span<const int> servers, const LinkState& links) const
{
    for (int s : servers) {
        const int k = links.tasks_on(s);
        if (k == 0)
            continue;
        if (k >= 2)
            return false;
        const double old_bytes = links.remaining_bytes_of_sole_task(s);
        if (!(old_bytes > 0) || bytes / old_bytes >= threshold_)
            return false;
    }
    return true;
}

} // namespace fulcrum::sched
