#pragma once

#include "balance/policy_registry.h"
#include "daemon/server_folders.h"
#include "scenario/scenario.h"

namespace fulcrum::daemon {

// Every path field of a scenario or a policy section that a client sent, resolved inside the
// server's folders in place (data.path in datasets, policy.predictor.warm_start_file in
// models). The scenario's JSON text keeps the client's names. Throws OutsidePath naming the
// field (`field_prefix` + ".predictor.warm_start_file" for a policy section).
void confine_paths(scenario::Scenario& scenario, const ServerFolders& folders);
void confine_paths(balance::PolicySpec& policy, const ServerFolders& folders, const std::string& source,
                   const std::string& field_prefix);

} // namespace fulcrum::daemon
