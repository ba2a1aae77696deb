#pragma once

#include "protocol/messages.h"

#include <optional>
#include <string>
#include <string_view>

namespace fulcrum::access {

// Which tenants' jobs a token reaches (issue 47): its own, to which the jobs it submits
// belong, and every tenant's for an admin. An operator line that names no tenant, as every
// line of the last release's token files does, reaches every tenant too: its operators
// steered every job and set the cluster's policies, and an upgrade takes nothing from them
// (operations.md says how to confine one). Any other line without a tenant is the default
// tenant's.
struct TenantReach {
    std::string tenant { protocol::kDefaultTenant };
    bool all = false;

    static TenantReach of(protocol::Role role, const std::optional<std::string>& line_tenant);
    bool covers(std::string_view job_tenant) const { return all || job_tenant == tenant; }
    // "every tenant", "tenant 'research'": what a refusal says the token reaches.
    std::string describe() const;
    bool operator==(const TenantReach&) const = default;
};

// The cluster as a client whose token reaches `reach` is shown it (its stream, its
// snapshot, a job's recorded cluster): the pooled processes of tenants it does not reach are
// there, but not where they run.
protocol::ClusterState shown_to(const protocol::ClusterState& state, const TenantReach& reach);

// A run store's tenant as recorded (empty: the default tenant's, as every run recorded
// before tenants existed).
inline std::string recorded_tenant(const std::string& recorded)
{
    return recorded.empty() ? std::string(protocol::kDefaultTenant) : recorded;
}

} // namespace fulcrum::access
