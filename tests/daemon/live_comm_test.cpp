#include "daemon/daemon.h"
#include "daemon_support.h"
#include "db/run_reader.h"

#include <chrono>
#include <filesystem>
#include <gtest/gtest.h>
#include <thread>
#include <unistd.h>

using namespace fulcrum;
using namespace fulcrum::protocol;
using testing_support::request_reply;

namespace {

// A virtual-mode job of one worker whose pushes and pulls (100 MB at 10 Gbps: 0.16 s) take
// longer than its compute (48 samples at 480 a second: 0.1 s), so that two such jobs on one
// server's link meet at every iteration.
// `sync`: the job's sync section (bsp by default); `mode`: its mode (and pace).
std::string link_bound_job(
    const std::string& name, const std::string& sync = "", const std::string& mode = R"("mode": "virtual")")
{
    return R"({"name": ")" + name + R"(", )" + mode + R"(, "seed": 5, )" + sync + R"(
      "data": {"source": "synthetic", "train_size": 600, "test_size": 100, "dim": 8, "classes": 3},
      "model": {"type": "softmax"}, "policy": {"type": "uniform"},
      "training": {"total_batch": 48, "iterations": 200, "eval_interval": 100000, "comm_model_mb": 100},
      "workers": [{"speed": 480, "noise": {"sigma": 0}}]})";
}

// Both GPUs of the one server, until cancelled.
const char* kBlocker = R"({"name": "blocker", "mode": "paced", "pace": 2,
      "data": {"source": "synthetic", "train_size": 600, "test_size": 100, "dim": 8, "classes": 3},
      "model": {"type": "softmax"}, "training": {"total_batch": 48, "iterations": 1000000, "eval_interval": 1000},
      "workers": [{"speed": 3000, "count": 2}]})";

JobStatus status_of(const daemon::Daemon& d, JobId job)
{
    for (const JobStatus& s : d.jobs())
        if (s.job == job)
            return s;
    return {};
}

} // namespace

class LiveCommTest : public ::testing::Test {
protected:
    std::filesystem::path dir
        = std::filesystem::temp_directory_path() / ("fulcrum-live-comm-" + std::to_string(::getpid()));
    void SetUp() override { std::filesystem::create_directories(dir); }
    void TearDown() override { std::filesystem::remove_all(dir); }

    struct Ran {
        JobStatus status;
        std::vector<IterationRecord> rows;
    };
    // Two jobs that took turns on one link (`turns`, 200 transfers each): every transfer took
    // `c`, its time alone, plus its wait, never stretched, and they met at most transfers;
    // each ended sooner than the same job contending.
    static void expect_turns_sooner_than_contention(
        const std::vector<Ran>& turns, const std::vector<Ran>& contended, double c)
    {
        std::int64_t held = 0;
        for (std::size_t j = 0; j < 2; ++j) {
            const Ran& r = turns[j];
            ASSERT_EQ(r.rows.size(), 200u);
            ASSERT_TRUE(r.status.link) << "a scheduled job's status counts its transfers";
            EXPECT_EQ(r.status.link->transfers, 200);
            held += r.status.link->held;
            double waited = 0;
            for (const IterationRecord& row : r.rows) {
                EXPECT_GE(row.comm_s, c - 1e-12);
                waited += row.comm_s - c;
            }
            EXPECT_NEAR(waited, r.status.link->wait_s, 1e-6) << "no transfer was stretched: only waits";
            EXPECT_LT(r.status.time_s, contended[j].status.time_s)
                << "job " << j << ": " << r.status.time_s << " s taking turns, " << contended[j].status.time_s
                << " s contending";
        }
        EXPECT_GT(held, 100) << "they meet at most transfers";
    }

    // Two link-bound jobs started together on the two GPUs of one server under `comm`.
    std::vector<Ran> two_jobs_on_one_link(
        const std::string& comm, const std::string& sync = "", const std::string& mode = R"("mode": "virtual")")
    {
        daemon::DaemonOptions o;
        o.data_dir
            = dir / (comm + (sync.empty() ? "" : "-async") + (mode.find("paced") != std::string::npos ? "-paced" : ""));
        o.cluster.servers = 1;
        o.cluster.gpus_per_server = 2;
        o.placement = "ff";
        o.comm = comm;
        std::vector<Ran> out;
        daemon::Daemon d(o);
        auto op = d.connect(Role::Operator, "op");
        d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
        // Queued behind a job holding both GPUs, the two start in one placement pass.
        const JobId blocker = d.submit(kBlocker, "blocker");
        const JobId a = d.submit(link_bound_job("a", sync, mode), "a");
        const JobId b = d.submit(link_bound_job("b", sync, mode), "b");
        EXPECT_EQ(status_of(d, a).state, JobState::Queued);
        std::vector<ServerMessage> seen;
        EXPECT_FALSE(
            request_reply(d, *op, seen, encode(ClientMessage { JobCommand { "c", JobAction::Cancel, blocker } }))
                .error);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
        while ((status_of(d, a).state != JobState::Finished || status_of(d, b).state != JobState::Finished)
            && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        for (const JobId job : { a, b }) {
            Ran ran { status_of(d, job), {} };
            EXPECT_EQ(ran.status.state, JobState::Finished) << comm << ": job " << job << " " << ran.status.message;
            db::RunReader reader(o.data_dir / "runs" / ("job-" + std::to_string(job) + ".db"));
            ran.rows = reader.iterations(reader.runs().at(0).id, job); // fulcrumd's id in its store too
            out.push_back(std::move(ran));
        }
        d.stop_all();
        return out;
    }
};

// srsf-1 live: the two jobs' transfers take turns on the link, so none is ever stretched by
// contention; a held one waits, and its wait is in its rows' comm_s and its status. Without
// a scheduler (none) both stretch by eq. 5 at every iteration: srsf-1 ends both jobs sooner,
// the scheduling paper's point about contention.
TEST_F(LiveCommTest, Srsf1TakesTurnsOnALinkAndEndsLinkBoundJobsSoonerThanContention)
{
    const std::vector<Ran> contended = two_jobs_on_one_link("none");
    const std::vector<Ran> turns = two_jobs_on_one_link("srsf-1");
    ASSERT_EQ(contended.size(), 2u);
    ASSERT_EQ(turns.size(), 2u);
    // Alone on the link a transfer takes c (the one that went first did); every scheduled one
    // took c plus its wait.
    double c = turns[0].rows.at(0).comm_s;
    for (const Ran& r : turns)
        for (const IterationRecord& row : r.rows)
            c = std::min(c, row.comm_s);
    EXPECT_NEAR(c, 2 * (0.0005 + 8 * 100e6 / 10e9), 1e-9) << "100 MB each way at 10 Gbps";
    expect_turns_sooner_than_contention(turns, contended, c);
    for (std::size_t j = 0; j < 2; ++j) {
        ASSERT_TRUE(turns[j].status.link);
        EXPECT_GT(turns[j].status.link->held, 50) << "job " << j << " was held at many of its transfers";
        EXPECT_FALSE(contended[j].status.link) << "no scheduler decided for it";
    }
}

// The same for asp workers: each batch's pull and push are one transfer on the worker's
// server link, asked for when the batch starts. Under srsf-1 the two jobs' transfers take
// turns and are never stretched; without a scheduler they contend by eq. 5, and end later.
TEST_F(LiveCommTest, AnAspWorkersPullAndPushAreScheduledLikeABarriersTransfer)
{
    const std::string asp = R"("sync": {"type": "asp"},)";
    const std::vector<Ran> contended = two_jobs_on_one_link("none", asp);
    const std::vector<Ran> turns = two_jobs_on_one_link("srsf-1", asp);
    ASSERT_EQ(contended.size(), 2u);
    ASSERT_EQ(turns.size(), 2u);
    const double c = 2 * (0.0005 + 8 * 100e6 / 10e9); // 100 MB each way at 10 Gbps, alone
    for (std::size_t j = 0; j < 2; ++j) {
        EXPECT_FALSE(contended[j].status.link) << "no scheduler decided for it";
        const auto stretched = std::count_if(contended[j].rows.begin(), contended[j].rows.end(),
            [&](const IterationRecord& row) { return row.comm_s > c + 1e-9; });
        EXPECT_GE(stretched, 199) << "contending, every transfer is stretched by eq. 5 but the first (its batch "
                                     "starts before the job's first safe point, where it learns its link's load)";
    }
    expect_turns_sooner_than_contention(turns, contended, c);
}

// Paced jobs' transfers are decided in wall time, apart from the virtual ones': at a pace of
// 50 run seconds per wall second, two link-bound paced jobs under srsf-1 still never share
// the link (every transfer takes its time alone plus its wait, on the job's clock), and they
// are held where they meet. How often they meet follows the machine's timing, so only that
// they did is checked; without a scheduler their transfers stretch by eq. 5.
TEST_F(LiveCommTest, PacedJobsTransfersAreScheduledInWallTime)
{
    const std::string paced = R"("mode": "paced", "pace": 50)";
    const std::vector<Ran> contended = two_jobs_on_one_link("none", "", paced);
    const std::vector<Ran> turns = two_jobs_on_one_link("srsf-1", "", paced);
    ASSERT_EQ(contended.size(), 2u);
    ASSERT_EQ(turns.size(), 2u);
    const double c = 2 * (0.0005 + 8 * 100e6 / 10e9); // 100 MB each way at 10 Gbps, alone
    std::int64_t held = 0;
    for (std::size_t j = 0; j < 2; ++j) {
        const Ran& r = turns[j];
        ASSERT_EQ(r.rows.size(), 200u);
        ASSERT_TRUE(r.status.link) << "a scheduled paced job's status counts its transfers";
        EXPECT_EQ(r.status.link->transfers, 200);
        held += r.status.link->held;
        double waited = 0;
        for (const IterationRecord& row : r.rows) {
            EXPECT_GE(row.comm_s, c - 1e-12);
            waited += row.comm_s - c;
        }
        EXPECT_NEAR(waited, r.status.link->wait_s, 1e-6) << "no transfer was stretched: only waits";
        EXPECT_FALSE(contended[j].status.link) << "no scheduler decided for it";
        const auto stretched = std::count_if(contended[j].rows.begin(), contended[j].rows.end(),
            [&](const IterationRecord& row) { return row.comm_s > c + 1e-9; });
        EXPECT_GT(stretched, 150) << "contending, they stretch while both run";
    }
    EXPECT_GT(held, 0) << "two jobs started together meet on the link";
}

// set-cluster-policy {comm} changes the scheduler from the jobs' next transfer on, is
// recorded in running jobs' stores, and a scheduler fulcrumd lacks is refused with the field.
TEST_F(LiveCommTest, TheCommunicationPolicyChangesAtRunTimeAndABadOneIsRefusedWithItsField)
{
    daemon::DaemonOptions o;
    o.data_dir = dir / "switch";
    daemon::Daemon d(o);
    auto op = d.connect(Role::Operator, "op");
    d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    std::vector<ServerMessage> seen;
    const auto set = [&](const std::string& comm) {
        return request_reply(
            d, *op, seen, encode(ClientMessage { SetClusterPolicy { "p", std::nullopt, std::nullopt, comm } }));
    };
    EXPECT_EQ(d.cluster().comm, "none");
    const Reply bad = set("srsf-0");
    ASSERT_TRUE(bad.error);
    EXPECT_EQ(bad.error->code, "illegal-value");
    EXPECT_EQ(bad.error->field, "comm");
    EXPECT_NE(bad.error->message.find("srsf-N with N >= 1"), std::string::npos) << bad.error->message;
    EXPECT_EQ(d.cluster().comm, "none") << "nothing changed";
    EXPECT_FALSE(set("ada-srsf").error);
    EXPECT_EQ(d.cluster().comm, "ada-srsf");
    const auto viewer = d.connect(Role::Viewer, "v");
    d.receive(*viewer, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    std::vector<ServerMessage> viewer_seen;
    const Reply refused = request_reply(d, *viewer, viewer_seen,
        encode(ClientMessage { SetClusterPolicy { "p", std::nullopt, std::nullopt, std::string("none") } }));
    ASSERT_TRUE(refused.error) << "a viewer may not change the cluster's policies";
    EXPECT_EQ(d.cluster().comm, "ada-srsf");
    d.stop_all();
}
