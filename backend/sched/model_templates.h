#pragma once

#include "sched/job.h"

#include <optional>
#include <string>
#include <vector>

namespace fulcrum::sched {

// The four models of the paper's Table III (VGG-16, ResNet-50, Inception-V3, LSTM-PTB) on
// one V100. Sizes are fp32 parameter counts; times and memory are our estimates from public
// V100 throughput figures at these batch sizes (docs/scheduling.md), not the paper's table.
const std::vector<ModelTemplate>& model_templates();
std::optional<ModelTemplate> find_model_template(const std::string& name);

} // namespace fulcrum::sched
