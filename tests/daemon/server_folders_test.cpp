// Paths a client sends stay inside fulcrumd's folders: refused at submission with
// illegal-value and the field, before any file is opened; clients see names, never server
// paths; job ids (and their run stores) are never reused by a restarted daemon.

#include "archive/server_folders.h"
#include "daemon/daemon.h"
#include "daemon_support.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <optional>
#include <thread>
#include <unistd.h>

using namespace fulcrum;
using namespace fulcrum::protocol;
using testing_support::drain;
using testing_support::reply_to;
using testing_support::request_reply;
using testing_support::wait_for;

namespace {

namespace fs = std::filesystem;

std::string scenario_with(const std::string& data, const std::string& policy)
{
    return R"({"name": "paths", "seed": 3, "mode": "virtual", "data": )" + data + R"(,
      "model": {"type": "softmax"}, "training": {"total_batch": 32, "learning_rate": 0.1, "iterations": 20},
      "policy": )"
        + policy + R"(, "workers": [{"speed": 1000, "count": 2}]})";
}

const std::string kSynthetic = R"({"source": "synthetic", "train_size": 200, "test_size": 50, "dim": 8, "classes": 3})";
const std::string kUniform = R"({"type": "uniform"})";

std::string narx_from(const std::string& file)
{
    return R"({"type": "lbbsp-cpu", "predictor": {"type": "narx", "warm_start": "file", "warm_start_file": ")" + file
        + R"("}})";
}

class ServerFoldersTest : public ::testing::Test {
protected:
    fs::path dir = fs::temp_directory_path() / ("fulcrum-folders-" + std::to_string(::getpid()));
    fs::path outside = fs::temp_directory_path() / ("fulcrum-outside-" + std::to_string(::getpid()));
    void SetUp() override
    {
        fs::create_directories(dir);
        fs::create_directories(outside);
        std::ofstream(outside / "secret.narx") << "not a model\n";
    }
    void TearDown() override
    {
        fs::remove_all(dir);
        fs::remove_all(outside);
    }

    daemon::DaemonOptions options() const
    {
        daemon::DaemonOptions o;
        o.data_dir = dir;
        return o;
    }

    // An operator that said hello and follows every stream.
    std::shared_ptr<serve::Client> operator_of(daemon::Daemon& d)
    {
        auto op = d.connect(Role::Operator, "op");
        d.receive(*op, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
        d.receive(*op, R"({"type": "subscribe", "id": "all"})");
        drain(*op);
        return op;
    }

    // What the operator's client received while its submissions waited for their replies.
    std::vector<ServerMessage> drained;

    Reply submit(daemon::Daemon& d, serve::Client& op, const std::string& scenario)
    {
        return testing_support::request_reply(
            d, op, drained, R"({"type": "submit-job", "id": "s", "scenario": )" + scenario + "}");
    }
};

} // namespace

TEST_F(ServerFoldersTest, NamesResolveInsideTheirFolderAndNothingLeavesIt)
{
    const archive::ServerFolders folders(dir, { { dir / "datasets" }, {}, {} });
    std::ofstream(dir / "models" / "w.narx") << "x";
    fs::create_directories(dir / "datasets" / "fmnist");
    fs::create_symlink(outside / "secret.narx", dir / "models" / "link.narx");
    fs::create_directory_symlink(dir / "datasets" / "fmnist", dir / "datasets" / "alias");

    EXPECT_EQ(folders.resolve(FolderKind::Models, "w.narx", "s", "f"), fs::canonical(dir / "models" / "w.narx"));
    // A link that stays inside its folder is followed.
    EXPECT_EQ(folders.resolve(FolderKind::Datasets, "alias", "s", "f"), fs::canonical(dir / "datasets" / "fmnist"));

    const auto refusal = [&](FolderKind kind, const std::string& name) -> std::string {
        try {
            folders.resolve(kind, name, "submit-job", "policy.predictor.warm_start_file");
        } catch (const OutsidePath& e) {
            EXPECT_EQ(e.field(), "policy.predictor.warm_start_file");
            return e.reason();
        }
        return "accepted";
    };
    EXPECT_NE(refusal(FolderKind::Models, "/etc/passwd").find("absolute path"), std::string::npos);
    EXPECT_NE(refusal(FolderKind::Models, "../runs/x.db").find("'..'"), std::string::npos);
    EXPECT_NE(refusal(FolderKind::Models, "a/../../x").find("'..'"), std::string::npos);
    EXPECT_NE(refusal(FolderKind::Models, "link.narx").find("leads out"), std::string::npos);
    EXPECT_NE(refusal(FolderKind::Models, "missing.narx").find("there is no 'missing.narx'"), std::string::npos);
    EXPECT_NE(refusal(FolderKind::Models, "").find("empty"), std::string::npos);
    // No reason names a server path.
    for (const char* name : { "/etc/passwd", "link.narx", "missing.narx" })
        EXPECT_EQ(refusal(FolderKind::Models, name).find(dir.string()), std::string::npos) << name;

    const std::string inside = fs::canonical(dir / "models").string() + "/w.narx: not a NARX model";
    EXPECT_EQ(folders.for_clients(inside), "models/w.narx: not a NARX model");
}

TEST_F(ServerFoldersTest, ASubmittedScenarioThatNamesAFileOutsideIsRefusedWithItsField)
{
    daemon::Daemon d(options());
    auto op = operator_of(d);
    const struct {
        std::string scenario, field;
    } cases[] = {
        { scenario_with(kSynthetic, narx_from("/etc/passwd")), "policy.predictor.warm_start_file" },
        { scenario_with(kSynthetic, narx_from("../../etc/passwd")), "policy.predictor.warm_start_file" },
        { scenario_with(R"({"source": "fashion-mnist", "path": "/etc"})", kUniform), "data.path" },
        { scenario_with(R"({"source": "fashion-mnist", "path": "../runs"})", kUniform), "data.path" },
    };
    for (const auto& c : cases) {
        const Reply reply = submit(d, *op, c.scenario);
        ASSERT_TRUE(reply.error) << c.scenario;
        EXPECT_EQ(reply.error->code, "illegal-value");
        EXPECT_EQ(reply.error->field, c.field);
    }
    // A link planted in the models folder that leads out is refused the same way: whether
    // its target exists is not told.
    fs::create_symlink(outside / "secret.narx", dir / "models" / "planted.narx");
    fs::create_symlink(outside / "nothing.narx", dir / "models" / "dangling.narx");
    const Reply planted = submit(d, *op, scenario_with(kSynthetic, narx_from("planted.narx")));
    ASSERT_TRUE(planted.error);
    EXPECT_EQ(planted.error->code, "illegal-value");
    EXPECT_EQ(planted.error->field, "policy.predictor.warm_start_file");
    const Reply dangling = submit(d, *op, scenario_with(kSynthetic, narx_from("dangling.narx")));
    ASSERT_TRUE(dangling.error);
    EXPECT_EQ(dangling.error->code, "illegal-value");
    EXPECT_TRUE(d.jobs().empty()); // nothing was queued
}

TEST_F(ServerFoldersTest, AFileInsideIsUsedAndClientsSeeOnlyItsName)
{
    daemon::Daemon d(options());
    auto op = operator_of(d);
    std::ofstream(dir / "models" / "bad.narx") << "not a model\n";
    const Reply reply = submit(d, *op, scenario_with(kSynthetic, narx_from("bad.narx")));
    ASSERT_FALSE(reply.error) << reply.error->message;
    ASSERT_TRUE(reply.job);
    std::vector<ServerMessage> seen = drained;
    const auto failed = [&](const ServerMessage& m) {
        const auto* u = std::get_if<JobUpdate>(&m);
        return u && u->status.state == JobState::Failed;
    };
    ASSERT_TRUE(std::any_of(seen.begin(), seen.end(), failed) || wait_for(*op, seen, failed)) << d.jobs().at(0).message;
    const JobStatus status = d.jobs().at(0);
    EXPECT_EQ(status.database, "job-1.db");
    // The file was opened (it is no NARX model) and the failure names it as clients know it.
    EXPECT_NE(status.message.find("models/bad.narx"), std::string::npos) << status.message;
    EXPECT_EQ(status.message.find(dir.string()), std::string::npos) << status.message;
    for (const ServerMessage& m : seen) {
        if (const auto* u = std::get_if<JobUpdate>(&m)) {
            EXPECT_EQ(u->status.database.find('/'), std::string::npos);
        }
    }
}

TEST_F(ServerFoldersTest, ANewPolicyNamingAFileOutsideIsRefusedAndTheJobGoesOn)
{
    daemon::Daemon d(options());
    auto op = operator_of(d);
    auto paced = scenario_with(kSynthetic, kUniform);
    paced.replace(paced.find("\"virtual\""), 9, "\"paced\", \"pace\": 0.5");
    paced.replace(paced.find("\"iterations\": 20"), 16, "\"iterations\": 2000");
    const Reply reply = submit(d, *op, paced);
    ASSERT_TRUE(reply.job);
    std::vector<ServerMessage> seen;
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage&) { return d.jobs().at(0).iteration > 0; }));
    d.receive(*op,
        R"({"type": "set-policy", "id": "p", "job": )" + std::to_string(*reply.job) + R"(, "policy": )"
            + narx_from("/etc/passwd") + "}");
    std::optional<Reply> refused;
    ASSERT_TRUE(wait_for(*op, seen, [&](const ServerMessage& m) {
        const auto* r = std::get_if<Reply>(&m);
        if (r && r->id == "p")
            refused = *r;
        return refused.has_value();
    }));
    ASSERT_TRUE(refused->error);
    EXPECT_EQ(refused->error->code, "illegal-value");
    EXPECT_EQ(refused->error->field, "policy.predictor.warm_start_file");
    EXPECT_EQ(d.jobs().at(0).state, JobState::Running);
    d.cancel(*reply.job, EventActor::person("admin", "test"));
}

TEST_F(ServerFoldersTest, AReplayOfALinkLeadingOutOfTheRunsFolderIsRefused)
{
    daemon::Daemon d(options());
    auto viewer = d.connect(Role::Viewer, "viewer");
    d.receive(*viewer, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
    drain(*viewer);
    fs::create_symlink(outside / "secret.narx", dir / "runs" / "stolen.db");
    std::vector<ServerMessage> seen;
    const Reply reply
        = request_reply(d, *viewer, seen, R"({"type": "open-replay", "id": "o", "database": "stolen.db", "run": 1})");
    ASSERT_TRUE(reply.error);
    EXPECT_EQ(reply.error->code, "unknown-run");
    EXPECT_EQ(reply.error->message.find(outside.string()), std::string::npos);
}

TEST_F(ServerFoldersTest, ARestartedDaemonNeverReusesAJobIdOrItsRunStore)
{
    {
        daemon::Daemon d(options());
        EXPECT_EQ(d.submit(scenario_with(kSynthetic, kUniform), "first"), 1);
        EXPECT_EQ(d.submit(scenario_with(kSynthetic, kUniform), "second"), 2);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        const auto both_done = [&] {
            const auto jobs = d.jobs();
            return std::all_of(
                jobs.begin(), jobs.end(), [](const JobStatus& j) { return j.state == JobState::Finished; });
        };
        while (!both_done() && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        ASSERT_TRUE(both_done());
    }
    ASSERT_TRUE(fs::exists(dir / "runs" / "job-2.db"));
    std::ofstream(dir / "runs" / "job-x7.db") << ""; // not a job's store: ignored
    daemon::Daemon restarted(options());
    EXPECT_EQ(restarted.submit(scenario_with(kSynthetic, kUniform), "after the restart"), 3);
    EXPECT_EQ(restarted.jobs().at(0).database, "job-3.db");
}

// What a folder's listing takes of each entry: a file as it is, a link only when it leads to
// a regular file inside the same folder, and nothing else.
TEST_F(ServerFoldersTest, AListingTakesFilesAndOnlyTheLinksThatStayInside)
{
    const fs::path runs = fs::canonical(dir) / "runs";
    const fs::path other = fs::canonical(dir) / "other-runs";
    fs::create_directories(runs / "sub");
    fs::create_directories(other);
    std::ofstream(runs / "plain.db") << "x";
    std::ofstream(other / "elsewhere.db") << "x";
    fs::create_symlink(runs / "plain.db", runs / "alias.db");
    fs::create_symlink(runs / "alias.db", runs / "chain.db"); // a link to a link inside
    fs::create_symlink(outside / "secret.narx", runs / "out.db");
    fs::create_symlink(runs / "out.db", runs / "chain-out.db"); // inside, then out
    fs::create_symlink(runs / "sub", runs / "folder.db");
    fs::create_symlink(runs, runs / "root.db");
    fs::create_symlink(runs / "missing.db", runs / "dangling.db");
    fs::create_symlink(other / "elsewhere.db", runs / "other.db"); // another runs folder: not this one
    std::map<std::string, std::optional<fs::path>> taken;
    for (const auto& entry : fs::directory_iterator(runs))
        taken[entry.path().filename().string()] = archive::ServerFolders::listed_file(runs, entry);
    EXPECT_EQ(taken.at("plain.db"), runs / "plain.db");
    EXPECT_EQ(taken.at("alias.db"), runs / "plain.db") << "the file a link leads to";
    EXPECT_EQ(taken.at("chain.db"), runs / "plain.db");
    for (const char* refused : { "out.db", "chain-out.db", "folder.db", "root.db", "dangling.db", "other.db", "sub" })
        EXPECT_EQ(taken.at(refused), std::nullopt) << refused;
}
