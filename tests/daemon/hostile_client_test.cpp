// A hostile client, with an operator's or a viewer's token, against a real fulcrumd: every
// path field a scenario can hold is confined by one walk, no reply names a server path,
// rights follow the token file while a session is open, and an oversized frame is answered
// before the connection closes.

#include "daemon/daemon.h"
#include "daemon/job_journal.h"
#include "daemon_support.h"
#include "process_support.h"
#include "scenario/path_fields.h"
#include "served.h"
#include "ws_client.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

using namespace fulcrum;
using namespace fulcrum::protocol;
using testing_support::drain;
using testing_support::reply_to;
using testing_support::Served;
using testing_support::WsClient;

namespace {

namespace fs = std::filesystem;

// A valid scenario without the sections a path field sits in (data, policy, changes).
const std::string kBase = R"({"name": "hostile", "seed": 3, "mode": "virtual",
  "model": {"type": "softmax"}, "training": {"total_batch": 32, "learning_rate": 0.1, "iterations": 20},
  "workers": [{"speed": 1000, "count": 2}]})";

// `text` as a JSON string's contents.
std::string json_escaped(const std::string& text)
{
    std::string out;
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (byte < 0x20) {
            static constexpr char kHex[] = "0123456789abcdef";
            out += "\\u00";
            out += kHex[byte >> 4];
            out += kHex[byte & 0xfu];
        } else {
            out += c;
        }
    }
    return out;
}

// kBase with the field's example sections, the field set to `name`.
std::string scenario_naming(const scenario::PathField& field, const std::string& name)
{
    std::string sections(field.example);
    sections.replace(sections.find("@PATH@"), 6, json_escaped(name));
    const std::string inner = sections.substr(1, sections.rfind('}') - 1); // the members
    return kBase.substr(0, kBase.rfind('}')) + ", " + inner + "}";
}

// The concrete field a scenario_naming() scenario refuses: its first array element.
std::string concrete(std::string_view pattern)
{
    std::string out(pattern);
    for (std::size_t at = out.find("[]"); at != std::string::npos; at = out.find("[]", at))
        out.replace(at, 2, "[0]");
    return out;
}

class HostileClientTest : public ::testing::Test {
protected:
    fs::path dir = fs::temp_directory_path() / ("fulcrum-hostile-" + std::to_string(::getpid()));
    fs::path outside = fs::temp_directory_path() / ("fulcrum-hostile-outside-" + std::to_string(::getpid()));
    void SetUp() override
    {
        fs::create_directories(outside);
        std::ofstream(outside / "secret") << "not a model\n";
    }
    void TearDown() override
    {
        fs::remove_all(dir);
        fs::remove_all(outside);
    }

    daemon::DaemonOptions options() const
    {
        daemon::DaemonOptions o;
        o.data_dir = dir / "data";
        return o;
    }

    std::shared_ptr<serve::Client> greeted(daemon::Daemon& d, Role role)
    {
        auto c = d.connect(role, "hostile");
        d.receive(*c, encode(ClientMessage { Hello { kProtocolVersion, "t" } }));
        drain(*c);
        return c;
    }

    // Every reply and status text the client got, for server paths.
    void expect_no_server_path(const std::string& text) const
    {
        EXPECT_EQ(text.find(dir.string()), std::string::npos) << text;
        EXPECT_EQ(text.find(outside.string()), std::string::npos) << text;
    }
};

} // namespace

// The schema lists every path field the parser reads (it refuses to read one it lacks), so
// this loop reaches each, one added later included.
TEST_F(HostileClientTest, EveryPathFieldOfAScenarioRefusesEveryHostileName)
{
    daemon::Daemon d(options());
    auto op = greeted(d, Role::Operator);
    for (const char* folder : { "datasets", "models" }) {
        fs::create_symlink(outside / "secret", dir / "data" / folder / "planted");
        fs::create_symlink(outside / "nothing", dir / "data" / folder / "dangling");
        fs::create_symlink(outside, dir / "data" / folder / "planted-folder");
    }
    const std::vector<std::string> hostile { "/etc/passwd", "/dev/zero", "../../etc/passwd", "a/../../x", "..", ".",
        "./", "", "fashion-mnist\0xyz", "line\nforged", "esc\x1b[2J", "planted", "dangling", "planted-folder/secret",
        std::string(5000, 'a') };
    ASSERT_GE(scenario::path_fields().size(), 3u);
    for (const scenario::PathField& field : scenario::path_fields()) {
        for (std::string name : hostile) {
            if (name == "fashion-mnist")
                name = std::string("fashion-mnist\0xyz", 17); // the literal above stops at its NUL
            std::vector<ServerMessage> seen;
            const Reply reply = testing_support::request_reply(
                d, *op, seen, R"({"type": "submit-job", "id": "s", "scenario": )" + scenario_naming(field, name) + "}");
            ASSERT_TRUE(reply.error) << field.field << " took '" << name << "'";
            EXPECT_EQ(reply.error->code, "illegal-value")
                << field.field << " '" << name << "': " << reply.error->message;
            EXPECT_EQ(reply.error->field, concrete(field.field)) << name << ": " << reply.error->message;
            expect_no_server_path(reply.error->message);
        }
    }
    EXPECT_TRUE(d.jobs().empty()) << "a refused scenario queued a job";
}

TEST_F(HostileClientTest, ANameInsideItsFolderIsTakenByEveryPathField)
{
    daemon::Daemon d(options());
    auto op = greeted(d, Role::Operator);
    fs::create_directories(dir / "data" / "datasets" / "mine");
    std::ofstream(dir / "data" / "models" / "mine") << "not a model\n";
    for (const scenario::PathField& field : scenario::path_fields()) {
        std::vector<ServerMessage> seen;
        const Reply reply = testing_support::request_reply(
            d, *op, seen, R"({"type": "submit-job", "id": "s", "scenario": )" + scenario_naming(field, "mine") + "}");
        EXPECT_FALSE(reply.error) << field.field << ": " << reply.error->message;
    }
    for (const JobStatus& job : d.jobs())
        d.cancel(job.job, EventActor::person("admin", "test"));
}

// A journal entry naming a path outside (written before this fulcrumd confined every field,
// or by hand) is refused when fulcrumd starts, before any file is opened; it never runs.
TEST_F(HostileClientTest, ARecoveredClientJobIsConfinedAsAtItsSubmission)
{
    fs::create_directories(dir / "data");
    for (const scenario::PathField& field : scenario::path_fields()) {
        daemon::JobJournal(dir / "data" / "jobs")
            .add(7, daemon::JobJournal::Origin::Client, "default",
                scenario_naming(field, field.kind == FolderKind::Models ? "/dev/zero" : "/etc"));
        daemon::Daemon d(options());
        const auto found = d.recover();
        ASSERT_EQ(found.size(), 1u) << field.field;
        EXPECT_EQ(found[0].job, 7);
        EXPECT_NE(found[0].message.find("not recovered"), std::string::npos) << found[0].message;
        EXPECT_NE(found[0].message.find(concrete(field.field)), std::string::npos) << found[0].message;
        EXPECT_TRUE(d.jobs().empty()) << field.field;
    }
}

// A policy an operator sets on a running job is read through the same walk.
TEST_F(HostileClientTest, ANewPolicysPathIsConfinedAndItsRefusalNamesNoServerPath)
{
    daemon::Daemon d(options());
    auto op = greeted(d, Role::Operator);
    std::string paced = kBase;
    paced.replace(paced.find("\"virtual\""), 9, "\"paced\", \"pace\": 0.5");
    paced.replace(paced.find("\"iterations\": 20"), 16, "\"iterations\": 2000");
    std::vector<ServerMessage> seen;
    const Reply submitted = testing_support::request_reply(
        d, *op, seen, R"({"type": "submit-job", "id": "s", "scenario": )" + paced + "}");
    ASSERT_TRUE(submitted.job) << submitted.error->message;
    for (const std::string name : { ".", "", "/etc/passwd", "..", "x\\u0000y" }) {
        const Reply reply = testing_support::request_reply(d, *op, seen,
            R"({"type": "set-policy", "id": "p", "job": )" + std::to_string(*submitted.job)
                + R"(, "policy": {"type": "lbbsp-cpu", "predictor": {"type": "narx", "warm_start": "file",
                "warm_start_file": ")"
                + name + R"("}}})");
        ASSERT_TRUE(reply.error) << name;
        EXPECT_EQ(reply.error->code, "illegal-value") << reply.error->message;
        EXPECT_EQ(reply.error->field, "policy.predictor.warm_start_file") << name;
        expect_no_server_path(reply.error->message);
    }
    d.cancel(*submitted.job, EventActor::person("admin", "test"));
}

TEST_F(HostileClientTest, ListRunsDoesNotFollowALinkOutOfTheRunsFolderAndReplayErrorsNameNoServerPath)
{
    daemon::Daemon d(options());
    auto viewer = greeted(d, Role::Admin); // who is listed the unreadable stores too
    fs::create_symlink(outside / "secret", dir / "data" / "runs" / "outlink.db");
    std::ofstream(dir / "data" / "runs" / "notes.db") << "not a SQLite database, but long enough to be read as one\n";
    d.receive(*viewer, R"({"type": "list-runs", "id": "l"})");
    std::vector<ServerMessage> seen;
    std::optional<Reply> listed;
    ASSERT_TRUE(testing_support::wait_for(*viewer, seen, [&](const ServerMessage& m) {
        if (const auto* r = std::get_if<Reply>(&m); r && r->id == "l")
            listed = *r;
        return listed.has_value();
    }));
    ASSERT_FALSE(listed->error);
    for (const RunListing& run : listed->runs) {
        EXPECT_NE(run.database, "outlink.db") << "a link leading out was listed: " << run.status;
        expect_no_server_path(run.status);
    }
    EXPECT_TRUE(std::any_of(
        listed->runs.begin(), listed->runs.end(), [](const RunListing& r) { return r.database == "notes.db"; }));

    for (const char* store : { "notes.db", "outlink.db" }) {
        d.receive(
            *viewer, std::string(R"({"type": "open-replay", "id": "o", "database": ")") + store + R"(", "run": 1})");
        std::optional<Reply> opened;
        ASSERT_TRUE(testing_support::wait_for(*viewer, seen, [&](const ServerMessage& m) {
            if (const auto* r = std::get_if<Reply>(&m); r && r->id == "o")
                opened = *r;
            return opened.has_value();
        }));
        ASSERT_TRUE(opened->error) << store;
        expect_no_server_path(opened->error->message);
        EXPECT_NE(opened->error->message.find(store), std::string::npos) << opened->error->message;
    }
}

// A demoted token's session is closed with a reason, as a revoked one's is; the client
// connects again with its new role.
TEST_F(HostileClientTest, ARoleChangeInTheTokenFileClosesTheOpenSessionWithAReason)
{
    fs::create_directories(dir);
    const fs::path file = dir / "tokens";
    Served served(options(), file);
    const std::string alice = access::TokenStore::add_token(file, Role::Operator, "alice");
    const std::string bob = access::TokenStore::add_token(file, Role::Viewer, "bob");
    WsClient as_alice(served.server.port(), alice);
    as_alice.send(Hello { kProtocolVersion, "alice" });
    EXPECT_EQ(as_alice.receive_until<Welcome>().role, Role::Operator);
    WsClient as_bob(served.server.port(), bob);
    as_bob.send(Hello { kProtocolVersion, "bob" });
    EXPECT_EQ(as_bob.receive_until<Welcome>().role, Role::Viewer);

    // alice becomes a viewer; bob's line is deleted.
    std::string text;
    {
        std::ifstream in(file);
        for (std::string line; std::getline(in, line);) {
            if (line.find(bob) != std::string::npos)
                continue;
            if (line.find(alice) != std::string::npos)
                line = "viewer alice " + alice;
            text += line + "\n";
        }
    }
    std::ofstream(file, std::ios::trunc) << text;
    // A connection right after the change reads the file first (every upgrade reloads it):
    // the server's one-second check must still close the sessions the change affects.
    WsClient first_to_read(served.server.port(), alice);
    first_to_read.send(Hello { kProtocolVersion, "first" });
    EXPECT_EQ(first_to_read.receive_until<Welcome>().role, Role::Viewer);

    for (auto* client : { &as_alice, &as_bob }) {
        const auto closed = client->wait_closed(std::chrono::seconds(10));
        ASSERT_TRUE(closed) << "the session stayed open";
        EXPECT_EQ(closed->code, 1008);
        EXPECT_NE(closed->reason.find(client == &as_alice ? "role changed from operator to viewer" : "revoked"),
            std::string::npos)
            << closed->reason;
    }
    WsClient again(served.server.port(), alice);
    again.send(Hello { kProtocolVersion, "alice again" });
    EXPECT_EQ(again.receive_until<Welcome>().role, Role::Viewer);
    const Reply refused = again.request(JobCommand { "p", JobAction::Pause, 1 }, "p");
    ASSERT_TRUE(refused.error);
    EXPECT_EQ(refused.error->code, "not-authorized");
}

TEST_F(HostileClientTest, AFrameOverTheLimitIsAnsweredWithFrameTooLargeBeforeThe1009Close)
{
    fs::create_directories(dir);
    Served served(options(), dir / "tokens");
    WsClient viewer(served.server.port(), *served.tokens.token_for(Role::Viewer));
    viewer.send(Hello { kProtocolVersion, "big" });
    viewer.receive_until<Welcome>();
    viewer.send_text(R"({"type": "list-jobs", "id": ")" + std::string(kMaxFrameBytes, 'x') + R"("})");
    const ProtocolError error = viewer.receive_until<ProtocolError>();
    EXPECT_EQ(error.error.code, "frame-too-large");
    const auto closed = viewer.wait_closed(std::chrono::seconds(10));
    ASSERT_TRUE(closed);
    EXPECT_EQ(closed->code, 1009);
}

TEST(TokenScheme, TheBearerSchemeIsMatchedInAnyCase)
{
    EXPECT_EQ(access::bearer_token("Bearer abc"), "abc");
    EXPECT_EQ(access::bearer_token("bearer abc"), "abc");
    EXPECT_EQ(access::bearer_token("BEARER   abc"), "abc");
    EXPECT_FALSE(access::bearer_token("Bearerabc"));
    EXPECT_FALSE(access::bearer_token("Basic abc"));
    EXPECT_FALSE(access::bearer_token("bearer "));
    EXPECT_FALSE(access::bearer_token(""));
}

// The real fulcrumd's log: a job named with a line break stays on its own line.
TEST_F(HostileClientTest, AJobNameCannotForgeALineInFulcrumdsLog)
{
    fs::create_directories(dir);
    const fs::path log = dir / "fulcrumd.log";
    const pid_t fulcrumd = testing_support::spawn_logged(
        { FULCRUM_DAEMON_BINARY, "--data-dir", (dir / "data").string(), "--listen", "127.0.0.1:0", "--no-demo" }, log);
    testing_support::Reaper reaper(fulcrumd);
    const unsigned short port = testing_support::announced_port(log);
    ASSERT_NE(port, 0);
    {
        WsClient op(
            port, access::TokenStore::load_or_create(dir / "data" / "tokens").token_for(Role::Operator).value());
        op.send(Hello { kProtocolVersion, "forger" });
        op.receive_until<Welcome>();
        std::string named = kBase;
        named.replace(named.find(R"("hostile")"), 9, R"("x\nfulcrumd: job 99 (admin) finished\u001b[2K")");
        op.send_text(R"({"type": "submit-job", "id": "s", "scenario": )" + named + "}");
        const Reply reply = op.receive_until<Reply>([](const Reply& r) { return r.id == "s"; });
        ASSERT_FALSE(reply.error) << reply.error->message;
    }
    ::kill(fulcrumd, SIGTERM);
    int status = 0;
    ::waitpid(fulcrumd, &status, 0);
    reaper.release();
    std::ifstream in(log);
    bool escaped = false;
    for (std::string line; std::getline(in, line);) {
        EXPECT_NE(line.rfind("fulcrumd: job 99", 0), 0u) << "a forged line: " << line;
        EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
        escaped = escaped || line.find("name=\"x\\nfulcrumd: job 99 (admin) finished\\x1b[2K\"") != std::string::npos;
    }
    EXPECT_TRUE(escaped) << "the job's line is missing from " << log;
}

TEST(LogLines, AClientsTextCannotForgeALogLine)
{
    EXPECT_EQ(printable("job\nfulcrumd: forged"), "job\\nfulcrumd: forged");
    EXPECT_EQ(printable(std::string("a\0b\x1b", 4)), "a\\x00b\\x1b");
    EXPECT_EQ(printable("plain – ünïcode"), "plain – ünïcode");
}

// A close frame's reason is at most 123 bytes: a longer one is cut whole characters at a
// time and says so, and one that fits is sent as it is.
TEST(CloseReason, ALongReasonIsCutToWhatACloseFrameCarries)
{
    EXPECT_EQ(serve::close_reason_that_fits("token revoked"), "token revoked");
    const std::string fits(serve::kCloseReasonBytes, 'x');
    EXPECT_EQ(serve::close_reason_that_fits(fits), fits);
    const std::string cut = serve::close_reason_that_fits(std::string(200, 'x'));
    EXPECT_EQ(cut.size(), serve::kCloseReasonBytes);
    EXPECT_TRUE(cut.ends_with("..."));
    std::string accents; // two bytes a character: a cut never splits one
    for (int i = 0; i < 100; ++i)
        accents += "\u00e9";
    const std::string cut_accents = serve::close_reason_that_fits(accents);
    EXPECT_LE(cut_accents.size(), serve::kCloseReasonBytes);
    EXPECT_EQ((cut_accents.size() - 3) % 2, 0u) << "whole characters before the \"...\"";
}
