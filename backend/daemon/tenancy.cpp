#include "daemon/tenancy.h"

namespace fulcrum::daemon {

TenantReach TenantReach::of(protocol::Role role, const std::optional<std::string>& line_tenant)
{
    TenantReach reach;
    reach.tenant = line_tenant.value_or(std::string(protocol::kDefaultTenant));
    reach.all = role == protocol::Role::Admin || (role == protocol::Role::Operator && !line_tenant);
    return reach;
}

std::string TenantReach::describe() const
{
    return all ? "every tenant" : "tenant '" + tenant + "' only";
}

} // namespace fulcrum::daemon
