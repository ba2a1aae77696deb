#pragma once

#include "balance/batch_size_policy.h"

#include <memory>

namespace fulcrum::balance {

struct PolicySpec {
    std::string type = "uniform";
    std::vector<std::int32_t> batch_sizes; // for "fixed"
};

// Builds a policy by name; adding a policy is a new file plus one line here.
// Throws std::invalid_argument for an unknown name.
std::unique_ptr<BatchSizePolicy> make_policy(const PolicySpec& spec);
const std::vector<std::string>& policy_names();

} // namespace fulcrum::balance
