// The policy registry reads each policy's own section fields (habit 4: a policy is a file
// plus one registry entry), so the scenario parser, set-policy and the catalogue agree.
#include "balance/policy_registry.h"
#include "common/json_fields.h"

#include <gtest/gtest.h>

using namespace fulcrum;

namespace {

const balance::PolicyJobShape kFourWorkers { 4, 128 };

balance::PolicySpec parsed(const std::string& text)
{
    const json::value v = parse_json_text(text);
    return balance::parse_policy_spec(JsonFields(v, "policy"), kFourWorkers);
}

std::string refusal(const std::string& text)
{
    try {
        parsed(text);
    } catch (const JsonFieldError& e) {
        return e.path() + ": " + e.reason();
    }
    return "accepted";
}

} // namespace

TEST(PolicyRegistry, EveryCataloguedPolicyIsReadFromItsSectionAndMade)
{
    for (const CatalogueEntry& entry : balance::policy_catalogue()) {
        const std::string section = entry.name == "fixed" ? R"({"type": "fixed", "batch_sizes": [32, 32, 32, 32]})"
                                                          : R"({"type": ")" + entry.name + R"("})";
        const balance::PolicySpec spec = parsed(section);
        EXPECT_EQ(spec.type, entry.name);
        EXPECT_EQ(balance::make_policy(spec)->name(), entry.name);
    }
}

TEST(PolicyRegistry, EachPolicyReadsItsOwnFields)
{
    const balance::PolicySpec gpu = parsed(R"({"type": "lbbsp-gpu", "gpu": {"fast_delta": 4}, "damping": 0.5})");
    EXPECT_EQ(gpu.gpu.fast_approach.delta, 4);
    EXPECT_DOUBLE_EQ(gpu.manager.damping, 0.5);
    const balance::PolicySpec cpu = parsed(R"({"type": "lbbsp-cpu", "predictor": {"type": "narx", "hidden": 8}})");
    EXPECT_EQ(cpu.predictor.type, "narx");
    EXPECT_EQ(cpu.predictor.narx.shape.hidden, 8);

    EXPECT_EQ(refusal(R"({"type": "uniform", "batch_sizes": [32, 32, 32, 32]})"),
        "policy.batch_sizes: only the fixed policy takes it (this policy is uniform)");
    EXPECT_EQ(refusal(R"({"type": "lbbsp-gpu", "predictor": {}})"),
        "policy.predictor: only the lbbsp-cpu policy takes it (this policy is lbbsp-gpu)");
    EXPECT_EQ(refusal(R"({"type": "fixed", "batch_sizes": [32, 32, 64]})"),
        "policy.batch_sizes: has 3 entries, expected one per worker (4)");
    EXPECT_EQ(refusal(R"({"type": "fixed"})"), "policy.batch_sizes: is required (an array)");
    EXPECT_EQ(refusal(R"({"type": "lbbsp-cpu", "predictor": {"type": "oracle"}})"),
        "policy.predictor.type: is 'oracle', expected one of: memoryless, ema, arima, narx");
    EXPECT_EQ(refusal(R"({"type": "uniform", "dampening": 0.1})").rfind("policy.dampening: unknown field", 0), 0u);
}
