#include "balance/policy_registry.h"

#include "balance/fixed_policy.h"
#include "balance/lbbsp_cpu_policy.h"
#include "balance/uniform_policy.h"
#include "common/json_fields.h"
#include "common/registry.h"

#include <stdexcept>

namespace fulcrum::balance {

namespace {

void parse_nothing(const JsonFields&, PolicySpec&, const PolicyJobShape&) { }

// One batch size per worker, summing to the job's total batch.
void parse_fixed(const JsonFields& section, PolicySpec& spec, const PolicyJobShape& job)
{
    spec.batch_sizes = section.integers<std::int32_t>("batch_sizes", 1);
    const std::string at = section.at("batch_sizes");
    if (static_cast<int>(spec.batch_sizes.size()) != job.workers)
        section.fail(at,
            "has " + std::to_string(spec.batch_sizes.size()) + " entries, expected one per worker ("
                + std::to_string(job.workers) + ")");
    std::int64_t sum = 0;
    for (const auto b : spec.batch_sizes)
        sum += b;
    if (sum != job.total_batch)
        section.fail(at,
            "sum to " + std::to_string(sum) + ", expected training.total_batch = " + std::to_string(job.total_batch));
}

void parse_lbbsp_cpu(const JsonFields& section, PolicySpec& spec, const PolicyJobShape&)
{
    if (const json::value* predictor = section.find("predictor"))
        predict::parse_predictor_spec(JsonFields(*predictor, section.at("predictor"), section), spec.predictor);
}

// Algorithm 2's phases: the fast approach and the fine tuning, each a step and a window.
void parse_lbbsp_gpu(const JsonFields& section, PolicySpec& spec, const PolicyJobShape&)
{
    const json::value* gpu = section.find("gpu");
    if (!gpu)
        return;
    const JsonFields g(*gpu, section.at("gpu"), section);
    GpuPolicyOptions& o = spec.gpu;
    o.fast_approach.delta = static_cast<std::int32_t>(g.integer_or("fast_delta", o.fast_approach.delta, 1, 1'000'000));
    o.fast_approach.window = static_cast<int>(g.integer_or("fast_window", o.fast_approach.window, 1, 1'000'000));
    o.fine_tune.delta = static_cast<std::int32_t>(g.integer_or("fine_delta", o.fine_tune.delta, 1, 1'000'000));
    o.fine_tune.window = static_cast<int>(g.integer_or("fine_window", o.fine_tune.window, 1, 1'000'000));
    o.memory_ceiling = g.number_or("memory_ceiling", o.memory_ceiling, 0.01, 1.0);
    g.reject_unknown();
}

// One entry per policy: its name, what it does, the section field only it reads, how it
// reads its section and how it is made from it.
struct PolicyEntry {
    KindInfo kind; // kind.required: the section field only this policy reads, when it must be given
    std::string_view field; // the one section field only this policy reads ("" for none)
    // Whether it sizes workers apart at barriers: a free-running sync model has none, so
    // only a policy that does not (uniform) runs under it.
    bool balances_at_barriers;
    void (*parse)(const JsonFields& section, PolicySpec& spec, const PolicyJobShape& job);
    std::unique_ptr<BatchSizePolicy> (*make)(const PolicySpec& spec);
};

constexpr PolicyEntry kPolicies[] = {
    { { "uniform", "every worker gets X / n samples (plain BSP)" }, "", false, parse_nothing,
        [](const PolicySpec&) -> std::unique_ptr<BatchSizePolicy> { return std::make_unique<UniformPolicy>(); } },
    { { "fixed", "the batch sizes the section lists, one per worker", false, {}, "batch_sizes" }, "batch_sizes", true,
        parse_fixed,
        [](const PolicySpec& s) -> std::unique_ptr<BatchSizePolicy> {
            return std::make_unique<FixedPolicy>(s.batch_sizes);
        } },
    { { "lbbsp-cpu", "LB-BSP Algorithm 1: sizes in proportion to each worker's predicted speed (CPU clusters)" },
        "predictor", true, parse_lbbsp_cpu,
        [](const PolicySpec& s) -> std::unique_ptr<BatchSizePolicy> {
            return std::make_unique<LbBspCpuPolicy>(s.predictor);
        } },
    { { "lbbsp-gpu", "LB-BSP Algorithm 2: equalises batch times by phases, within GPU memory (GPU clusters)" }, "gpu",
        true, parse_lbbsp_gpu,
        [](const PolicySpec& s) -> std::unique_ptr<BatchSizePolicy> {
            return std::make_unique<LbBspGpuPolicy>(s.gpu);
        } },
};

constexpr Registry<PolicyEntry> kRegistry { "batch-size policy", kPolicies };

} // namespace

std::vector<std::string> policy_names()
{
    return kRegistry.names();
}

std::vector<CatalogueEntry> policy_catalogue()
{
    return kRegistry.catalogue();
}

bool balances_at_barriers(std::string_view policy)
{
    return kRegistry.entry(policy).balances_at_barriers;
}

PolicySpec parse_policy_spec(const JsonFields& section, const PolicyJobShape& job)
{
    PolicySpec spec;
    spec.type = section.string_or("type", "uniform", policy_names());
    const PolicyEntry& entry = kRegistry.entry(spec.type);
    for (const PolicyEntry& other : kPolicies)
        if (&other != &entry && !other.field.empty() && section.has(other.field))
            section.fail(section.at(other.field),
                "only the " + std::string(other.kind.name) + " policy takes it (this policy is " + spec.type + ")");
    entry.parse(section, spec, job);
    spec.manager.damping = section.number_or("damping", 0.0, 0.0, 0.99);
    if (section.has("blocking"))
        spec.manager.blocking = section.boolean("blocking");
    section.reject_unknown();
    return spec;
}

std::unique_ptr<BatchSizePolicy> make_policy(const PolicySpec& spec)
{
    return kRegistry.entry(spec.type).make(spec);
}

std::unique_ptr<BatchSizeManager> make_manager(
    const PolicySpec& spec, int workers, std::int32_t total_batch, std::vector<std::int32_t> batch_limits)
{
    return std::make_unique<BatchSizeManager>(
        make_policy(spec), workers, total_batch, std::move(batch_limits), spec.manager);
}

} // namespace fulcrum::balance
