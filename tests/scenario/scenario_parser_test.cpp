#include "common/error.h"
#include "scenario/scenario.h"

#include <gtest/gtest.h>

using namespace fulcrum;

namespace {

const std::string kMinimal = R"({
  "model": { "type": "softmax" },
  "training": { "total_batch": 64, "iterations": 10 },
  "workers": [ { "speed": 1000, "count": 2 }, { "name": "slow", "speed": 250 } ]
})";

// Expects parse_scenario to throw an InputError whose field is `field` and whose message contains `words`.
void expect_refused(const std::string& text, const std::string& field, const std::string& words)
{
    try {
        scenario::parse_scenario(text, "test.json");
        FAIL() << "accepted; expected an error at " << field;
    } catch (const InputError& e) {
        EXPECT_EQ(e.source(), "test.json");
        EXPECT_EQ(e.field(), field) << e.what();
        EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
}

std::string with(const std::string& from, const std::string& to)
{
    std::string text = kMinimal;
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
}

} // namespace

TEST(ScenarioParser, MinimalScenarioGetsDefaultsAndExpandsCounts)
{
    const auto s = scenario::parse_scenario(kMinimal, "test.json");
    ASSERT_EQ(s.workers.size(), 3u);
    EXPECT_EQ(s.workers[0].name, "worker-0");
    EXPECT_EQ(s.workers[2].name, "slow");
    EXPECT_EQ(s.workers[2].cpu.speed, 250);
    EXPECT_EQ(s.policy.type, "uniform");
    EXPECT_EQ(s.aggregation, ps::Aggregation::Weighted);
    EXPECT_EQ(s.mode, scenario::Mode::Virtual);
    EXPECT_EQ(scenario::planned_iterations(s, 60000), 10);
}

TEST(ScenarioParser, EpochsBecomeIterationsOfTheTotalBatch)
{
    const auto s = scenario::parse_scenario(with("\"iterations\": 10", "\"epochs\": 2"), "test.json");
    EXPECT_EQ(scenario::planned_iterations(s, 60000), 1875); // 120000 / 64
}

TEST(ScenarioParser, UnknownFieldIsRefusedWithItsPath)
{
    expect_refused(with("\"speed\": 250", "\"speed\": 250, \"sped\": 3"), "workers[1].sped", "unknown field");
    expect_refused(with("\"model\"", "\"colour\": 1, \"model\""), "colour", "unknown field");
}

TEST(ScenarioParser, NegativeBatchIsRefused)
{
    expect_refused(with("\"total_batch\": 64", "\"total_batch\": -5"), "training.total_batch", "expected 1 to");
}

TEST(ScenarioParser, ZeroWorkersIsRefused)
{
    const std::string text
        = R"({"model": {"type": "mlp"}, "training": {"total_batch": 8, "epochs": 1}, "workers": []})";
    expect_refused(text, "workers", "at least one worker");
}

TEST(ScenarioParser, WrongTypesAreRefused)
{
    expect_refused(with("\"speed\": 1000", "\"speed\": \"fast\""), "workers[0].speed", "expected a number");
    expect_refused(with("\"softmax\"", "\"resnet\""), "model.type", "expected one of: softmax, svm, mlp");
    expect_refused(with("\"total_batch\": 64", "\"total_batch\": 6.5"), "training.total_batch", "whole number");
}

TEST(ScenarioParser, MalformedJsonNamesLineAndColumn)
{
    expect_refused("{\n  \"model\": { \"type\": \"mlp\" \n  \"x\": 1 }", "line 3, column 3", "malformed JSON");
}

TEST(ScenarioParser, FixedBatchSizesMustMatchWorkersAndTotal)
{
    expect_refused(with("\"workers\"", "\"policy\": {\"type\": \"fixed\", \"batch_sizes\": [30, 30, 3]}, \"workers\""),
        "policy.batch_sizes", "sum to 63, expected training.total_batch = 64");
    expect_refused(with("\"workers\"", "\"policy\": {\"type\": \"fixed\", \"batch_sizes\": [32, 32]}, \"workers\""),
        "policy.batch_sizes", "one per worker");
    const auto s = scenario::parse_scenario(
        with("\"workers\"", "\"policy\": {\"type\": \"fixed\", \"batch_sizes\": [40, 16, 8]}, \"workers\""), "t");
    EXPECT_EQ(s.policy.batch_sizes, (std::vector<std::int32_t> { 40, 16, 8 }));
}

TEST(ScenarioParser, TotalBatchSmallerThanWorkerCountIsRefused)
{
    expect_refused(
        with("\"total_batch\": 64", "\"total_batch\": 2"), "training.total_batch", "smaller than the 3 workers");
}

TEST(ScenarioParser, ALeastBatchTheTotalCannotGiveEveryWorkerIsRefused)
{
    expect_refused(with("\"total_batch\": 64", "\"total_batch\": 64, \"min_batch\": 22"), "training.min_batch",
        "3 workers at 22 samples each need more than training.total_batch (64)");
    expect_refused(
        with("\"total_batch\": 64", "\"total_batch\": 64, \"min_batch\": 0"), "training.min_batch", "expected 1 to");
    const auto s = scenario::parse_scenario(with("\"total_batch\": 64", "\"total_batch\": 64, \"min_batch\": 8"), "t");
    EXPECT_EQ(s.min_batch, 8);
    std::string fixed_below
        = with("\"workers\"", "\"policy\": {\"type\": \"fixed\", \"batch_sizes\": [40, 16, 8]}, \"workers\"");
    fixed_below.replace(fixed_below.find("\"total_batch\": 64"), 17, "\"total_batch\": 64, \"min_batch\": 9");
    expect_refused(fixed_below, "policy.batch_sizes[2]", "is 8, below training.min_batch (9)");
    // With elastic.batch_per_worker X follows the members: 3 slots at a least batch of 24
    // exceed X = 64, yet every member computes 32 (review); 40 per member would not be.
    std::string weak
        = with(R"("workers")", R"("elastic": { "initial_workers": 2, "batch_per_worker": 32 }, "workers")");
    weak.replace(weak.find("\"total_batch\": 64"), 17, "\"total_batch\": 64, \"min_batch\": 24");
    EXPECT_EQ(scenario::parse_scenario(weak, "t").min_batch, 24);
    weak.replace(weak.find("\"min_batch\": 24"), 15, "\"min_batch\": 33");
    expect_refused(weak, "elastic.batch_per_worker", "is 32, below training.min_batch (33)");
}

TEST(ScenarioParser, EpochsAndIterationsTogetherAreRefused)
{
    expect_refused(
        with("\"iterations\": 10", "\"iterations\": 10, \"epochs\": 1"), "training", "either epochs or iterations");
}

TEST(ScenarioParser, ResourcePointsMustMoveForward)
{
    expect_refused(
        with("\"speed\": 250", "\"speed\": 250, \"resources\": [{\"at_s\": 5}, {\"at_s\": 5, \"cpu\": 0.5}]"),
        "workers[1].resources[1].at_s", "later than the previous");
}

TEST(ScenarioParser, MissingFileIsRefusedWithItsPath)
{
    try {
        scenario::load_scenario("/nonexistent/scenario.json");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(e.source(), "/nonexistent/scenario.json");
    }
}

TEST(ScenarioParser, ShippedScenariosParse)
{
    for (const char* name : { "demo.json", "homogeneous.json", "mlp-accuracy.json", "softmax-accuracy.json",
             "aggregation-weighted.json", "aggregation-naive.json", "aggregation-equal.json", "lbbsp-dynamic.json",
             "gpu-equilibrium.json", "ssp-hetero.json", "gpu-real.json", "gpu-sm-partitions.json" }) {
        const auto s = scenario::load_scenario(std::string(FULCRUM_SOURCE_DIR) + "/resources/scenarios/" + name);
        EXPECT_FALSE(s.workers.empty()) << name;
    }
}

TEST(ScenarioParser, SyncModelsPoliciesAndTheirParametersAreRead)
{
    auto s = scenario::parse_scenario(
        with("\"model\"", "\"sync\": {\"type\": \"ssp\", \"staleness\": 3}, \"model\""), "test.json");
    EXPECT_EQ(s.sync.type, sync::SyncType::Ssp);
    EXPECT_EQ(s.sync.staleness, 3);
    s = scenario::parse_scenario(with("\"model\"", "\"sync\": \"asp\", \"model\""), "test.json");
    EXPECT_EQ(s.sync.type, sync::SyncType::Asp);
    s = scenario::parse_scenario(with("\"model\"",
                                     "\"policy\": {\"type\": \"lbbsp-cpu\", \"predictor\": {\"type\": \"narx\", "
                                     "\"min_samples\": 50}, \"damping\": 0.05}, \"model\""),
        "test.json");
    EXPECT_EQ(s.policy.type, "lbbsp-cpu");
    EXPECT_EQ(s.policy.predictor.type, "narx");
    EXPECT_EQ(s.policy.predictor.narx.min_samples, 50);
    EXPECT_DOUBLE_EQ(s.policy.manager.damping, 0.05);
}

TEST(ScenarioParser, BadSyncAndPolicyValuesAreRefusedWithTheirField)
{
    expect_refused(with("\"model\"", "\"sync\": \"gossip\", \"model\""), "sync", "expected one of");
    expect_refused(
        with("\"model\"", "\"sync\": {\"type\": \"backup\", \"backups\": 3}, \"model\""), "sync.backups", "fewer than");
    expect_refused(with("\"model\"", "\"sync\": {\"type\": \"elastic-bsp\", \"algorithm\": \"fastest\"}, \"model\""),
        "sync.algorithm", "expected one of");
    expect_refused(
        with("\"model\"", "\"policy\": {\"type\": \"uniform\", \"predictor\": {\"type\": \"ema\"}}, \"model\""),
        "policy.predictor", "only the lbbsp-cpu");
    expect_refused(
        with("\"model\"", "\"policy\": {\"type\": \"lbbsp-cpu\", \"predictor\": {\"type\": \"oracle\"}}, \"model\""),
        "policy.predictor.type", "expected one of");
}

TEST(ScenarioParser, GpuWorkersInstancesCompetingLoadAndBandwidthChanges)
{
    const auto s = scenario::parse_scenario(R"({
      "model": { "type": "softmax" },
      "heterogeneity": "hetero-l3",
      "training": { "total_batch": 64, "iterations": 10, "comm_model_mb": 25 },
      "workers": [
        { "gpu": "k80", "bandwidth_changes": [ { "at_iteration": 150, "bandwidth_gbps": 2.5 } ] },
        { "gpu": { "class": "v100", "memory_gb": 32 } },
        { "instance": "m4.4xlarge", "speed": 500 }
      ]
    })",
        "test.json");
    ASSERT_TRUE(s.workers[0].gpu);
    EXPECT_EQ(s.workers[0].gpu->device, "k80");
    EXPECT_DOUBLE_EQ(s.workers[0].network.bandwidth_at(149), 10);
    EXPECT_DOUBLE_EQ(s.workers[0].network.bandwidth_at(150), 2.5);
    EXPECT_DOUBLE_EQ(s.workers[1].gpu->memory_gb, 32);
    EXPECT_DOUBLE_EQ(s.workers[2].cpu.speed, 1000);
    EXPECT_FALSE(s.workers[0].competing);
    ASSERT_TRUE(s.workers[2].competing);
    EXPECT_DOUBLE_EQ(s.workers[2].competing->run_probability, 1.0);
    EXPECT_EQ(s.comm_model_mb, 25.0);
}

TEST(ScenarioParser, UnknownGpuClassesAndInstancesAreRefused)
{
    expect_refused(
        with("{ \"speed\": 1000, \"count\": 2 }", "{ \"gpu\": \"tpu\" }"), "workers[0].gpu", "expected one of");
    expect_refused(with("{ \"speed\": 1000, \"count\": 2 }", "{ \"instance\": \"p3.2xlarge\" }"), "workers[0].instance",
        "Cluster-B");
    expect_refused(with("{ \"speed\": 1000, \"count\": 2 }",
                       "{ \"speed\": 1, \"bandwidth_changes\": [ {\"at_iteration\": 5, \"bandwidth_gbps\": 1}, "
                       "{\"at_iteration\": 5, \"bandwidth_gbps\": 2} ] }"),
        "workers[0].bandwidth_changes[1].at_iteration", "later");
}

TEST(ScenarioParser, ElasticSectionIsReadWithItsResizes)
{
    const auto s = scenario::parse_scenario(with(R"("workers")", R"("elastic": { "initial_workers": 2, "resizes": [
        { "before_iteration": 4, "action": "add-worker" },
        { "before_iteration": 6, "action": "remove-server", "target": 0 },
        { "before_iteration": 8, "action": "remove-worker", "target": 2 } ] }, "workers")"),
        "test.json");
    ASSERT_TRUE(s.elastic.present);
    EXPECT_EQ(s.elastic.initial_workers, 2);
    ASSERT_EQ(s.elastic.resizes.size(), 3u);
    EXPECT_EQ(s.elastic.resizes[0].action, "add-worker");
    EXPECT_FALSE(s.elastic.resizes[0].target);
    EXPECT_EQ(s.elastic.resizes[1].target, 0);
    EXPECT_EQ(s.elastic.resizes[2].before_iteration, 8);
    EXPECT_EQ(s.elastic.min_workers, 1);
    EXPECT_EQ(s.elastic.max_workers, 3) << "every slot";
    const auto bounded = scenario::parse_scenario(
        with(R"("workers")", R"("elastic": { "initial_workers": 2, "min_workers": 2, "max_workers": 2 }, "workers")"),
        "test.json");
    EXPECT_EQ(bounded.elastic.min_workers, 2);
    EXPECT_EQ(bounded.elastic.max_workers, 2);
    EXPECT_EQ(bounded.elastic.pause_s, ResizePauses {}) << "changes cost nothing on the run clock unless said";
    const auto paused = scenario::parse_scenario(
        with(R"("workers")", R"("elastic": { "pause_s": { "add-worker": 2.5, "restart": 30 } }, "workers")"),
        "test.json");
    EXPECT_DOUBLE_EQ(paused.elastic.pause_s.of(ResizeAction::AddWorker), 2.5);
    EXPECT_DOUBLE_EQ(paused.elastic.pause_s.of(ResizeAction::RemoveServer), 0);
    EXPECT_DOUBLE_EQ(paused.elastic.pause_s.restart_s, 30);
}

// Weak scaling and the servers' side of a barrier: elastic.batch_per_worker must make the
// total batch at the start, and servers.bandwidth_gbps and aggregate_s are read as given.
TEST(ScenarioParser, ABatchPerWorkerAndTheServersLinksAreRead)
{
    const auto s
        = scenario::parse_scenario(with(R"("workers")",
                                       R"("servers": { "shards": 2, "bandwidth_gbps": 9.5, "aggregate_s": 0.004 },)"
                                       R"( "elastic": { "initial_workers": 2, "batch_per_worker": 32 }, "workers")"),
            "test.json");
    EXPECT_EQ(s.elastic.batch_per_worker, 32);
    EXPECT_EQ(s.server_shards, 2);
    EXPECT_DOUBLE_EQ(s.server_links.bandwidth_gbps, 9.5);
    EXPECT_DOUBLE_EQ(s.server_links.aggregate_s, 0.004);
    const auto plain = scenario::parse_scenario(with(R"("workers")", R"("elastic": {}, "workers")"), "test.json");
    EXPECT_EQ(plain.elastic.batch_per_worker, 0) << "X stays the total batch unless said";
    EXPECT_DOUBLE_EQ(plain.server_links.bandwidth_gbps, 0) << "the servers' links are not modelled unless said";
    expect_refused(with(R"("workers")", R"("elastic": { "initial_workers": 2, "batch_per_worker": 16 }, "workers")"),
        "elastic.batch_per_worker", "training.total_batch must be 32 (x 2 workers at the start), not 64");
    expect_refused(with(R"("workers")", R"("elastic": { "batch_per_worker": 0 }, "workers")"),
        "elastic.batch_per_worker", "expected 1 to");
    expect_refused(with(R"("workers")", R"("servers": { "bandwidth_gbps": -1 }, "workers")"), "servers.bandwidth_gbps",
        "expected a number in [0, 1e+06]");
}

TEST(ScenarioParser, BadElasticSectionsAreRefusedWithTheirField)
{
    const auto elastic = [](const std::string& section) {
        return with(R"("workers")", R"("elastic": )" + section + R"(, "workers")");
    };
    expect_refused(elastic(R"({ "initial_workers": 4 })"), "elastic.initial_workers", "expected 1 to 3");
    expect_refused(elastic(R"({ "resizes": [ { "before_iteration": 1, "action": "grow" } ] })"),
        "elastic.resizes[0].action", "expected one of: add-server");
    expect_refused(elastic(R"({ "resizes": [ { "action": "add-worker" } ] })"), "elastic.resizes[0].before_iteration",
        "is required");
    expect_refused(elastic(R"({ "resizes": [ { "before_iteration": 1, "action": "remove-worker", "target": 3 } ] })"),
        "elastic.resizes[0].target", "expected 0 to 2");
    expect_refused(elastic(R"({ "partition_data": 1 })"), "elastic.partition_data", "true or false");
    expect_refused(elastic(R"({ "min_workers": 0 })"), "elastic.min_workers", "expected 1 to 3");
    expect_refused(elastic(R"({ "pause_s": { "add-worker": -1 } })"), "elastic.pause_s.add-worker",
        "expected a number in [0, 1e+06]");
    expect_refused(elastic(R"({ "pause_s": { "grow": 1 } })"), "elastic.pause_s.grow", "add-worker");
    expect_refused(elastic(R"({ "min_workers": 2, "max_workers": 1 })"), "elastic.max_workers", "expected 2 to 3");
    expect_refused(elastic(R"({ "initial_workers": 1, "min_workers": 2 })"), "elastic.initial_workers",
        "outside min_workers..max_workers (2..3)");
    expect_refused(elastic(R"({ "resizes": [ { "before_iteration": 1, "action": "add-server", "target": 1 } ] })"),
        "elastic.resizes[0].target", "unknown field");
    expect_refused(with(R"("workers")", R"("sync": "asp", "elastic": { "initial_workers": 1 }, "workers")"), "elastic",
        "expected bsp or backup");
}

TEST(ScenarioParser, RemoteWorkersNeedTheRealModeAndABoolean)
{
    expect_refused(with(R"({ "name": "slow", "speed": 250 })", R"({ "name": "slow", "speed": 250, "remote": true })"),
        "workers[1].remote", "must be \"real\"");
    expect_refused(with(R"({ "name": "slow", "speed": 250 })", R"({ "name": "slow", "speed": 250, "remote": "yes" })"),
        "workers[1].remote", "true or false");
    std::string real
        = with(R"({ "name": "slow", "speed": 250 })", R"({ "name": "slow", "speed": 250, "remote": true })");
    real.replace(real.find('{'), 1, R"({ "mode": "real",)");
    const auto s = scenario::parse_scenario(real, "test.json");
    EXPECT_FALSE(s.workers[0].remote);
    EXPECT_TRUE(s.workers[2].remote);
}

TEST(ScenarioParser, APolicyOrSyncSectionAloneIsCheckedAgainstTheJob)
{
    const scenario::Scenario job = scenario::parse_scenario(kMinimal, "test.json"); // 3 workers, total batch 64
    const balance::PolicySpec fixed
        = scenario::parse_policy_section(R"({"type": "fixed", "batch_sizes": [30, 30, 4]})", job, "set-policy");
    EXPECT_EQ(fixed.type, "fixed");
    EXPECT_EQ(fixed.batch_sizes, (std::vector<std::int32_t> { 30, 30, 4 }));
    EXPECT_EQ(
        scenario::parse_policy_section(R"({"type": "lbbsp-cpu", "damping": 0.1})", job, "set-policy").manager.damping,
        0.1);
    EXPECT_EQ(scenario::parse_sync_section(R"("bsp")", job, "set-sync-model").type, sync::SyncType::Bsp);
    const sync::SyncSpec backup
        = scenario::parse_sync_section(R"({"type": "backup", "backups": 2})", job, "set-sync-model");
    EXPECT_EQ(backup.backups, 2);

    const auto refused = [&](auto parse, const std::string& text, const std::string& field, const std::string& words) {
        try {
            parse(text);
            ADD_FAILURE() << "accepted " << text;
        } catch (const InputError& e) {
            EXPECT_EQ(e.field(), field) << e.what();
            EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
        }
    };
    const auto policy = [&](const std::string& t) { return scenario::parse_policy_section(t, job, "set-policy"); };
    const auto sync_model
        = [&](const std::string& t) { return scenario::parse_sync_section(t, job, "set-sync-model"); };
    refused(policy, R"({"type": "fixed", "batch_sizes": [32, 32]})", "policy.batch_sizes", "one per worker (3)");
    refused(policy, R"({"type": "fixed", "batch_sizes": [30, 30, 30]})", "policy.batch_sizes", "total_batch = 64");
    refused(policy, R"({"type": "fastest"})", "policy.type", "expected one of");
    refused(policy, R"({"type": "uniform", "dampening": 0.1})", "policy.dampening", "unknown field");
    refused(policy, R"([1, 2])", "policy", "expected an object");
    refused(sync_model, R"({"type": "backup", "backups": 3})", "sync.backups", "fewer than the 3 workers");
    refused(sync_model, R"("bulk")", "sync", "expected one of");
    refused(sync_model, R"({"type": "bsp",)", "line 1, column 16", "malformed JSON");
}

TEST(ScenarioParser, ThePlacementSectionGivesTheGpuMemoryOfEachWorker)
{
    EXPECT_FALSE(scenario::parse_scenario(kMinimal, "test.json").placement_memory_gb);
    const std::string shared = with(R"("workers")", R"("placement": {"memory_gb": 4.5}, "workers")");
    EXPECT_EQ(scenario::parse_scenario(shared, "test.json").placement_memory_gb, 4.5);
    EXPECT_EQ(scenario::parse_scenario(kMinimal, "test.json").placement_server_gpus, 0);
    EXPECT_EQ(
        scenario::parse_scenario(with(R"("workers")", R"("placement": {"server_gpus": 3}, "workers")"), "test.json")
            .placement_server_gpus,
        3);
    expect_refused(with(R"("workers")", R"("placement": {"server_gpus": -1}, "workers")"), "placement.server_gpus",
        "expected 0 to 1024");
    expect_refused(with(R"("workers")", R"("placement": {"memory_gb": 0}, "workers")"), "placement.memory_gb",
        "expected a number in");
    expect_refused(with(R"("workers")", R"("placement": {"gpus": 2}, "workers")"), "placement.gpus", "unknown field");
}

TEST(ScenarioParser, ChangesAreReadInOrderAndEachNamesItsField)
{
    const scenario::Scenario s = scenario::parse_scenario(with(R"("workers")",
                                                              R"("changes": [
            { "before_iteration": 5, "policy": { "type": "lbbsp-cpu" } },
            { "before_iteration": 9, "sync": { "type": "backup", "backups": 1 } }], "workers")"),
        "test.json");
    ASSERT_EQ(s.changes.size(), 2u);
    EXPECT_EQ(s.changes[0].before_iteration, 5);
    EXPECT_EQ(s.changes[0].policy->type, "lbbsp-cpu");
    EXPECT_EQ(s.changes[0].policy_json, R"({"type":"lbbsp-cpu"})");
    EXPECT_FALSE(s.changes[0].sync);
    EXPECT_EQ(s.changes[1].sync->type, sync::SyncType::Backup);

    const auto change = [](const std::string& entries) {
        return with(R"("workers")", R"("changes": [)" + entries + R"(], "workers")");
    };
    expect_refused(change(R"({ "before_iteration": 5 })"), "changes[0]", "changes nothing");
    expect_refused(change(R"({ "policy": { "type": "uniform" } })"), "changes[0].before_iteration", "is required");
    expect_refused(change(R"({ "before_iteration": 5, "policy": { "type": "fastest" } })"), "changes[0].policy.type",
        "expected one of");
    expect_refused(change(R"({ "before_iteration": 5, "sync": "asp" }, { "before_iteration": 5, "sync": "bsp" })"),
        "changes[1].before_iteration", "later than the previous");
    expect_refused(change(R"({ "before_iteration": 5, "sync": "bsp", "at": 3 })"), "changes[0].at", "unknown field");
}

TEST(ScenarioParser, AWorkersDeviceIsTheCpuOrACudaOrdinal)
{
    const auto s = scenario::parse_scenario(
        with(R"({ "name": "slow", "speed": 250 })", R"({ "name": "slow", "speed": 250, "device": "cuda:2" })"),
        "test.json");
    EXPECT_EQ(s.workers[0].device, perf::ComputeDevice {});
    EXPECT_EQ(s.workers[1].device, perf::ComputeDevice {});
    EXPECT_EQ(s.workers[2].device, (perf::ComputeDevice { perf::ComputeDevice::Kind::Cuda, 2, std::nullopt }));
    EXPECT_EQ(perf::to_string(s.workers[2].device), "cuda:2");
    for (const char* bad : { "gpu", "cuda", "cuda:", "cuda:-1", "cuda:1x", "cuda:4096", "CPU" })
        expect_refused(with(R"({ "name": "slow", "speed": 250 })",
                           R"({ "name": "slow", "speed": 250, "device": ")" + std::string(bad) + "\" }"),
            "workers[1].device", "expected \"cpu\" or \"cuda:N\"");
    std::string real = with(R"({ "name": "slow", "speed": 250 })",
        R"({ "name": "slow", "speed": 250, "remote": true, "device": "cuda:0" })");
    real.replace(real.find('{'), 1, R"({ "mode": "real",)");
    expect_refused(real, "workers[1].device", "fulcrum-worker --device");
}

// A GPU worker may ask for a share of its GPU's SMs (a green context); the share needs a
// CUDA device and is a count of SMs.
TEST(ScenarioParser, AGpuWorkersSmShareNeedsACudaDeviceAndACount)
{
    const auto s = scenario::parse_scenario(with(R"({ "name": "slow", "speed": 250 })",
                                                R"({ "name": "slow", "speed": 250, "device": "cuda:0", "sms": 16 })"),
        "test.json");
    EXPECT_EQ(s.workers[2].device.sms, 16); // the second entry, after a worker of count 2
    EXPECT_FALSE(s.workers[0].device.sms);
    expect_refused(with(R"({ "name": "slow", "speed": 250 })", R"({ "name": "slow", "speed": 250, "sms": 16 })"),
        "workers[1].sms", "\"device\": \"cuda:N\"");
    for (const char* bad : { "0", "2000", "\"half\"", "16.5" })
        expect_refused(with(R"({ "name": "slow", "speed": 250 })",
                           R"({ "name": "slow", "speed": 250, "device": "cuda:0", "sms": )" + std::string(bad) + " }"),
            "workers[1].sms", "");
}

// A share may be strict (the job fails rather than share the whole GPU); strictness needs
// a share to be strict about.
TEST(ScenarioParser, AStrictSmShareNeedsAShare)
{
    const auto s = scenario::parse_scenario(with(R"({ "name": "slow", "speed": 250 })",
                                                R"({ "name": "slow", "speed": 250, "device": "cuda:0", "sms": 16,
                                                     "sms_strict": true })"),
        "test.json");
    EXPECT_TRUE(s.workers[2].device.strict_sms);
    EXPECT_FALSE(s.workers[0].device.strict_sms);
    expect_refused(with(R"({ "name": "slow", "speed": 250 })",
                       R"({ "name": "slow", "speed": 250, "device": "cuda:0", "sms_strict": true })"),
        "workers[1].sms_strict", "give the worker \"sms\" too");
    expect_refused(with(R"({ "name": "slow", "speed": 250 })",
                       R"({ "name": "slow", "speed": 250, "device": "cuda:0", "sms": 16, "sms_strict": "yes" })"),
        "workers[1].sms_strict", "");
}

TEST(ScenarioParser, OnStallIsReadWithItsDefaultsAndBadValuesNameTheirField)
{
    const auto plain = scenario::parse_scenario(kMinimal, "test.json");
    EXPECT_EQ(plain.stall.factor, 5);
    EXPECT_EQ(plain.stall.min_s, 2);
    EXPECT_EQ(plain.stall.action, StallAction::Report);
    const auto stall
        = [](const std::string& section) { return with(R"("model")", R"("on_stall": )" + section + R"(, "model")"); };
    const auto s = scenario::parse_scenario(
        stall(R"({"factor": 8, "min_s": 0.5, "action": "exclude", "after_s": 1, "for_s": 30})"), "test.json");
    EXPECT_EQ(s.stall.factor, 8);
    EXPECT_EQ(s.stall.min_s, 0.5);
    EXPECT_EQ(s.stall.action, StallAction::Exclude);
    EXPECT_EQ(s.stall.after_s, 1);
    EXPECT_EQ(s.stall.for_s, 30);
    EXPECT_EQ(s.stall.threshold_s(0.04), 0.5);
    EXPECT_EQ(s.stall.threshold_s(1), 8);
    expect_refused(stall(R"({"factor": 1})"), "on_stall.factor", "1.5");
    expect_refused(stall(R"({"action": "kill"})"), "on_stall.action", "exclude");
    expect_refused(stall(R"({"for_s": 0})"), "on_stall.for_s", "0.01");
    expect_refused(stall(R"({"after": 3})"), "on_stall.after", "");
    expect_refused(stall(R"("exclude")"), "on_stall", "");
}
