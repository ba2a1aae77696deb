#include "common/error.h"
#include "sched/comm_policy.h"
#include "sched/elastic_simulator.h"
#include "sched/model_templates.h"
#include "sched/placement.h"
#include "sched/sim_report.h"
#include "sched/simulator.h"
#include "sched/workload.h"
#include "temp_file.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <set>

using namespace fulcrum;
using namespace fulcrum::sched;

namespace {

JobSpec job(int id, const std::string& model, int gpus, std::int64_t iterations, double arrival = 0)
{
    JobSpec j;
    j.id = id;
    j.name = "j" + std::to_string(id);
    j.model = *find_model_template(model);
    j.gpus = gpus;
    j.iterations = iterations;
    j.arrival_s = arrival;
    return j;
}

struct FixedLinks final : LinkState {
    std::vector<int> tasks;
    std::vector<double> remaining;
    int tasks_on(int s) const override { return tasks[static_cast<std::size_t>(s)]; }
    double remaining_bytes_of_sole_task(int s) const override { return remaining[static_cast<std::size_t>(s)]; }
};

} // namespace

TEST(ContentionModel, FollowsEquationFive)
{
    const ContentionModel m;
    const double bytes = 100e6;
    EXPECT_DOUBLE_EQ(m.time(bytes, 1), m.a + m.b * bytes);
    EXPECT_DOUBLE_EQ(m.time(bytes, 3), m.a + 3 * m.b * bytes + 2 * m.eta * bytes);
}

TEST(CommPolicies, AdaDualSharesALinkOnlyWithAMuchLargerSoleTask)
{
    const ContentionModel m;
    const AdaDualCommPolicy ada(m);
    EXPECT_DOUBLE_EQ(ada.threshold(), m.b / (2 * (m.b + m.eta)));
    FixedLinks links;
    links.tasks = { 0, 1, 2 };
    links.remaining = { 0, 100e6, 0 };
    const std::vector<int> free_link { 0 }, busy_link { 0, 1 }, crowded { 2 };
    EXPECT_TRUE(ada.admit(500e6, free_link, links));
    EXPECT_TRUE(ada.admit(0.99 * ada.threshold() * 100e6, busy_link, links));
    EXPECT_FALSE(ada.admit(1.01 * ada.threshold() * 100e6, busy_link, links));
    EXPECT_FALSE(ada.admit(1, crowded, links)); // never beside two

    const SrsfCommPolicy srsf2(2);
    EXPECT_TRUE(srsf2.admit(1e9, busy_link, links));
    EXPECT_FALSE(srsf2.admit(1, crowded, links));
    EXPECT_THROW(make_comm_policy("srsf-0", m), std::invalid_argument);
    EXPECT_THROW(make_comm_policy("ada", m), std::invalid_argument);
}

TEST(Placement, EachPolicyPicksTheGpusItsRuleNames)
{
    ClusterSpec cluster;
    cluster.servers = 3;
    cluster.gpus_per_server = 2;
    std::vector<GpuState> gpus;
    const std::vector<double> load { 5, 9, 1, 2, 7, 0 }; // server loads 14, 3, 7
    for (int g = 0; g < 6; ++g)
        gpus.push_back({ g / 2, load[static_cast<std::size_t>(g)], 16 });
    gpus[5].free_memory_gb = 1; // no room for any model
    const JobSpec two = job(0, "resnet50", 2, 10), four = job(1, "resnet50", 4, 10);

    EXPECT_EQ(make_placement("ff", 1)->place(two, cluster, gpus), (std::vector<int> { 0, 1 }));
    EXPECT_EQ(make_placement("ls", 1)->place(two, cluster, gpus), (std::vector<int> { 2, 3 }));
    // LWF-1: a 2-GPU job is above κ, so it fills the least-loaded server first (server 1:
    // GPUs 2, 3), then the next (server 2: only GPU 4 has room).
    EXPECT_EQ(make_placement("lwf-1", 1)->place(two, cluster, gpus), (std::vector<int> { 2, 3 }));
    EXPECT_EQ(make_placement("lwf-1", 1)->place(four, cluster, gpus), (std::vector<int> { 2, 3, 4, 0 }));
    // LWF-4 treats the 4-GPU job as small: least-loaded GPUs anywhere.
    EXPECT_EQ(make_placement("lwf-4", 1)->place(four, cluster, gpus), (std::vector<int> { 2, 3, 0, 4 }));
    const std::vector<int> random = make_placement("rand", 7)->place(four, cluster, gpus);
    EXPECT_EQ(random, make_placement("rand", 7)->place(four, cluster, gpus));
    EXPECT_EQ(std::set<int>(random.begin(), random.end()).size(), 4u);
    EXPECT_EQ(std::count(random.begin(), random.end(), 5), 0);
    EXPECT_TRUE(make_placement("ff", 1)->place(job(2, "resnet50", 6, 10), cluster, gpus).empty());
    EXPECT_THROW(make_placement("lwf-0", 1), std::invalid_argument);
    EXPECT_THROW(make_placement("best", 1), std::invalid_argument);
}

TEST(Simulator, ALoneJobTakesItsComputeAndAllReduceTimes)
{
    ClusterSpec cluster;
    cluster.servers = 2;
    cluster.gpus_per_server = 4;
    SimulationOptions options;
    options.placement = "ff";
    options.comm = "srsf-1";
    // One GPU: forward + backward per iteration, nothing else, the GPU always busy.
    SimulationResult one = simulate(cluster, { job(0, "resnet50", 1, 100, 5.0) }, options);
    ASSERT_EQ(one.jobs.size(), 1u);
    const ModelTemplate r = *find_model_template("resnet50");
    EXPECT_NEAR(one.jobs[0].jct_s(), 100 * (r.forward_s + r.backward_s), 1e-9);
    EXPECT_NEAR(one.makespan_s, 5.0 + 100 * (r.forward_s + r.backward_s), 1e-9);
    EXPECT_EQ(one.tasks, 200);
    // Eight GPUs on two servers: every iteration adds one uncontended network all-reduce.
    SimulationResult eight = simulate(cluster, { job(0, "resnet50", 8, 10) }, options);
    EXPECT_NEAR(
        eight.jobs[0].jct_s(), 10 * (r.forward_s + r.backward_s + cluster.network.time(r.model_bytes, 1)), 1e-9);
    // Four GPUs of one server: the all-reduce stays inside it.
    SimulationResult four = simulate(cluster, { job(0, "resnet50", 4, 10) }, options);
    EXPECT_NEAR(four.jobs[0].jct_s(),
        10 * (r.forward_s + r.backward_s + cluster.network.a + cluster.intra_server_b * r.model_bytes), 1e-9);
}

TEST(Simulator, OverlappingAllReducesShareTheLinkByEquationFive)
{
    // Two servers of one GPU: two 2-GPU LSTM jobs share both GPUs (taking turns, the job
    // with less remaining service first) and both links. A's all-reduce starts at t1 = f+b,
    // B's at t2 = 2(f+b), while A's is still running.
    ClusterSpec cluster;
    cluster.servers = 2;
    cluster.gpus_per_server = 1;
    const ContentionModel& m = cluster.network;
    const ModelTemplate l = *find_model_template("lstm-ptb");
    const double M = l.model_bytes, t1 = l.forward_s + l.backward_s, t2 = 2 * t1;
    const std::vector<JobSpec> jobs { job(0, "lstm-ptb", 2, 1), job(1, "lstm-ptb", 2, 1) };
    SimulationOptions options;
    options.placement = "lwf-1";
    options.record_spans = true;

    options.comm = "srsf-1"; // B waits for A's link
    SimulationResult serial = simulate(cluster, jobs, options);
    const double a_done = t1 + m.time(M, 1);
    EXPECT_NEAR(serial.jobs[0].finish_s, a_done, 1e-9);
    EXPECT_NEAR(serial.jobs[1].finish_s, a_done + m.time(M, 1), 1e-9);

    options.comm = "srsf-2"; // B joins: both move at eq. 5's two-way rate until A ends
    SimulationResult shared = simulate(cluster, jobs, options);
    const double a_left = M - (t2 - t1 - m.a) / m.b;
    const double a_end = t2 + a_left * m.seconds_per_byte(2);
    const double b_left = M - (a_end - t2 - m.a) / m.seconds_per_byte(2);
    EXPECT_NEAR(shared.jobs[0].finish_s, a_end, 1e-9);
    EXPECT_NEAR(shared.jobs[1].finish_s, a_end + b_left * m.b, 1e-9);
    int peak = 0;
    for (const TimelineSpan& s : shared.spans)
        if (s.kind == TimelineSpan::Kind::AllReduce)
            peak = std::max(peak, s.contention);
    EXPECT_EQ(peak, 2);
    // Equal messages: AdaDUAL never shares, so Ada-SRSF matches SRSF(1) here.
    options.comm = "ada-srsf";
    EXPECT_NEAR(simulate(cluster, jobs, options).jobs[1].finish_s, serial.jobs[1].finish_s, 1e-9);
}

TEST(Simulator, RejectsJobsTheClusterCanNeverRunAndRunsTheRest)
{
    ClusterSpec cluster; // 64 GPUs of 16 GB
    JobSpec huge = job(1, "resnet50", 65, 10);
    JobSpec hungry = job(2, "vgg16", 1, 10);
    hungry.model.memory_gb = 40;
    SimulationResult r = simulate(cluster, { job(0, "resnet50", 2, 10), huge, hungry }, {});
    ASSERT_EQ(r.rejected.size(), 2u);
    EXPECT_NE(r.rejected[0].reason.find("65 GPUs; the cluster has 64"), std::string::npos);
    EXPECT_NE(r.rejected[1].reason.find("40 GB"), std::string::npos);
    EXPECT_EQ(r.jobs.size(), 1u);
    EXPECT_TRUE(r.never_ran.empty());
}

TEST(Simulator, MemoryFullGpusQueueJobsUntilRoomFreesUp)
{
    ClusterSpec cluster;
    cluster.servers = 1;
    cluster.gpus_per_server = 1;
    cluster.gpu_memory_gb = 8; // one VGG-16 (6.5 GB) at a time
    SimulationResult r = simulate(cluster, { job(0, "vgg16", 1, 10), job(1, "vgg16", 1, 10) }, {});
    ASSERT_EQ(r.jobs.size(), 2u);
    EXPECT_NEAR(r.jobs[1].placed_s, r.jobs[0].finish_s, 1e-12);
    EXPECT_NEAR(r.gpu_utilization, 1.0, 1e-9);
}

TEST(Simulator, ExclusiveGpusHoldOneJobWhereSharedOnesInterleaveTwo)
{
    ClusterSpec cluster;
    cluster.servers = 1;
    cluster.gpus_per_server = 1; // 16 GB: two ResNet-50s (5.2 GB) fit together
    const std::vector jobs { job(0, "resnet50", 1, 100), job(1, "resnet50", 1, 100, 0.01) };
    SimulationResult shared = simulate(cluster, jobs, {});
    EXPECT_NEAR(shared.jobs[1].placed_s, 0.01, 1e-12);
    SimulationOptions options;
    options.exclusive_gpus = true;
    SimulationResult exclusive = simulate(cluster, jobs, options);
    ASSERT_EQ(exclusive.jobs.size(), 2u);
    EXPECT_NEAR(exclusive.jobs[1].placed_s, exclusive.jobs[0].finish_s, 1e-12);
    EXPECT_NEAR(exclusive.jobs[0].finish_s, 100 * jobs[0].compute_per_iteration_s(), 1e-9);
    // The second job finds its GPU whole again: it finishes one job's time after the first.
    EXPECT_NEAR(exclusive.jobs[1].finish_s, 2 * exclusive.jobs[0].finish_s, 1e-9);
}

TEST(Simulator, SameSeedSameScheduleAndTheGeneratorFollowsTheTraceMix)
{
    WorkloadGenerator g;
    const std::vector<JobSpec> jobs = generate_workload(g);
    std::map<int, int> by_gpus;
    for (const JobSpec& j : jobs) {
        ++by_gpus[j.gpus];
        EXPECT_GE(j.iterations, 1000);
        EXPECT_LE(j.iterations, 6000);
        EXPECT_LE(j.arrival_s, 1200);
    }
    EXPECT_EQ(by_gpus, (std::map<int, int> { { 1, 80 }, { 2, 14 }, { 4, 26 }, { 8, 30 }, { 16, 8 }, { 32, 2 } }));
    g.jobs = 40; // short for the test
    g.max_iterations = 1200;
    SimulationOptions options;
    options.placement = "rand";
    const auto once = simulate(ClusterSpec {}, generate_workload(g), options);
    const auto again = simulate(ClusterSpec {}, generate_workload(g), options);
    EXPECT_EQ(metrics_json(once), metrics_json(again));
    EXPECT_EQ(once.jobs.size(), 40u);
    EXPECT_GT(once.gpu_utilization, 0);
    EXPECT_LE(once.gpu_utilization, 1);
    EXPECT_LE(once.median_jct_s(), once.percentile_jct_s(0.95));
}

TEST(Workload, ReadsAFileAndNamesTheLineAndFieldOfAnError)
{
    const auto good = write_temp_file(
        "good.csv", "# two jobs\nname,model,gpus,iterations,arrival_s\nb,vgg16,4,100,30\n\na,resnet50,1,50,0\n");
    const std::vector<JobSpec> jobs = load_workload(good);
    ASSERT_EQ(jobs.size(), 2u);
    EXPECT_EQ(jobs[0].name, "a"); // sorted by arrival
    EXPECT_EQ(jobs[1].model.name, "vgg16");
    EXPECT_EQ(load_workload(write_temp_file("round.csv", workload_csv(jobs))).size(), 2u);

    const auto expect_error = [](const std::string& text, const std::string& where, const std::string& field) {
        const auto path = write_temp_file("bad.csv", text);
        try {
            load_workload(path);
            ADD_FAILURE() << "accepted: " << text;
        } catch (const InputError& e) {
            EXPECT_EQ(e.source(), path + where) << e.what();
            EXPECT_EQ(e.field(), field) << e.reason();
        }
    };
    expect_error("", "", "");
    expect_error("name,model,gpus,iterations,arrival_s\n", "", "");
    expect_error("job,model\n", ":1", "header");
    expect_error("name,model,gpus,iterations,arrival_s\nx,vgg16,four,10,0\n", ":2", "gpus");
    expect_error("name,model,gpus,iterations,arrival_s\nx,vgg16,0,10,0\n", ":2", "gpus");
    expect_error("name,model,gpus,iterations,arrival_s\nx,alexnet,1,10,0\n", ":2", "model");
    expect_error("name,model,gpus,iterations,arrival_s\nx,vgg16,1,10,-3\n", ":2", "arrival_s");
    expect_error("name,model,gpus,iterations,arrival_s\nx,vgg16,1,10\n", ":2", "");
    EXPECT_THROW(load_workload("/nonexistent/jobs.csv"), InputError);
}

TEST(Workload, ClusterFileFieldsAreCheckedByName)
{
    const ClusterSpec c = load_cluster(
        write_temp_file("cluster.json", R"({"servers": 2, "gpus_per_server": 8, "network": {"eta": 0}})"));
    EXPECT_EQ(c.gpus(), 16);
    EXPECT_EQ(c.network.eta, 0);
    EXPECT_TRUE(c.cpu_workers_take_gpus) << "as the papers' workloads model every worker";
    EXPECT_FALSE(
        load_cluster(write_temp_file("cluster-cpu.json", R"({"cpu_workers_take_gpus": false})")).cpu_workers_take_gpus);
    const auto field_of = [](const std::string& text) {
        try {
            load_cluster(write_temp_file("cluster-bad.json", text));
        } catch (const InputError& e) {
            return e.field();
        }
        return std::string("(accepted)");
    };
    EXPECT_EQ(field_of(R"({"servers": 0})"), "servers");
    EXPECT_EQ(field_of(R"({"network": {"b": -1}})"), "network.b");
    EXPECT_EQ(field_of(R"({"gpus": 4})"), "gpus");
    EXPECT_EQ(field_of(R"({"cpu_workers_take_gpus": "no"})"), "cpu_workers_take_gpus");
    EXPECT_EQ(field_of(R"({"network": {"b": 0}})"), "network.b") << "b divides: it must be positive";
    EXPECT_EQ(field_of("{"), "line 1, column 2") << "malformed JSON is located";
}

TEST(SimReport, WritesTheMetricsAndTheCsvFiles)
{
    SimulationOptions options;
    const auto r = simulate(ClusterSpec {}, { job(0, "resnet50", 1, 20), job(1, "lstm-ptb", 8, 20, 1) }, options);
    const std::string json = metrics_json(r);
    for (const char* key : { "\"avg_jct\"", "\"median_jct\"", "\"p95_jct\"", "\"makespan\"", "\"gpu_util\"" })
        EXPECT_NE(json.find(key), std::string::npos) << key;
    const auto dir = std::filesystem::temp_directory_path() / "fulcrum-sched-report";
    write_csv_reports(r, dir.string(), options.utilization_bin_s);
    std::ifstream jobs(dir / "jobs.csv"), cdf(dir / "jct_cdf.csv");
    std::string header, line;
    std::getline(jobs, header);
    EXPECT_EQ(header, "id,name,model,gpus,iterations,arrival_s,placed_s,finish_s,jct_s,placement");
    int rows = 0;
    while (std::getline(cdf, line))
        ++rows;
    EXPECT_EQ(rows, 3); // header + 2 jobs
}

// list-capabilities offers the catalogues; each name in them (a numbered family with 1) is
// what the factory builds, and nothing else is.
TEST(SchedulingRegistries, EveryCatalogueNameIsBuiltAndOthersAreRefused)
{
    const ContentionModel m;
    const auto example = [](const std::string& name) {
        return name.ends_with("-K") || name.ends_with("-N") ? name.substr(0, name.size() - 1) + "1" : name;
    };
    for (const CatalogueEntry& p : placement_catalogue())
        EXPECT_EQ(make_placement(example(p.name), 1)->name(), example(p.name)) << p.name;
    for (const CatalogueEntry& c : comm_catalogue()) {
        const auto policy = make_comm_policy(example(c.name), m);
        EXPECT_EQ(policy ? policy->name() : "none", example(c.name));
    }
    EXPECT_THROW(make_scheduled_comm_policy("none", m), std::invalid_argument);
    for (const CatalogueEntry& e : elastic_catalogue()) {
        ASSERT_TRUE(parse_elastic_policy(e.name)) << e.name;
        EXPECT_EQ(policy_name(*parse_elastic_policy(e.name)), e.name);
    }
    EXPECT_FALSE(parse_elastic_policy("eps-1"));
    try {
        make_placement("lwf-0", 1);
        ADD_FAILURE();
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(), "unknown placement 'lwf-0' (expected rand, ff, ls or lwf-K with K >= 1 (e.g. lwf-1))");
    }
}
