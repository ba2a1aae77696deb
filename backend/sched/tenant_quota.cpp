#include "sched/tenant_quota.h"

#include "common/registry.h"

#include <algorithm>

namespace fulcrum::sched {

namespace {

struct RigidEntry {
    KindInfo kind;
    RigidBorrowers mode;
};

constexpr RigidEntry kRigid[] = {
    { { "wait", "a non-elastic borrower keeps its GPUs to its end; the owner's job waits" }, RigidBorrowers::Wait },
    { { "requeue", "a non-elastic borrower is stopped at a checkpoint and queued again, going on from it" },
        RigidBorrowers::Requeue },
};

constexpr Registry<RigidEntry> kRegistry { "rigid_borrowers", kRigid };

} // namespace

std::string_view rigid_borrowers_name(RigidBorrowers mode)
{
    for (const RigidEntry& e : kRigid)
        if (e.mode == mode)
            return e.kind.name;
    return "unknown";
}

std::optional<RigidBorrowers> parse_rigid_borrowers(std::string_view name)
{
    const auto found = kRegistry.find(name);
    return found ? std::optional(found->entry.mode) : std::nullopt;
}

std::string rigid_borrowers_help()
{
    return kRegistry.expected();
}

TenantQuota TenantQuotas::of(std::string_view tenant) const
{
    if (const auto it = named.find(tenant); it != named.end())
        return it->second;
    return TenantQuota { .gpus = 0, .borrow = true, .weight = 1 };
}

int TenantQuotas::total_gpus() const
{
    int total = 0;
    for (const auto& [name, quota] : named)
        total += quota.gpus;
    return total;
}

int held_by(const TenantHeld& held, std::string_view tenant)
{
    const auto it = held.find(tenant);
    return it == held.end() ? 0 : it->second;
}

int borrowed_by(const TenantQuotas& quotas, const TenantHeld& held, std::string_view tenant)
{
    return std::max(0, held_by(held, tenant) - quotas.of(tenant).gpus);
}

int quota_room(const TenantQuotas& quotas, const TenantHeld& held, std::string_view tenant, int free)
{
    free = std::max(0, free);
    if (!quotas.active())
        return free;
    const TenantQuota q = quotas.of(tenant);
    if (q.borrow)
        return free;
    return std::min(free, std::max(0, q.gpus - held_by(held, tenant)));
}

ServeOrder serve_order(const TenantQuotas& quotas, const TenantHeld& held, std::string_view tenant, int asking)
{
    if (!quotas.active())
        return {};
    const TenantQuota q = quotas.of(tenant);
    const int after = held_by(held, tenant) + std::max(0, asking);
    return { after > q.gpus, static_cast<double>(borrowed_by(quotas, held, tenant)) / q.weight };
}

TenantHeld reclaim_plan(
    const TenantQuotas& quotas, const TenantHeld& held, std::string_view tenant, int wanted, int free, int least)
{
    TenantHeld taken;
    if (!quotas.active())
        return taken;
    const int owed = std::min(wanted, std::max(0, quotas.of(tenant).gpus - held_by(held, tenant)));
    for (int missing = owed - std::max(0, free); missing > 0; --missing) {
        const std::string* from = nullptr;
        double most = 0;
        for (const auto& [name, h] : held) {
            if (name == tenant)
                continue;
            const int left = borrowed_by(quotas, held, name) - held_by(taken, name);
            if (left <= 0)
                continue;
            const double per_weight = static_cast<double>(left) / quotas.of(name).weight;
            if (!from || per_weight > most) {
                from = &name;
                most = per_weight;
            }
        }
        if (!from)
            break;
        ++taken[*from];
    }
    int total = 0;
    for (const auto& [name, n] : taken)
        total += n;
    if (std::max(0, free) + total < least)
        taken.clear();
    return taken;
}

} // namespace fulcrum::sched
