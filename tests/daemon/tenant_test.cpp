// Issue 47: tenants. Every client message a role may send on a job or on the cluster, from each role of the job's own
// tenant, of another tenant, as an admin and as an operator line of the last release's token
// files (no tenant): allowed, or refused with not-authorized naming the job's tenant. Then
// what each sees: job lists, streams, run stores, replays and /metrics; pooled workers go to
// their own tenant's jobs only; the journal and the run store keep a job's tenant.

#include "access/auth.h"
#include "access/tenancy.h"
#include "common/error.h"
#include "daemon/daemon.h"
#include "daemon/job_journal.h"
#include "daemon/worker_pool.h"
#include "daemon_support.h"
#include "db/run_reader.h"
#include "db/run_recorder.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <unistd.h>

using namespace fulcrum;
using namespace fulcrum::protocol;
using access::TenantReach;
using testing_support::request_reply;
using testing_support::wait_for;

namespace {

// Elastic, so that a resize is a real request; paced at one iteration a wall second per
// 100 barriers so that rows stream without using up the machine.
const char* kJob = R"({"name": "tenant-job", "seed": 2, "mode": "paced", "pace": 1,
  "data": {"source": "synthetic", "train_size": 600, "test_size": 100, "dim": 8, "classes": 3},
  "model": {"type": "mlp", "hidden": [8]},
  "training": {"total_batch": 32, "learning_rate": 0.1, "iterations": 100000, "eval_interval": 50},
  "policy": {"type": "uniform"},
  "elastic": {"min_workers": 1, "max_workers": 3, "initial_workers": 2},
  "workers": [{"speed": 1000, "count": 3}]})";

// A short job on fulcrumd's virtual clock: a workload's.
const char* kVirtualJob = R"({"name": "tenant-workload-job", "seed": 2, "mode": "virtual",
  "data": {"source": "synthetic", "train_size": 600, "test_size": 100, "dim": 8, "classes": 3},
  "model": {"type": "softmax"}, "training": {"total_batch": 32, "iterations": 20, "eval_interval": 10},
  "workers": [{"speed": 1000, "count": 2}]})";

class TenantTest : public ::testing::Test {
protected:
    std::filesystem::path dir
        = std::filesystem::temp_directory_path() / ("fulcrum-tenant-" + std::to_string(::getpid()));
    void SetUp() override { std::filesystem::create_directories(dir); }
    void TearDown() override { std::filesystem::remove_all(dir); }

    daemon::DaemonOptions options() const
    {
        daemon::DaemonOptions o;
        o.data_dir = dir;
        o.cluster.servers = 1;
        o.cluster.gpus_per_server = 16;
        return o;
    }
};

struct Principal {
    std::string label; // "viewer of a", "admin", "operator (no tenant)"
    Role role;
    TenantReach reach;
};

std::vector<Principal> principals()
{
    std::vector<Principal> out;
    for (const Role role : { Role::Viewer, Role::Operator, Role::Worker, Role::Admin })
        for (const std::string tenant : { "a", "b" })
            out.push_back({ std::string(to_string(role)) + " of " + tenant, role, TenantReach::of(role, tenant) });
    out.push_back({ "operator (no tenant)", Role::Operator, TenantReach::of(Role::Operator, std::nullopt) });
    out.push_back({ "viewer (no tenant)", Role::Viewer, TenantReach::of(Role::Viewer, std::nullopt) });
    return out;
}

// What the issue's table allows `p` to do to a job of tenant "a" with a message of this kind.
bool allowed(const Principal& p, const ClientMessage& m)
{
    const bool reaches = p.reach.covers("a");
    const bool command = std::holds_alternative<JobCommand>(m) || std::holds_alternative<ChangeJob>(m)
        || std::holds_alternative<WorkerCommand>(m) || std::holds_alternative<ResizeJob>(m);
    if (std::holds_alternative<JoinJob>(m) || std::holds_alternative<ReportIteration>(m))
        return p.role != Role::Viewer && reaches;
    if (std::holds_alternative<JoinPool>(m))
        return p.role != Role::Viewer; // names no job: a pooled process serves its own tenant
    if (p.role == Role::Worker)
        return false;
    if (std::holds_alternative<Unsubscribe>(m))
        return true;
    if (std::holds_alternative<SubmitWorkload>(m))
        return p.role != Role::Viewer;
    if (std::holds_alternative<SetClusterPolicy>(m))
        return p.role != Role::Viewer && p.reach.all;
    if (std::holds_alternative<SubmitJob>(m))
        return p.role != Role::Viewer;
    if (command)
        return p.role != Role::Viewer && reaches;
    return reaches; // subscribe to the job
}

} // namespace

TEST(TenantReachTest, ALineWithoutATenantKeepsWhatTheLastReleaseGaveIt)
{
    EXPECT_TRUE(TenantReach::of(Role::Operator, std::nullopt).all) << "an old operator token steers every job";
    EXPECT_TRUE(TenantReach::of(Role::Admin, "a").all) << "an admin spans tenants; tenant= says whose its jobs are";
    EXPECT_EQ(TenantReach::of(Role::Admin, "a").tenant, "a");
    const TenantReach viewer = TenantReach::of(Role::Viewer, std::nullopt);
    EXPECT_FALSE(viewer.all);
    EXPECT_EQ(viewer.tenant, "default");
    EXPECT_TRUE(viewer.covers("default"));
    EXPECT_FALSE(viewer.covers("a"));
    const TenantReach confined = TenantReach::of(Role::Operator, "default");
    EXPECT_FALSE(confined.all) << "tenant=default confines an old operator token";
    EXPECT_EQ(confined.describe(), "tenant 'default' only");
    EXPECT_EQ(TenantReach::of(Role::Worker, "b").describe(), "tenant 'b' only");
    EXPECT_EQ(TenantReach::of(Role::Admin, std::nullopt).describe(), "every tenant");
}

TEST_F(TenantTest, EveryMessageOnAJobIsAllowedOrRefusedByRoleAndTenant)
{
    daemon::Daemon d(options());
    auto owner = d.connect(Role::Operator, "fulcrum@127.0.0.1:1", "alice", TenantReach::of(Role::Operator, "a"));
    std::vector<ServerMessage> owner_seen;
    d.receive(*owner, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    const Reply submitted = request_reply(d, *owner, owner_seen, encode(ClientMessage { SubmitJob { "s", kJob } }));
    ASSERT_FALSE(submitted.error) << submitted.error->message;
    const JobId job = *submitted.job;
    EXPECT_EQ(d.jobs().at(0).tenant, "a") << "a job belongs to its submitter's tenant";

    WorkerCommand pin;
    pin.id = "pin";
    pin.job = job;
    pin.worker = 0;
    pin.batch_size = 8;
    ReportIteration report; // a rank's: refused unless the job is an external one, not-authorized beyond reach
    report.id = "report";
    report.job = job;
    const std::vector<ClientMessage> messages = {
        Subscribe { "sub", {}, job, {} }, JobCommand { "pause", JobAction::Pause, job },
        JobCommand { "resume", JobAction::Resume, job }, JobCommand { "freeze", JobAction::Freeze, job },
        JobCommand { "unfreeze", JobAction::Unfreeze, job },
        ChangeJob { "policy", JobSetting::Policy, job, R"({"type": "uniform"})" }, pin,
        ResizeJob { "grow", job, ResizeAction::AddWorker, std::nullopt },
        ResizeJob { "shrink", job, ResizeAction::RemoveWorker, std::nullopt },
        JoinJob { "join", job, std::nullopt, "host" }, SetClusterPolicy { "cluster", "ff", std::nullopt, std::nullopt },
        SubmitJob { "submit", kJob }, SubmitWorkload { "workload", { { kVirtualJob, 0 } } }, Unsubscribe { "unsub" },
        JoinPool { "pool", "host" }, report,
        JobCommand { "cancel", JobAction::Cancel, job }, // last: the job ends with the first allowed one
    };
    int checked = 0;
    for (const ClientMessage& m : messages)
        for (const Principal& p : principals()) {
            auto client = d.connect(p.role, "client@127.0.0.1:2", p.label, p.reach);
            std::vector<ServerMessage> seen;
            d.receive(*client, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
            const Reply reply = request_reply(d, *client, seen, encode(m));
            const std::string what = p.label + " sending " + std::string(type_name(m)) + " " + reply.id;
            const bool refused = reply.error && reply.error->code == "not-authorized";
            EXPECT_EQ(!refused, allowed(p, m)) << what << ": " << (reply.error ? reply.error->message : "ok");
            if (refused && p.role != Role::Worker && p.role != Role::Viewer && !p.reach.covers("a")
                && !std::holds_alternative<SetClusterPolicy>(m)) {
                EXPECT_NE(reply.error->message.find("belongs to tenant 'a'"), std::string::npos)
                    << what << ": " << reply.error->message;
            }
            if (std::holds_alternative<SetClusterPolicy>(m) && refused && p.role == Role::Operator) {
                EXPECT_NE(reply.error->message.find("needs an admin token"), std::string::npos) << what;
            }
            ++checked;
            d.disconnect(*client);
        }
    EXPECT_EQ(checked, static_cast<int>(messages.size() * principals().size()));
    // A tenant's operator submitted into its own tenant, an admin into its own.
    std::map<std::string, int> tenants;
    for (const JobStatus& s : d.jobs())
        ++tenants[s.tenant];
    EXPECT_EQ(tenants["a"], 5) << "the job, and the job and workload's job of a's operator and of the admin whose "
                                  "line says tenant=a";
    EXPECT_EQ(tenants["b"], 4) << "the operator's and the admin's of b";
    EXPECT_EQ(tenants["default"], 2) << "the operator line's without a tenant";
}

TEST_F(TenantTest, EachTenantSeesItsOwnJobsStreamsRunStoresAndMetrics)
{
    daemon::Daemon d(options());
    const auto connect = [&](Role role, const std::optional<std::string>& tenant) {
        auto c = d.connect(role, "client@127.0.0.1:3", std::string(to_string(role)), TenantReach::of(role, tenant));
        d.receive(*c, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
        return c;
    };
    auto op_a = connect(Role::Operator, "a");
    auto op_b = connect(Role::Operator, "b");
    std::vector<ServerMessage> seen_a, seen_b;
    const JobId job_a = *request_reply(d, *op_a, seen_a, encode(ClientMessage { SubmitJob { "s", kJob } })).job;
    const JobId job_b = *request_reply(d, *op_b, seen_b, encode(ClientMessage { SubmitJob { "s", kJob } })).job;

    // The welcome says whose the client is.
    const auto welcome = std::find_if(
        seen_a.begin(), seen_a.end(), [](const ServerMessage& m) { return std::holds_alternative<Welcome>(m); });
    ASSERT_NE(welcome, seen_a.end());
    EXPECT_EQ(std::get<Welcome>(*welcome).tenant, "a");
    EXPECT_FALSE(std::get<Welcome>(*welcome).all_tenants);

    // Job lists.
    const auto listed = [&](serve::Client& c) {
        std::vector<ServerMessage> seen;
        std::vector<JobId> ids;
        for (const JobStatus& s : request_reply(d, c, seen, encode(ClientMessage { ListJobs { "l" } })).jobs)
            ids.push_back(s.job);
        return ids;
    };
    auto viewer_b = connect(Role::Viewer, "b");
    auto admin = connect(Role::Admin, std::nullopt);
    EXPECT_EQ(listed(*viewer_b), std::vector<JobId> { job_b });
    EXPECT_EQ(listed(*op_a), std::vector<JobId> { job_a });
    EXPECT_EQ(listed(*admin), (std::vector<JobId> { job_a, job_b }));

    // Streams: a subscription to everything carries the tenant's own jobs only, its snapshot too.
    std::vector<ServerMessage> viewer_seen, admin_seen;
    EXPECT_FALSE(
        request_reply(d, *viewer_b, viewer_seen, encode(ClientMessage { Subscribe { "all", {}, {}, {} } })).error);
    EXPECT_FALSE(request_reply(d, *admin, admin_seen, encode(ClientMessage { Subscribe { "all", {}, {}, {} } })).error);
    const auto rows_of = [](JobId job) {
        return [job](const ServerMessage& m) {
            const auto* rows = std::get_if<IterationRows>(&m);
            return rows && rows->job == job;
        };
    };
    ASSERT_TRUE(wait_for(*admin, admin_seen, rows_of(job_a))) << "the admin sees tenant a's rows";
    ASSERT_TRUE(wait_for(*viewer_b, viewer_seen, rows_of(job_b)));
    ASSERT_TRUE(wait_for(*admin, admin_seen, rows_of(job_b)));
    // By now job a has streamed for as long as job b has to the viewer: none of it reached b.
    for (const auto& m : testing_support::drain(*viewer_b))
        viewer_seen.push_back(m);
    const auto job_of = [](const ServerMessage& m) -> std::optional<JobId> {
        if (const auto* r = std::get_if<IterationRows>(&m))
            return r->job;
        if (const auto* s = std::get_if<JobUpdate>(&m))
            return s->status.job;
        if (const auto* w = std::get_if<WorkerUpdate>(&m))
            return w->job;
        if (const auto* e = std::get_if<Evaluation>(&m))
            return e->evaluation.job;
        if (const auto* e = std::get_if<Event>(&m))
            return e->event.job;
        return std::nullopt;
    };
    int of_b = 0;
    for (const ServerMessage& m : viewer_seen) {
        EXPECT_NE(job_of(m), std::optional<JobId>(job_a)) << "tenant b's viewer got a frame of tenant a's job";
        of_b += job_of(m) == std::optional<JobId>(job_b);
    }
    EXPECT_GT(of_b, 0);

    // Run stores: each job's store records its tenant; list-runs and open-replay follow it.
    const std::string store_a = "job-" + std::to_string(job_a) + ".db";
    const std::string store_b = "job-" + std::to_string(job_b) + ".db";
    const auto stores = [&](serve::Client& c) {
        std::vector<ServerMessage> seen;
        std::map<std::string, std::string> out;
        for (const RunListing& r : request_reply(d, c, seen, encode(ClientMessage { ListRuns { "r" } })).runs)
            out[r.database] = r.tenant;
        return out;
    };
    const auto admin_stores = stores(*admin);
    EXPECT_EQ(admin_stores.at(store_a), "a");
    EXPECT_EQ(admin_stores.at(store_b), "b");
    const auto b_stores = stores(*viewer_b);
    EXPECT_EQ(b_stores.count(store_a), 0u);
    EXPECT_EQ(b_stores.count(store_b), 1u);
    std::vector<ServerMessage> replay_seen;
    const Reply refused_replay = request_reply(
        d, *viewer_b, replay_seen, encode(ClientMessage { OpenReplay { "o", store_a, 1, 0, std::nullopt, true } }));
    ASSERT_TRUE(refused_replay.error);
    EXPECT_EQ(refused_replay.error->code, "not-authorized");
    EXPECT_NE(refused_replay.error->message.find("belongs to tenant 'a'"), std::string::npos)
        << refused_replay.error->message;
    // Nothing of the run is said first: not whether it has an iteration.
    const Reply refused_seek = request_reply(
        d, *viewer_b, replay_seen, encode(ClientMessage { OpenReplay { "o3", store_a, 1, 0, 999999, true } }));
    ASSERT_TRUE(refused_seek.error);
    EXPECT_EQ(refused_seek.error->code, "not-authorized");
    // A store nobody can read is no tenant's: listed to the admin only.
    std::ofstream(dir / "runs" / "notes.db") << "not a run store";
    EXPECT_EQ(stores(*admin).at("notes.db"), "");
    EXPECT_EQ(stores(*viewer_b).count("notes.db"), 0u);
    const Reply own_replay = request_reply(
        d, *viewer_b, replay_seen, encode(ClientMessage { OpenReplay { "o2", store_b, 1, 0, std::nullopt, true } }));
    EXPECT_FALSE(own_replay.error) << own_replay.error->message;

    // /metrics: every job series names its tenant; a token sees its tenants' jobs only.
    const std::string all = d.metrics_text();
    const std::string label_a = "job_id=\"" + std::to_string(job_a) + "\",tenant=\"a\"";
    const std::string label_b = "job_id=\"" + std::to_string(job_b) + "\",tenant=\"b\"";
    EXPECT_NE(all.find(label_a), std::string::npos);
    EXPECT_NE(all.find(label_b), std::string::npos);
    const std::string for_b = d.metrics_text(TenantReach::of(Role::Viewer, "b"));
    EXPECT_EQ(for_b.find("job_id=\"" + std::to_string(job_a) + "\""), std::string::npos);
    EXPECT_NE(for_b.find(label_b), std::string::npos);
    EXPECT_NE(for_b.find("fulcrum_daemon_clients"), std::string::npos) << "the daemon's own series stay";
    EXPECT_NE(d.metrics_text(TenantReach::of(Role::Admin, "b")).find(label_a), std::string::npos);
}

TEST(TenantPool, APooledProcessIsGivenOnlyToJobsOfATenantItsTokenReaches)
{
    daemon::WorkerPool pool;
    const auto pooled = [](std::uint64_t id, const std::optional<std::string>& tenant) {
        auto c = std::make_shared<serve::Client>(id, Role::Worker, "w" + std::to_string(id), 16);
        c->set_reach(TenantReach::of(Role::Worker, tenant));
        return c;
    };
    auto of_a = pooled(1, "a");
    auto of_b = pooled(2, "b");
    auto any = std::make_shared<serve::Client>(3, Role::Operator, "op", 16); // an operator line of no tenant
    any->set_reach(TenantReach::of(Role::Operator, std::nullopt));
    pool.join(of_a, "host-a");
    pool.join(of_b, "host-b");
    pool.join(any, "host-any");
    EXPECT_EQ(pool.idle(), 3);
    EXPECT_EQ(pool.idle_for("b"), 2);
    EXPECT_EQ(pool.idle_for("c"), 1);
    const auto first = pool.assign(7, 0, "b");
    ASSERT_TRUE(first);
    EXPECT_EQ(first->client->id(), 2u) << "a's process idled longer, and is not b's to use";
    const auto second = pool.assign(7, 1, "b");
    ASSERT_TRUE(second);
    EXPECT_EQ(second->client->id(), 3u);
    EXPECT_FALSE(pool.assign(7, 2, "b")) << "only a's process idles now";
    EXPECT_EQ(pool.idle_for("a"), 1);
}

TEST_F(TenantTest, TheJournalAndTheRunStoreKeepAJobsTenant)
{
    daemon::JobJournal journal(dir / "jobs");
    journal.add(1, daemon::JobJournal::Origin::Client, "research", "{}");
    journal.add(2, daemon::JobJournal::Origin::Local, "default", "{}");
    std::ofstream(dir / "jobs" / "job-3.json") << "client tenant=a/b\n{}"; // not a tenant's name
    std::vector<std::string> problems;
    const auto entries = journal.entries(&problems);
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[0].tenant, "research");
    EXPECT_EQ(entries[1].tenant, "default");
    EXPECT_EQ(entries[1].origin, daemon::JobJournal::Origin::Local);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].find("job-3.json"), std::string::npos) << problems[0];
    std::ifstream two(dir / "jobs" / "job-2.json");
    std::string first_line;
    std::getline(two, first_line);
    EXPECT_EQ(first_line, "local") << "the default tenant's entry is as the last release wrote it";

    const auto store = dir / "tenant.db";
    {
        db::RunRecorder recorder(store);
        db::RunInfo a;
        a.name = "a";
        a.mode = "virtual";
        a.tenant = "research";
        recorder.end_run(recorder.begin_run(a), "finished");
        db::RunInfo plain;
        plain.name = "plain";
        plain.mode = "virtual";
        recorder.end_run(recorder.begin_run(plain), "finished");
    }
    db::RunReader reader(store);
    const auto runs = reader.runs();
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[0].tenant, "research");
    EXPECT_EQ(runs[1].tenant, "") << "the default tenant is recorded as none, as an older store reads";
    EXPECT_EQ(access::recorded_tenant(runs[1].tenant), "default");
}

TEST_F(TenantTest, ARecoveredJobKeepsItsTenant)
{
    daemon::JobJournal(dir / "jobs").add(4, daemon::JobJournal::Origin::Client, "research", kJob);
    daemon::Daemon d(options());
    const auto recovered = d.recover();
    ASSERT_EQ(recovered.size(), 1u);
    const auto jobs = d.jobs();
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].job, 4);
    EXPECT_EQ(jobs[0].tenant, "research");
    auto viewer = d.connect(Role::Viewer, "v", "", TenantReach::of(Role::Viewer, std::nullopt));
    std::vector<ServerMessage> seen;
    d.receive(*viewer, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    const Reply subscribe = request_reply(d, *viewer, seen, encode(ClientMessage { Subscribe { "s", {}, 4, {} } }));
    ASSERT_TRUE(subscribe.error);
    EXPECT_EQ(subscribe.error->code, "not-authorized");
    EXPECT_EQ(subscribe.error->message,
        "job 4 belongs to tenant 'research'; this viewer token reaches tenant 'default' only");
}

TEST_F(TenantTest, TheTokenFileGivesEachTokenItsTenantsAndNamesTheUnconfinedOperators)
{
    const auto path = dir / "tokens";
    std::ofstream(path) << "operator bob aaaaaaaaaaaaaaaaaaaa\nviewer carol bbbbbbbbbbbbbbbbbbbb\n";
    const access::TokenStore old = access::TokenStore::load_or_create(path);
    EXPECT_TRUE(old.unconfined_operators().empty()) << "a file of the last release: nothing to warn of yet";
    EXPECT_TRUE(old.grant_of("aaaaaaaaaaaaaaaaaaaa")->reach.all);
    EXPECT_EQ(old.grant_of("bbbbbbbbbbbbbbbbbbbb")->reach, TenantReach::of(Role::Viewer, std::nullopt));

    const std::string alice = access::TokenStore::add_token(path, Role::Operator, "alice", "ml");
    const access::TokenStore now = access::TokenStore::load_or_create(path);
    EXPECT_EQ(now.unconfined_operators(), std::vector<std::string> { "bob" });
    const auto grant = now.grant_of(alice);
    ASSERT_TRUE(grant);
    EXPECT_EQ(grant->name, "alice");
    EXPECT_EQ(grant->reach.tenant, "ml");
    EXPECT_FALSE(grant->reach.all);
    EXPECT_THROW(access::TokenStore::add_token(path, Role::Viewer, "dave", "m/l"), InputError);
    try {
        access::TokenStore::add_token(path, Role::Operator, "erin");
        ADD_FAILURE() << "an operator reaching every tenant is added to a file of tenants by mistake";
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "tenant");
    }
    EXPECT_NO_THROW(access::TokenStore::add_token(path, Role::Admin, "erin")) << "saying so is allowed";
}

TEST_F(TenantTest, TheClusterStreamSaysWhereAPooledProcessRunsOnlyToItsTenant)
{
    daemon::Daemon d(options());
    auto worker = d.connect(Role::Worker, "fulcrum-worker@10.0.0.7:4000", "rack-7", TenantReach::of(Role::Worker, "a"));
    std::vector<ServerMessage> worker_seen;
    d.receive(*worker, encode(ClientMessage { Hello { kProtocolVersion, "w" } }));
    ASSERT_FALSE(request_reply(d, *worker, worker_seen, encode(ClientMessage { JoinPool { "p", "node7" } })).error);
    const auto pool_seen_by = [&](const std::optional<std::string>& tenant, Role role) {
        auto c = d.connect(role, "client@127.0.0.1:5", "", TenantReach::of(role, tenant));
        std::vector<ServerMessage> seen;
        d.receive(*c, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
        request_reply(d, *c, seen, encode(ClientMessage { Subscribe { "s", { Stream::Cluster }, {}, {} } }));
        EXPECT_TRUE(wait_for(*c, seen, [](const ServerMessage& m) { return std::holds_alternative<SnapshotEnd>(m); }));
        for (const ServerMessage& m : seen)
            if (const auto* u = std::get_if<ClusterUpdate>(&m); u && !u->cluster.pool.empty())
                return u->cluster.pool.front();
        ADD_FAILURE() << "no pool in the cluster's snapshot";
        return PooledWorker {};
    };
    const PooledWorker to_a = pool_seen_by("a", Role::Viewer);
    EXPECT_EQ(to_a.host, "node7");
    EXPECT_EQ(to_a.tenant, "a");
    const PooledWorker to_b = pool_seen_by("b", Role::Viewer);
    EXPECT_EQ(to_b.host, "") << "where tenant a's process runs is not tenant b's to know";
    EXPECT_EQ(to_b.tenant, "a");
    EXPECT_EQ(pool_seen_by(std::nullopt, Role::Admin).host, "node7");

    // The stream after the snapshot: a second process joins, and b's viewer is told of it
    // without where it runs.
    auto viewer_b = d.connect(Role::Viewer, "client@127.0.0.1:6", "", TenantReach::of(Role::Viewer, "b"));
    std::vector<ServerMessage> b_seen;
    d.receive(*viewer_b, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    request_reply(d, *viewer_b, b_seen, encode(ClientMessage { Subscribe { "s", { Stream::Cluster }, {}, {} } }));
    ASSERT_TRUE(
        wait_for(*viewer_b, b_seen, [](const ServerMessage& m) { return std::holds_alternative<SnapshotEnd>(m); }));
    auto second = d.connect(Role::Worker, "fulcrum-worker@10.0.0.8:4000", "rack-8", TenantReach::of(Role::Worker, "a"));
    d.receive(*second, encode(ClientMessage { Hello { kProtocolVersion, "w" } }));
    std::vector<ServerMessage> second_seen;
    ASSERT_FALSE(request_reply(d, *second, second_seen, encode(ClientMessage { JoinPool { "p", "node8" } })).error);
    ASSERT_TRUE(wait_for(*viewer_b, b_seen, [](const ServerMessage& m) {
        const auto* u = std::get_if<ClusterUpdate>(&m);
        return u && u->cluster.pool.size() == 2;
    }));
    for (const PooledWorker& p : std::get<ClusterUpdate>(b_seen.back()).cluster.pool)
        EXPECT_EQ(p.host, "");
}

// An event a person's command caused names the token's tenant with its role; a token of the
// default tenant writes the actor as before tenants existed.
TEST_F(TenantTest, AnEventNamesTheTenantOfTheTokenWhoseCommandCausedIt)
{
    daemon::Daemon d(options());
    auto alice = d.connect(Role::Operator, "fulcrum@127.0.0.1:1", "alice", TenantReach::of(Role::Operator, "a"));
    auto root = d.connect(Role::Admin, "fulcrumctl@127.0.0.1:2", "root", TenantReach::of(Role::Admin, std::nullopt));
    std::vector<ServerMessage> seen, root_seen;
    d.receive(*alice, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    d.receive(*root, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    const Reply submitted = request_reply(d, *alice, seen, encode(ClientMessage { SubmitJob { "s", kJob } }));
    ASSERT_FALSE(submitted.error);
    const JobId job = *submitted.job;
    ASSERT_FALSE(request_reply(d, *alice, seen, encode(ClientMessage { Subscribe { "sub", {}, job, {} } })).error);
    const auto event_of = [&](const std::string& kind) {
        std::optional<EventRecord> found;
        const auto match = [&](const ServerMessage& m) {
            if (const auto* e = std::get_if<Event>(&m); e && e->event.kind == kind)
                found = e->event;
            return found.has_value();
        };
        if (std::none_of(seen.begin(), seen.end(), match))
            wait_for(*alice, seen, match);
        return found;
    };
    ASSERT_FALSE(
        request_reply(d, *alice, seen, encode(ClientMessage { JobCommand { "p", JobAction::Pause, job } })).error);
    const std::optional<EventRecord> paused = event_of("job-paused");
    ASSERT_TRUE(paused);
    EXPECT_EQ(paused->actor.rfind("operator@a:alice (fulcrum@127.0.0.1:1) at ", 0), 0u) << paused->actor;
    ASSERT_FALSE(
        request_reply(d, *root, root_seen, encode(ClientMessage { JobCommand { "r", JobAction::Resume, job } })).error);
    const std::optional<EventRecord> resumed = event_of("job-resumed");
    ASSERT_TRUE(resumed);
    EXPECT_EQ(resumed->actor.rfind("admin:root (fulcrumctl@127.0.0.1:2) at ", 0), 0u) << resumed->actor;
    d.stop_all();
}
