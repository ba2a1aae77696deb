#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace fulcrum::balance {

class BatchSizeManager;

// Writes each worker's trained NARX network as DIR/worker-N.narx (NarxNetwork's text form),
// so a later run can start from it (policy.predictor.warm_start "file"). Returns the paths
// written; none when the job's policy has no NARX networks. Throws std::runtime_error when
// a file cannot be written.
std::vector<std::string> save_narx_models(BatchSizeManager& manager, const std::filesystem::path& dir);

} // namespace fulcrum::balance
