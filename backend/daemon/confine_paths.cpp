#include "daemon/confine_paths.h"

namespace fulcrum::daemon {

namespace {

bool kept(const std::string& path, bool keep_absolute)
{
    return keep_absolute && std::filesystem::path(path).is_absolute();
}

} // namespace

void confine_paths(balance::PolicySpec& policy, const ServerFolders& folders, const std::string& source,
    const std::string& field_prefix, bool keep_absolute)
{
    std::string& file = policy.predictor.warm_start_file;
    if (!file.empty() && !kept(file, keep_absolute))
        file = folders.resolve(FolderKind::Models, file, source, field_prefix + ".predictor.warm_start_file").string();
}

void confine_paths(scenario::Scenario& scenario, const ServerFolders& folders, bool keep_absolute)
{
    // An absent data.path is the server's own default, not a client's choice.
    if (scenario.data.source == "fashion-mnist" && scenario.data.path_given && !kept(scenario.data.path, keep_absolute))
        scenario.data.path
            = folders.resolve(FolderKind::Datasets, scenario.data.path, scenario.source, "data.path").string();
    confine_paths(scenario.policy, folders, scenario.source, "policy", keep_absolute);
}

} // namespace fulcrum::daemon
