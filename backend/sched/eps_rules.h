#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace fulcrum::sched {

// Elastic Parameter Server's scheduling decisions (EPS: admission, release for a newcomer,
// round-robin growth with rollback), as functions of what the jobs hold. `simulate_elastic`
// and fulcrumd's live elastic scheduling both decide with these, so the simulator and the
// daemon follow one set of rules. A slot is whatever the caller counts: the simulator's
// parameter-server jobs hold one per server and one per worker, fulcrumd's jobs one GPU per
// worker and none for their servers (servers 0, floors 0).

// Workers and servers, as held, asked for or taken.
struct SlotCount {
    int workers = 0;
    int servers = 0;
    int slots() const { return workers + servers; }
    bool operator==(const SlotCount&) const = default;
};

// One running job as the release rule sees it.
struct EpsHolder {
    SlotCount held;
    SlotCount request; // what it asked for: it gives up slots beyond this first
    SlotCount minimum; // it never gives up slots below this
    // Past its early-feedback point, and not in the middle of a change or a growth trial:
    // only such a job gives up slots.
    bool may_release = false;
};

// The size a newcomer starts with when `free` slots are idle: its whole request when it
// fits; smaller when `elastic` (servers in the proportion asked for, at least `minimum` of
// each, the rest workers); nothing when it must wait.
std::optional<SlotCount> eps_start_size(int free, SlotCount request, SlotCount minimum, bool elastic);

// What each holder gives up so that `free` idle slots grow to `wanted`: first what holders
// hold beyond their own request, then down to their minimum, one slot at a time from the
// holder with the most to spare (the first such in order), keeping each holder's workers and
// servers in balance (a worker while they are at least as many as the servers). May free fewer than asked
// when the holders have too little to spare. One entry per holder, in order.
std::vector<SlotCount> eps_release(const std::vector<EpsHolder>& holders, int free, int wanted);

// One growth round over `n` running jobs: the order in which they are offered one step
// (round-robin from `round`, so each round starts one job later).
std::vector<std::size_t> eps_growth_order(std::size_t n, std::size_t round);

// A growth step is kept unless the job's throughput measured after it falls below the one
// measured before (then it is rolled back and the job grows no further).
bool eps_growth_kept(double throughput_before, double throughput_after);

} // namespace fulcrum::sched
