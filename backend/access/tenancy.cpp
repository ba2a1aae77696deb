#include "access/tenancy.h"

namespace fulcrum::access {

TenantReach TenantReach::of(protocol::Role role, const std::optional<std::string>& line_tenant)
{
    TenantReach reach;
    reach.tenant = line_tenant.value_or(std::string(protocol::kDefaultTenant));
    reach.all = role == protocol::Role::Admin || (role == protocol::Role::Operator && !line_tenant);
    return reach;
}

protocol::ClusterState shown_to(const protocol::ClusterState& state, const TenantReach& reach)
{
    protocol::ClusterState shown = state;
    for (protocol::PooledWorker& p : shown.pool)
        if (!reach.covers(p.tenant))
            p.host.clear();
    return shown;
}

std::string TenantReach::describe() const
{
    return all ? "every tenant" : "tenant '" + tenant + "' only";
}

} // namespace fulcrum::access
