// Admission by resources in a real fulcrumd: a job estimated over the memory or thread
// budget is refused with its estimate and the budget, one that fits the budget but not
// beside the running jobs waits with the reason, and jobs reading one data set share a
// single copy of it.

#include "daemon/daemon.h"
#include "daemon/job_journal.h"
#include "daemon/resource_book.h"
#include "daemon/start_watch.h"
#include "daemon_support.h"
#include "scenario/job_footprint.h"
#include "scenario/scenario.h"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace fulcrum;
using namespace fulcrum::protocol;
using testing_support::drain;

namespace {

namespace fs = std::filesystem;

// A paced job on a synthetic set of 20,000 samples: the data set outweighs the model.
std::string paced_job(int seed, int iterations = 4000, const std::string& model = R"({"type": "softmax"})")
{
    return R"({"name": "admitted", "seed": )" + std::to_string(seed) + R"(, "mode": "paced", "pace": 1,
      "data": {"source": "synthetic", "train_size": 20000, "test_size": 1000, "dim": 64, "classes": 4},
      "model": )"
        + model + R"(, "training": {"total_batch": 32, "learning_rate": 0.1, "iterations": )"
        + std::to_string(iterations) + R"(},
      "workers": [{"speed": 1000, "count": 2}]})";
}

scenario::JobFootprint footprint_of(const std::string& json)
{
    return scenario::estimate_footprint(
        scenario::parse_scenario(json, "test"), static_cast<int>(std::thread::hardware_concurrency()));
}

// One sample of fulcrumd's /metrics, by its name and labels as written.
double metric(const daemon::Daemon& d, const std::string& sample)
{
    std::istringstream text(d.metrics_text());
    for (std::string line; std::getline(text, line);)
        if (line.rfind(sample + " ", 0) == 0)
            return std::stod(line.substr(sample.size() + 1));
    ADD_FAILURE() << "no metric " << sample;
    return -1;
}

class AdmissionTest : public ::testing::Test {
protected:
    fs::path dir = fs::temp_directory_path() / ("fulcrum-admission-" + std::to_string(::getpid()));
    void TearDown() override { fs::remove_all(dir); }

    daemon::DaemonOptions options(double memory_bytes, int threads = 2048) const
    {
        daemon::DaemonOptions o;
        o.data_dir = dir;
        o.resources.memory_bytes = memory_bytes;
        o.resources.threads = threads;
        return o;
    }

    Reply submit(daemon::Daemon& d, const std::string& scenario)
    {
        auto op = d.connect(Role::Operator, "op");
        d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
        drain(*op);
        std::vector<ServerMessage> seen;
        return testing_support::request_reply(
            d, *op, seen, R"({"type": "submit-job", "id": "s", "scenario": )" + scenario + "}");
    }

    template <class Done> bool wait_until(Done done)
    {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (!done() && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        return done();
    }
};

} // namespace

TEST_F(AdmissionTest, AModelOverTheBudgetIsRefusedWithItsEstimateBeforeAnythingIsAllocated)
{
    daemon::Daemon d(options(6.0 * (1u << 30)));
    const Reply reply = submit(d, paced_job(1, 10, R"({"type": "mlp", "hidden": [65536, 65536]})"));
    ASSERT_TRUE(reply.error);
    EXPECT_EQ(reply.error->code, "invalid-scenario");
    EXPECT_EQ(reply.error->field, "model.hidden");
    EXPECT_NE(reply.error->message.find("needs an estimated"), std::string::npos) << reply.error->message;
    EXPECT_NE(reply.error->message.find("memory budget of 6.0 GiB (--memory-budget)"), std::string::npos)
        << reply.error->message;
    EXPECT_TRUE(d.jobs().empty());
}

TEST_F(AdmissionTest, AMillionWorkersAreRefusedBeforeTheirSlotsAreMade)
{
    daemon::Daemon d(options(6.0 * (1u << 30)));
    std::string million = paced_job(1, 10);
    million.replace(million.find(R"("count": 2)"), 10, R"("count": 1000000)");
    const Reply reply = submit(d, million);
    ASSERT_TRUE(reply.error);
    EXPECT_EQ(reply.error->field, "workers[0].count");
    std::string many = paced_job(1, 10);
    many.replace(many.find(R"([{"speed": 1000, "count": 2}])"), 29,
        R"([{"speed": 1000, "count": 4000}, {"speed": 500, "count": 100}])");
    const Reply split = submit(d, many);
    ASSERT_TRUE(split.error);
    EXPECT_EQ(split.error->field, "workers[1].count");
    EXPECT_NE(split.error->message.find("more than 4096 worker slots"), std::string::npos) << split.error->message;
}

TEST_F(AdmissionTest, AJobOverTheThreadBudgetIsRefusedWithTheBudgetNamed)
{
    std::string real = paced_job(1, 10);
    real.replace(real.find(R"("mode": "paced", "pace": 1)"), 26, R"("mode": "real")");
    real.replace(real.find(R"("count": 2)"), 10, R"("count": 20)");
    daemon::Daemon d(options(6.0 * (1u << 30), 16));
    const Reply reply = submit(d, real);
    ASSERT_TRUE(reply.error);
    EXPECT_EQ(reply.error->field, "workers");
    EXPECT_NE(reply.error->message.find("needs 22 threads, more than fulcrumd's 16 (--max-threads)"), std::string::npos)
        << reply.error->message;
}

TEST_F(AdmissionTest, AJobThatFitsTheBudgetButNotBesideTheRunningOnesWaitsWithTheReason)
{
    const scenario::JobFootprint one = footprint_of(paced_job(1));
    // Room for one job and its data set, not for a second set.
    daemon::Daemon d(options(one.own_bytes() * 2 + one.data_bytes * 1.5));
    const Reply first = submit(d, paced_job(1));
    ASSERT_FALSE(first.error) << first.error->message;
    const Reply second = submit(d, paced_job(2)); // another seed: another synthetic set
    ASSERT_FALSE(second.error) << second.error->message;
    const auto status = [&](JobId id) {
        for (const JobStatus& s : d.jobs())
            if (s.job == id)
                return s;
        return JobStatus {};
    };
    ASSERT_TRUE(wait_until([&] { return status(*first.job).iteration > 0; }));
    EXPECT_EQ(status(*second.job).state, JobState::Queued);
    EXPECT_NE(status(*second.job).message.find("waiting for memory"), std::string::npos) << status(*second.job).message;
    EXPECT_NEAR(metric(d, R"(fulcrum_admission_memory_bytes{kind="held"})"), one.own_bytes() + one.data_bytes, 1024);
    d.cancel(*first.job, EventActor::person("admin", "test"));
    ASSERT_TRUE(wait_until([&] { return status(*second.job).iteration > 0; })) << status(*second.job).message;
    d.cancel(*second.job, EventActor::person("admin", "test"));
}

TEST_F(AdmissionTest, JobsReadingOneDataSetShareOneCopyOfIt)
{
    const scenario::JobFootprint one = footprint_of(paced_job(1));
    // Two jobs fit only when their data set is counted once.
    daemon::Daemon d(options(one.own_bytes() * 2 + one.data_bytes * 1.5));
    const Reply first = submit(d, paced_job(1));
    const Reply second = submit(d, paced_job(1));
    ASSERT_TRUE(first.job && second.job);
    const auto running = [&] {
        int n = 0;
        for (const JobStatus& s : d.jobs())
            n += s.iteration > 0 ? 1 : 0;
        return n;
    };
    ASSERT_TRUE(wait_until([&] { return running() == 2; }));
    EXPECT_EQ(metric(d, "fulcrum_data_sets_held"), 1);
    EXPECT_NEAR(
        metric(d, R"(fulcrum_admission_memory_bytes{kind="held"})"), 2 * one.own_bytes() + one.data_bytes, 1024);
    d.cancel(*first.job, EventActor::person("admin", "test"));
    d.cancel(*second.job, EventActor::person("admin", "test"));
}

TEST(ByteSizes, AMemoryBudgetReadsAsBytesWithOrWithoutAUnit)
{
    EXPECT_EQ(daemon::parse_byte_size("6G"), 6.0 * (1u << 30));
    EXPECT_EQ(daemon::parse_byte_size("512MiB"), 512.0 * (1u << 20));
    EXPECT_EQ(daemon::parse_byte_size("1.5gb"), 1.5 * (1u << 30));
    EXPECT_EQ(daemon::parse_byte_size("800000"), 800000.0);
    for (const char* bad : { "", "G", "-1G", "6X", "6GG", "nan" })
        EXPECT_THROW(daemon::parse_byte_size(bad), std::invalid_argument) << bad;
    EXPECT_GT(daemon::default_memory_budget(), 0);
}

// A fulcrumd that dies of a fatal signal while a job starts marks the job; the next fulcrumd
// leaves it failed instead of starting it (and dying) again. A start interrupted by a kill
// is retried, up to three starts.
TEST_F(AdmissionTest, AJobWhoseStartCrashedFulcrumdIsLeftFailedNotStartedAgain)
{
    fs::create_directories(dir / "jobs");
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) { // fulcrumd's crash handlers, then an abort in job 1's start
        daemon::StartWatch watch(dir / "jobs");
        daemon::StartWatch::install_crash_handlers();
        watch.starting(1);
        watch.starting(2);
        watch.started(2); // job 2's trainer was built
        std::abort();
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status));
    EXPECT_EQ(WTERMSIG(status), SIGABRT);
    const daemon::StartWatch watch(dir / "jobs");
    EXPECT_TRUE(watch.record(1).crashed);
    EXPECT_EQ(watch.record(1).starts, 1);
    EXPECT_EQ(watch.record(2).starts, 0);

    // Job 1 in the journal, as fulcrumd left it: the next fulcrumd fails it.
    daemon::JobJournal(dir / "jobs").add(1, daemon::JobJournal::Origin::Client, "default", paced_job(1, 10));
    {
        daemon::Daemon d(options(6.0 * (1u << 30)));
        const auto found = d.recover();
        ASSERT_EQ(found.size(), 1u);
        EXPECT_NE(found[0].message.find("crashed (a fatal signal) while starting this job"), std::string::npos)
            << found[0].message;
        ASSERT_EQ(d.jobs().size(), 1u);
        EXPECT_EQ(d.jobs().at(0).state, JobState::Failed);
    }
    daemon::Daemon again(options(6.0 * (1u << 30)));
    EXPECT_TRUE(again.recover().empty()) << "the failed job stays out of the journal";

    // Three starts cut short without a crash (kill -9, the OOM killer): failed too.
    daemon::JobJournal(dir / "jobs").add(5, daemon::JobJournal::Origin::Client, "default", paced_job(1, 10));
    {
        daemon::StartWatch killed(dir / "jobs");
        for (int i = 0; i < 3; ++i)
            killed.starting(5);
    }
    daemon::Daemon third(options(6.0 * (1u << 30)));
    const auto found = third.recover();
    ASSERT_EQ(found.size(), 1u);
    EXPECT_NE(found[0].message.find("stopped 3 times while starting this job"), std::string::npos) << found[0].message;
}
