#include "common/error.h"
#include "sched/cluster.h"
#include "sched/model_templates.h"
#include "sched/simulator.h"
#include "sched/workload.h"
#include "temp_file.h"

#include <gtest/gtest.h>

using namespace fulcrum;
using namespace fulcrum::sched;

namespace {

constexpr const char* kModelsHeader = "model,size_mb,forward_ms,backward_ms,batch,memory_mb\n";

std::string field_of_models_error(const std::string& text, std::string* where = nullptr)
{
    const auto path = write_temp_file("models-bad.csv", text);
    try {
        ModelCatalogue::load(path);
    } catch (const InputError& e) {
        if (where)
            *where = e.source().substr(path.size());
        return e.field();
    }
    return "(accepted)";
}

JobSpec job_of(const ModelTemplate& model, int id, int gpus, std::int64_t iterations, double arrival)
{
    JobSpec j;
    j.id = id;
    j.name = "j" + std::to_string(id);
    j.model = model;
    j.gpus = gpus;
    j.iterations = iterations;
    j.arrival_s = arrival;
    return j;
}

} // namespace

TEST(ModelCatalogue, TheDefaultModelsAreTableThreeAsTheAuthorsSimulatorHoldsThem)
{
    const ModelTemplate vgg = *find_model_template("vgg16");
    EXPECT_DOUBLE_EQ(vgg.model_bytes, 526.4e6);
    EXPECT_DOUBLE_EQ(vgg.forward_s, 0.036);
    EXPECT_DOUBLE_EQ(vgg.backward_s, 0.054);
    EXPECT_EQ(vgg.batch_size, 16);
    EXPECT_DOUBLE_EQ(vgg.memory_gb * 1024, 4527);
    const ModelTemplate lstm = *find_model_template("lstm-ptb");
    EXPECT_DOUBLE_EQ(lstm.model_bytes, 251.8e6);
    EXPECT_EQ(lstm.batch_size, 64);
    EXPECT_EQ(ModelCatalogue::table3().names(), "vgg16, resnet50, inception-v3, lstm-ptb");
    // The earlier estimates stay available by name.
    EXPECT_DOUBLE_EQ(ModelCatalogue::named_or_file("estimates").find("vgg16")->forward_s, 0.046);
}

TEST(ModelCatalogue, AUsersModelsFileRoundTripsAndAWorkloadMayNameItsModels)
{
    const ModelCatalogue table3 = ModelCatalogue::table3();
    const ModelCatalogue again = ModelCatalogue::load(write_temp_file("models.csv", table3.csv()));
    ASSERT_EQ(again.models().size(), 4u);
    for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(again.models()[i].name, table3.models()[i].name);
        EXPECT_NEAR(again.models()[i].model_bytes, table3.models()[i].model_bytes, 1e-3);
        EXPECT_NEAR(again.models()[i].forward_s, table3.models()[i].forward_s, 1e-12);
        EXPECT_NEAR(again.models()[i].memory_gb, table3.models()[i].memory_gb, 1e-12);
    }

    const auto own = ModelCatalogue::load(write_temp_file(
        "own-models.csv", std::string("# a user's models\n") + kModelsHeader + "bert-large,1340,120,240,8,14000\n"));
    const auto path = write_temp_file("own-jobs.csv", "name,model,gpus,iterations,arrival_s\nft,bert-large,8,100,0\n");
    const std::vector<JobSpec> jobs = load_workload(path, own);
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_DOUBLE_EQ(jobs[0].model.model_bytes, 1340e6);
    EXPECT_DOUBLE_EQ(jobs[0].compute_per_iteration_s(), 0.360);
    // The default catalogue does not know it, and says which models it does know.
    try {
        load_workload(path);
        ADD_FAILURE() << "bert-large accepted without its models file";
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "model");
        EXPECT_NE(e.reason().find("vgg16, resnet50, inception-v3, lstm-ptb"), std::string::npos) << e.reason();
    }
    // A generated workload draws from the catalogue it is given.
    WorkloadGenerator g;
    g.jobs = 20;
    g.models = own;
    for (const JobSpec& j : generate_workload(g))
        EXPECT_EQ(j.model.name, "bert-large");
}

TEST(ModelCatalogue, BadModelsFilesNameTheLineAndField)
{
    std::string where;
    EXPECT_EQ(field_of_models_error(std::string(kModelsHeader) + "m,100,-3,10,16,1000\n", &where), "forward_ms");
    EXPECT_EQ(where, ":2");
    EXPECT_EQ(field_of_models_error(std::string(kModelsHeader) + "m,big,3,10,16,1000\n"), "size_mb");
    EXPECT_EQ(field_of_models_error(std::string(kModelsHeader) + "m,100,3,10,0,1000\n"), "batch");
    EXPECT_EQ(field_of_models_error(std::string(kModelsHeader) + "m,100,3,10,16,0\n"), "memory_mb");
    EXPECT_EQ(field_of_models_error(std::string(kModelsHeader) + "m,1,1,1,1,1\nm,2,2,2,2,2\n", &where), "model");
    EXPECT_EQ(where, ":3") << "a model defined twice names the second line";
    EXPECT_EQ(field_of_models_error("model,size\n"), "header");
    EXPECT_EQ(field_of_models_error(kModelsHeader), "") << "a header and no models";
    EXPECT_THROW(ModelCatalogue::named_or_file("/nonexistent/models.csv"), InputError);
}

TEST(Workload, TheGeneratorDrawsIterationsAndArrivalsInTheirRanges)
{
    const auto range = parse_iteration_range("10-60");
    ASSERT_TRUE(range);
    EXPECT_EQ(range->first, 10);
    EXPECT_EQ(range->second, 60);
    for (const char* bad : { "", "10", "60-10", "0-5", "a-b", "10-60x", "-5" })
        EXPECT_FALSE(parse_iteration_range(bad)) << bad;

    WorkloadGenerator g;
    g.jobs = 160;
    g.min_iterations = 10;
    g.max_iterations = 60;
    g.horizon_s = 12;
    std::int64_t lowest = 1000, highest = 0;
    for (const JobSpec& j : generate_workload(g)) {
        lowest = std::min(lowest, j.iterations);
        highest = std::max(highest, j.iterations);
        EXPECT_GE(j.arrival_s, 0);
        EXPECT_LE(j.arrival_s, 12);
    }
    EXPECT_GE(lowest, 10);
    EXPECT_LE(highest, 60);
    EXPECT_LT(lowest, 20) << "160 draws cover the range";
    EXPECT_GT(highest, 50);
}

// The authors' simulator counts a spread job's future all-reduces in its GPUs' workload
// (placement_comm_b); with it, LS sends a newcomer away from those GPUs.
TEST(Placement, CountingCommunicationInTheWorkloadSteersListSchedulingAwayFromSpreadJobs)
{
    ClusterSpec cluster;
    cluster.servers = 3;
    cluster.gpus_per_server = 1;
    cluster.gpu_memory_gb = 32;
    const ModelTemplate vgg = *find_model_template("vgg16");
    // A spans servers 0 and 1; B takes the idle GPU 2 with more compute than A has; where
    // does C go?
    const std::vector<JobSpec> jobs
        = { job_of(vgg, 0, 2, 10, 0.0), job_of(vgg, 1, 1, 40, 0.001), job_of(vgg, 2, 1, 5, 0.002) };
    SimulationOptions options;
    options.placement = "ls";
    options.comm = "srsf-1";
    const auto gpu_of_c = [&](double placement_comm_b) {
        ClusterSpec c = cluster;
        c.placement_comm_b = placement_comm_b;
        const SimulationResult r = simulate(c, jobs, options);
        EXPECT_EQ(r.jobs.size(), 3u);
        EXPECT_EQ(r.jobs[0].gpus, (std::vector<int> { 0, 1 }));
        EXPECT_EQ(r.jobs[1].gpus, std::vector<int> { 2 });
        return r.jobs[2].gpus.front();
    };
    EXPECT_EQ(gpu_of_c(0), 0) << "compute only: A's GPUs hold less work than B's";
    EXPECT_EQ(gpu_of_c(7.8125e-9), 2) << "with A's ten all-reduces counted, B's GPU is the lighter";

    const ClusterSpec file = load_cluster(write_temp_file("cluster-pcb.json", R"({"placement_comm_b": 7.8125e-9})"));
    EXPECT_DOUBLE_EQ(file.placement_comm_b, 7.8125e-9);
    EXPECT_THROW(load_cluster(write_temp_file("cluster-pcb-bad.json", R"({"placement_comm_b": -1})")), InputError);
}
