#include "sched/eps_rules.h"

#include <algorithm>
#include <cmath>

namespace fulcrum::sched {

std::optional<SlotCount> eps_start_size(int free, SlotCount request, SlotCount minimum, bool elastic)
{
    if (free >= request.slots())
        return request;
    if (!elastic || free < minimum.slots())
        return std::nullopt;
    SlotCount start;
    start.servers = std::clamp(static_cast<int>(std::lround(double(free) * request.servers / request.slots())),
        minimum.servers, free - minimum.workers);
    start.workers = std::min(request.workers, free - start.servers);
    return start;
}

std::vector<SlotCount> eps_release(const std::vector<EpsHolder>& holders, int free, int wanted)
{
    std::vector<SlotCount> taken(holders.size());
    int freed = 0;
    // Two passes: down to each holder's request, then down to its minimum.
    for (const bool beyond_request : { true, false }) {
        const auto floor = [&](const EpsHolder& h) { return beyond_request ? h.request : h.minimum; };
        while (free + freed < wanted) {
            std::size_t best = holders.size();
            int best_spare = 0;
            for (std::size_t i = 0; i < holders.size(); ++i) {
                const EpsHolder& h = holders[i];
                if (!h.may_release)
                    continue;
                const SlotCount f = floor(h);
                const int spare
                    = (h.held.workers - taken[i].workers - f.workers) + (h.held.servers - taken[i].servers - f.servers);
                if (spare > best_spare) {
                    best_spare = spare;
                    best = i;
                }
            }
            if (best == holders.size())
                break;
            const EpsHolder& h = holders[best];
            const SlotCount f = floor(h);
            SlotCount& t = taken[best];
            const int workers = h.held.workers - t.workers;
            const int servers = h.held.servers - t.servers;
            if (workers > f.workers && (workers >= servers || servers <= f.servers))
                ++t.workers;
            else
                ++t.servers;
            ++freed;
        }
    }
    return taken;
}

std::vector<std::size_t> eps_growth_order(std::size_t n, std::size_t round)
{
    std::vector<std::size_t> order(n);
    for (std::size_t k = 0; k < n; ++k)
        order[k] = (round + k) % n;
    return order;
}

bool eps_growth_kept(double throughput_before, double throughput_after)
{
    return !(throughput_after < throughput_before);
}

} // namespace fulcrum::sched
