#pragma once

#include "balance/policy_registry.h"
#include "daemon/server_folders.h"
#include "scenario/scenario.h"

namespace fulcrum::daemon {

// Every path field of a scenario or a policy section that a client sent, resolved inside the
// server's folders in place (data.path in datasets, policy.predictor.warm_start_file in
// models). The scenario's JSON text keeps the client's names. Throws OutsidePath naming the
// field (`field_prefix` + ".predictor.warm_start_file" for a policy section).
// `keep_absolute`: a recovered job's scenario, whose absolute paths only the local operator
// can have given (a client's were refused at submission).
void confine_paths(scenario::Scenario& scenario, const ServerFolders& folders, bool keep_absolute = false);
void confine_paths(balance::PolicySpec& policy, const ServerFolders& folders, const std::string& source,
    const std::string& field_prefix, bool keep_absolute = false);

} // namespace fulcrum::daemon
