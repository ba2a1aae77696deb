#include "common/error.h"
#include "experiment/experiment.h"
#include "scenario/scenario.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

using namespace fulcrum;

namespace {

std::string read(const std::filesystem::path& p)
{
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::filesystem::path fresh_dir(const std::string& name)
{
    auto dir
        = std::filesystem::temp_directory_path() / ("fulcrum-experiment-" + name + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    return dir;
}

} // namespace

TEST(Experiments, ZiplineWritesTheColumnsTheIssueNamesAndAllExactAlgorithmsAgree)
{
    experiment::ExperimentOptions o;
    o.out = fresh_dir("zipline");
    o.quick = true;
    experiment::run_experiment("zipline", o);
    const std::string csv = read(o.out / "results.csv");
    EXPECT_EQ(csv.substr(0, csv.find('\n')), "algorithm,workers,range,ms,window_s,optimal");
    std::istringstream lines(csv);
    std::string line;
    std::getline(lines, line);
    int rows = 0;
    while (std::getline(lines, line)) {
        ++rows;
        if (line.rfind("gridscan,", 0) != 0) {
            EXPECT_NE(line.find(",yes"), std::string::npos) << line;
        }
    }
    EXPECT_EQ(rows, 2 * 2 * 4);
    EXPECT_NE(read(o.out / "results.md").find("fulcrum-experiment zipline"), std::string::npos);
    std::filesystem::remove_all(o.out);
}

// gpu-profile measures a real worker's step on the CPU (no GPU here), fits the GPU model
// and writes a "gpu" section a scenario takes; a device the machine lacks is refused.
TEST(Experiments, GpuProfileMeasuresTheCpuAndWritesAProfileAScenarioTakes)
{
    experiment::ExperimentOptions o;
    o.out = fresh_dir("gpu-profile");
    o.quick = true;
    experiment::run_experiment("gpu-profile", o);
    const std::string csv = read(o.out / "results.csv");
    EXPECT_EQ(csv.substr(0, csv.find('\n')), "batch,measured_ms,fitted_ms,samples_per_s");
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 9); // batches 1 to 256
    const std::string profile = read(o.out / "profile.json");
    const std::string scenario_text = R"({"data": {"source": "synthetic", "train_size": 100, "test_size": 10},
        "model": {"type": "softmax"}, "training": {"total_batch": 32, "iterations": 2},
        "workers": [)"
        + profile + "]}";
    const scenario::Scenario s = scenario::parse_scenario(scenario_text, "profile.json");
    ASSERT_TRUE(s.workers.at(0).gpu);
    EXPECT_GT(s.workers[0].gpu->peak_speed, 0);
    EXPECT_GE(s.workers[0].gpu->saturation_batch, 1);
    EXPECT_NE(read(o.out / "results.md").find("fulcrum-experiment gpu-profile --device cpu"), std::string::npos);

    o.device = "cuda:99";
    try {
        experiment::run_experiment("gpu-profile", o);
        FAIL() << "cuda:99 was measured";
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "--device");
    }
    o.device = "tpu";
    EXPECT_THROW(experiment::run_experiment("gpu-profile", o), InputError);
    std::filesystem::remove_all(fresh_dir("gpu-profile"));
}

TEST(Experiments, UnknownNamesAndUnusableFoldersAreRefused)
{
    experiment::ExperimentOptions o;
    o.out = fresh_dir("unknown");
    EXPECT_THROW(experiment::run_experiment("fig-99", o), std::invalid_argument);
    o.out = "/proc/fulcrum-cannot-write-here";
    EXPECT_THROW(experiment::run_experiment("zipline", o), InputError);
}

TEST(Experiments, EquilibriumQuickRunRecordsBothRunsAndFindsThePhaseChange)
{
    if (!std::filesystem::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"))
        GTEST_SKIP() << "Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)";
    experiment::ExperimentOptions o;
    o.out = fresh_dir("equilibrium");
    o.quick = true;
    experiment::run_experiment("equilibrium", o);
    EXPECT_TRUE(std::filesystem::exists(o.out / "equilibrium-lbbsp.db"));
    EXPECT_TRUE(std::filesystem::exists(o.out / "equilibrium-bsp.db"));
    const std::string md = read(o.out / "results.md");
    EXPECT_EQ(md.find("switched to fine-tune at iteration **never**"), std::string::npos) << md;
    std::filesystem::remove_all(o.out);
}
