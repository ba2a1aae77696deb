#include "balance/policy_registry.h"

#include "balance/fixed_policy.h"
#include "balance/lbbsp_cpu_policy.h"
#include "balance/uniform_policy.h"

#include <stdexcept>

namespace fulcrum::balance {

namespace {

// One entry per policy: its name, what it does, and how it is made from its section.
struct PolicyEntry {
    std::string_view name;
    std::string_view description;
    std::unique_ptr<BatchSizePolicy> (*make)(const PolicySpec& spec);
};

const PolicyEntry kPolicies[] = {
    { "uniform", "every worker gets X / n samples (plain BSP)",
        [](const PolicySpec&) -> std::unique_ptr<BatchSizePolicy> { return std::make_unique<UniformPolicy>(); } },
    { "fixed", "the batch sizes the section lists, one per worker",
        [](const PolicySpec& s) -> std::unique_ptr<BatchSizePolicy> {
            return std::make_unique<FixedPolicy>(s.batch_sizes);
        } },
    { "lbbsp-cpu", "LB-BSP Algorithm 1: sizes in proportion to each worker's predicted speed (CPU clusters)",
        [](const PolicySpec& s) -> std::unique_ptr<BatchSizePolicy> {
            return std::make_unique<LbBspCpuPolicy>(s.predictor);
        } },
    { "lbbsp-gpu", "LB-BSP Algorithm 2: equalises batch times by phases, within GPU memory (GPU clusters)",
        [](const PolicySpec& s) -> std::unique_ptr<BatchSizePolicy> {
            return std::make_unique<LbBspGpuPolicy>(s.gpu);
        } },
};

} // namespace

const std::vector<std::string>& policy_names()
{
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const PolicyEntry& p : kPolicies)
            out.emplace_back(p.name);
        return out;
    }();
    return names;
}

std::vector<CatalogueEntry> policy_catalogue()
{
    std::vector<CatalogueEntry> out;
    for (const PolicyEntry& p : kPolicies)
        out.push_back({ std::string(p.name), std::string(p.description) });
    return out;
}

std::unique_ptr<BatchSizePolicy> make_policy(const PolicySpec& spec)
{
    for (const PolicyEntry& p : kPolicies)
        if (spec.type == p.name)
            return p.make(spec);
    throw std::invalid_argument(
        "unknown batch-size policy '" + spec.type + "' (expected uniform, fixed, lbbsp-cpu or lbbsp-gpu)");
}

std::unique_ptr<BatchSizeManager> make_manager(
    const PolicySpec& spec, int workers, std::int32_t total_batch, std::vector<std::int32_t> batch_limits)
{
    return std::make_unique<BatchSizeManager>(
        make_policy(spec), workers, total_batch, std::move(batch_limits), spec.manager);
}

} // namespace fulcrum::balance
