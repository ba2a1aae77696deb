#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fulcrum::sched {

// Tenants' shares of the cluster (issue 47): each tenant's nominal quota of GPUs, whether its
// jobs may borrow GPUs idle beyond it, and its weight among borrowers; Kueue's ClusterQueues
// (nominal quota, borrowing, reclaim) in the shape of Volcano's weighted queues. fulcrumd's
// placement and elastic scheduling and fulcrum-sim --tenants decide with these functions, so
// the simulator and the daemon follow one set of rules. A GPU here is whatever the caller
// counts: fulcrumd's jobs hold one per local worker (and per server GPU), the simulator's
// parameter-server jobs one slot per server and per worker.

// What a non-elastic job that borrowed GPUs does when their owner needs them back.
enum class RigidBorrowers {
    Wait, // it keeps them to its end; the owner's job waits
    Requeue, // it is stopped at a checkpoint and queued again, going on from it when placed
};
std::string_view rigid_borrowers_name(RigidBorrowers mode); // "wait", "requeue"
std::optional<RigidBorrowers> parse_rigid_borrowers(std::string_view name);
std::string rigid_borrowers_help(); // "wait or requeue"

struct TenantQuota {
    int gpus = 0; // its nominal quota: GPUs its jobs may hold whatever other tenants do
    bool borrow = false; // its jobs may take idle GPUs beyond the quota, given back on reclaim
    double weight = 1; // its share of the idle GPUs among the tenants borrowing them
    bool operator==(const TenantQuota&) const = default;
};

// The cluster file's "tenants" section and "rigid_borrowers" setting.
struct TenantQuotas {
    // By tenant name. Empty: no quotas, every job shares the whole cluster in arrival order.
    std::map<std::string, TenantQuota, std::less<>> named;
    RigidBorrowers rigid = RigidBorrowers::Wait;

    bool active() const { return !named.empty(); }
    // A tenant the section does not name has no quota of its own and borrows idle GPUs at
    // weight 1 (its jobs run only on GPUs no quota holder needs).
    TenantQuota of(std::string_view tenant) const;
    // What one tenant's quota adds up to, for errors ("the quotas add up to 12 GPUs").
    int total_gpus() const;
};

// GPUs held by each tenant's running jobs (a tenant missing holds none).
using TenantHeld = std::map<std::string, int, std::less<>>;

int held_by(const TenantHeld& held, std::string_view tenant);
// GPUs the tenant holds beyond its quota.
int borrowed_by(const TenantQuotas& quotas, const TenantHeld& held, std::string_view tenant);

// The most GPUs a job of `tenant` may take now with `free` idle: all of them when there are
// no quotas or its tenant borrows, else what is left of its quota (never more than `free`).
int quota_room(const TenantQuotas& quotas, const TenantHeld& held, std::string_view tenant, int free);

// Whose waiting job is served idle GPUs first: tenants below their quota before borrowers,
// and among borrowers the one holding the fewest borrowed GPUs per unit of weight (so idle
// GPUs are shared by weight). Lower is first; ties keep arrival order.
struct ServeOrder {
    bool borrowing = false; // `asking` more would take it beyond its quota
    double borrowed_per_weight = 0;
    bool operator==(const ServeOrder&) const = default;
    bool operator<(const ServeOrder& o) const
    {
        return borrowing != o.borrowing ? !borrowing : borrowed_per_weight < o.borrowed_per_weight;
    }
};
ServeOrder serve_order(const TenantQuotas& quotas, const TenantHeld& held, std::string_view tenant, int asking);

// Reclaim: the GPUs each borrowing tenant gives back so that a job of `tenant` can take
// `wanted` more with `free` idle. Only the part of `wanted` within the tenant's quota is
// reclaimed; one GPU at a time from the tenant with the most borrowed per unit of weight
// (ties: the first by name), never more than a tenant borrowed. Empty when nothing is owed,
// and when even all of it would leave fewer than `least` GPUs for the job (the fewest it
// starts with): a borrower would give up GPUs for nothing, and take them back at once.
TenantHeld reclaim_plan(
    const TenantQuotas& quotas, const TenantHeld& held, std::string_view tenant, int wanted, int free, int least);

} // namespace fulcrum::sched
