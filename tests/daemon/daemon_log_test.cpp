// fulcrumd's own log, read from the real daemon's standard error in both formats, and the
// limit on failed authentication (AuthLimiter) on its own clock and against a flood.

#include "access/auth.h"
#include "access/auth_limiter.h"
#include "process_support.h"
#include "ws_client.h"

#include <atomic>
#include <boost/json.hpp>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <thread>

using namespace fulcrum;
using namespace fulcrum::protocol;
using testing_support::http_request;
using testing_support::WsClient;
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

const std::string kJob = R"({"name": "logged", "seed": 3, "mode": "virtual",
  "model": {"type": "softmax"}, "training": {"total_batch": 32, "learning_rate": 0.1, "iterations": 20},
  "workers": [{"speed": 1000, "count": 2}]})";

std::vector<std::string> lines_of(const fs::path& log)
{
    std::ifstream in(log);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    return lines;
}

// A line of the log saying `message` with each of `fields` (as text writes them, or as a
// JSON member's text), in whichever format the log was written.
bool has_line(const std::vector<std::string>& lines, const std::string& message,
    const std::map<std::string, std::string>& fields, bool as_json)
{
    for (const std::string& line : lines) {
        if (as_json) {
            boost::system::error_code ec;
            const json::value parsed = json::parse(line, ec);
            if (ec || !parsed.is_object()) // a line still being written
                continue;
            const json::object& o = parsed.as_object();
            if (!o.contains("message") || o.at("message").as_string() != message)
                continue;
            bool all = true;
            for (const auto& [key, value] : fields) {
                if (!o.contains(key)) {
                    all = false;
                    break;
                }
                const json::value& v = o.at(key);
                const std::string text = v.is_string() ? std::string(v.as_string()) : json::serialize(v);
                all = all && text == value;
            }
            if (all)
                return true;
        } else {
            if (line.find("fulcrumd: " + message + ": ") == std::string::npos)
                continue;
            bool all = true;
            for (const auto& [key, value] : fields) {
                const bool quoted = value.find(' ') != std::string::npos;
                all = all && line.find(" " + key + "=" + (quoted ? "\"" + value + "\"" : value)) != std::string::npos;
            }
            if (all)
                return true;
        }
    }
    return false;
}

class DaemonLog : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override
    {
        dir = fs::temp_directory_path()
            / ("fulcrum-log-" + std::to_string(::getpid()) + "-"
                + ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir);
        fs::create_directories(dir / "data");
        token_file = dir / "data" / "tokens";
        log = dir / "fulcrumd.log";
        access::TokenStore::load_or_create(token_file);
        alice = access::TokenStore::add_token(token_file, Role::Operator, "alice");
        viewer = access::TokenStore::add_token(token_file, Role::Viewer, "grafana");
    }
    void TearDown() override { fs::remove_all(dir); }

    pid_t start(std::vector<std::string> more)
    {
        std::vector<std::string> args { FULCRUM_DAEMON_BINARY, "--data-dir", (dir / "data").string(), "--token-file",
            token_file.string(), "--listen", "127.0.0.1:0" };
        args.insert(args.end(), more.begin(), more.end());
        return testing_support::spawn_logged(args, log);
    }

    fs::path dir, token_file, log;
    std::string alice, viewer;
};

// Each line the issue names, read back in the format asked for: a refused upgrade, a
// connection opened and closed, a command that succeeded and one refused, the scheduler's
// placement with its reason, the job's states. No token is ever written.
TEST_P(DaemonLog, ConnectionsRefusalsCommandsAndSchedulerDecisionsAreLogged)
{
    const bool as_json = GetParam() == "json";
    const pid_t fulcrumd = start({ "--no-demo", "--log-format", GetParam() });
    testing_support::Reaper reaper(fulcrumd);
    const unsigned short port = testing_support::announced_port(log);
    ASSERT_NE(port, 0);

    EXPECT_EQ(http_request(port, "not-a-token").status, 401);
    {
        WsClient op(port, alice);
        op.send(Hello { kProtocolVersion, "logged" });
        op.receive_until<Welcome>();
        op.send_text(R"({"type": "submit-job", "id": "s", "scenario": )" + kJob + "}");
        const Reply submitted = op.receive_until<Reply>([](const Reply& r) { return r.id == "s"; });
        ASSERT_FALSE(submitted.error) << submitted.error->message;
        const Reply refused = op.request(JobCommand { "c", JobAction::Cancel, 99 }, "c");
        ASSERT_TRUE(refused.error);
        for (int i = 0; i < 500; ++i) { // a virtual job of 20 iterations: milliseconds
            const Reply listed = op.request(ListJobs { "l" }, "l");
            if (!listed.jobs.empty() && listed.jobs[0].state == JobState::Finished)
                break;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        op.stream().close(boost::beast::websocket::close_code::normal);
    }
    // The connection's close line is written as the server sees it close: wait for it.
    for (int i = 0; i < 500 && !has_line(lines_of(log), "connection closed", { { "token", "alice" } }, as_json); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ::kill(fulcrumd, SIGTERM);
    int status = 0;
    ::waitpid(fulcrumd, &status, 0);
    reaper.release();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    const std::vector<std::string> lines = lines_of(log);
    ASSERT_FALSE(lines.empty());
    std::string all;
    for (const std::string& line : lines) {
        all += line + "\n";
        if (as_json) {
            EXPECT_NO_THROW((void)json::parse(line).as_object()) << line;
        }
    }
    EXPECT_TRUE(has_line(lines, "request refused", { { "status", "401" }, { "reason", "unknown token" } }, as_json))
        << all;
    EXPECT_TRUE(has_line(lines, "connection opened",
        { { "agent", "fulcrum-test" }, { "role", "operator" }, { "token", "alice" } }, as_json))
        << all;
    EXPECT_TRUE(has_line(lines, "command",
        { { "actor", "alice" }, { "command", "submit-job" }, { "job", "1" }, { "outcome", "ok" } }, as_json))
        << all;
    EXPECT_TRUE(has_line(lines, "command refused",
        { { "actor", "alice" }, { "command", "cancel-job" }, { "job", "99" }, { "outcome", "unknown-job" } }, as_json))
        << all;
    EXPECT_TRUE(has_line(lines, "job event", { { "job", "1" }, { "kind", "job-placed" } }, as_json)) << all;
    EXPECT_TRUE(has_line(lines, "job state", { { "job", "1" }, { "state", "finished" } }, as_json)) << all;
    EXPECT_TRUE(has_line(lines, "connection closed",
        { { "token", "alice" }, { "role", "operator" }, { "reason", "closed by the client" } }, as_json))
        << all;
    EXPECT_EQ(all.find(alice), std::string::npos) << "a token in the log";
    EXPECT_EQ(all.find("not-a-token"), std::string::npos) << "a refused token in the log";
}

// Why fulcrumd could not start is written in the log's format too: with JSON, one object
// naming the input, the field and the reason, so that whatever parses the log parses its
// last line.
TEST_P(DaemonLog, AStartUpFailureIsWrittenInTheLogsFormat)
{
    const bool as_json = GetParam() == "json";
    const fs::path missing = dir / "no-such-cluster.json";
    const pid_t fulcrumd = start({ "--no-demo", "--log-format", GetParam(), "--cluster", missing.string() });
    int status = 0;
    ASSERT_EQ(::waitpid(fulcrumd, &status, 0), fulcrumd);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 2);
    const std::vector<std::string> lines = lines_of(log);
    ASSERT_EQ(lines.size(), 1u);
    if (as_json) {
        EXPECT_TRUE(has_line(lines, "cannot start",
            { { "input", missing.string() }, { "reason", "cannot open the cluster file" } }, true))
            << lines[0];
        EXPECT_NE(lines[0].find(R"("level":"error")"), std::string::npos) << lines[0];
    } else {
        EXPECT_EQ(lines[0], "fulcrumd: " + missing.string() + ": cannot open the cluster file") << lines[0];
    }
}

INSTANTIATE_TEST_SUITE_P(BothFormats, DaemonLog, ::testing::Values("text", "json"));

// A flood of bad tokens from 127.0.0.2: after --auth-limit failures (5 here) it is answered
// 429 with a Retry-After, the limit is logged once and counted in /metrics, while a viewer
// on 127.0.0.1 keeps receiving the demo's iterations and a client there is not limited.
TEST_F(DaemonLog, AFloodOfBadTokensIsLimitedWhileAViewerKeepsReceiving)
{
    const pid_t fulcrumd = start({ "--auth-limit", "5" }); // and the embedded demo, a paced job streaming iterations
    testing_support::Reaper reaper(fulcrumd);
    const unsigned short port = testing_support::announced_port(log);
    ASSERT_NE(port, 0);
    WsClient watcher(port, viewer);
    watcher.send(Hello { kProtocolVersion, "watcher" });
    watcher.receive_until<Welcome>();
    Subscribe subscribe;
    subscribe.id = "w";
    subscribe.streams = { Stream::Iterations };
    watcher.request(subscribe, "w");
    const timeval patience { 20, 0 }; // a demo that stopped streaming fails the test, not hangs it
    ::setsockopt(watcher.stream().next_layer().native_handle(), SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);

    std::atomic<int> rows_during { 0 };
    std::atomic<bool> flood_done { false };
    std::vector<testing_support::HttpAnswer> answers;
    std::thread flood([&] {
        // At least 300 attempts, and on until the viewer has had five iterations meanwhile
        // (more than it can have had buffered when the flood began).
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while ((answers.size() < 300 || rows_during.load() < 5) && std::chrono::steady_clock::now() < give_up)
            answers.push_back(http_request(port, "bad-" + std::to_string(answers.size()), "127.0.0.2"));
        flood_done = true;
    });
    while (!flood_done.load()) {
        const ServerMessage m = watcher.receive();
        if (std::holds_alternative<IterationRows>(m) && !flood_done.load())
            ++rows_during;
    }
    flood.join();
    EXPECT_GE(rows_during.load(), 5) << "the viewer stopped receiving during the flood";
    ASSERT_GE(answers.size(), 300u);
    for (std::size_t i = 0; i < answers.size(); ++i)
        if (i < 5)
            EXPECT_EQ(answers[i].status, 401) << "attempt " << i;
        else {
            EXPECT_EQ(answers[i].status, 429) << "attempt " << i;
            EXPECT_FALSE(answers[i].retry_after.empty()) << "attempt " << i;
        }
    EXPECT_EQ(http_request(port, "bad-from-another-host").status, 401) << "127.0.0.1 was limited too";
    EXPECT_EQ(http_request(port, viewer).status, 101);

    const std::string metrics = http_request(port, viewer, "127.0.0.1", "/metrics").body;
    EXPECT_NE(metrics.find("fulcrum_daemon_auth_limits_total 1\n"), std::string::npos) << metrics;
    EXPECT_NE(metrics.find("fulcrum_daemon_auth_failures_total 6\n"), std::string::npos) << metrics;
    EXPECT_NE(metrics.find("fulcrum_daemon_auth_limited_requests_total " + std::to_string(answers.size() - 5) + "\n"),
        std::string::npos)
        << metrics;
    bool logged = false;
    for (int i = 0; i < 500 && !logged; ++i) {
        for (const std::string& line : lines_of(log))
            logged = logged
                || (line.find("[WARN]  fulcrumd: source limited: source=127.0.0.2 failures=5") != std::string::npos);
        if (!logged)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(logged) << "no 'source limited' line in " << log;
}

using Clock = access::AuthLimiter::Clock;

// One source per IPv4 host, whichever way its address comes (mapped into IPv6, or through
// NAT64), and per IPv6 /64.
TEST(AuthLimiter, ASourceIsAnIpv4AddressOrAnIpv6Slash64)
{
    using access::AuthLimiter;
    EXPECT_EQ(AuthLimiter::source_of("10.1.2.3"), "10.1.2.3");
    EXPECT_EQ(AuthLimiter::source_of("::ffff:10.1.2.3"), "10.1.2.3");
    EXPECT_EQ(AuthLimiter::source_of("64:ff9b::a01:203"), "10.1.2.3");
    EXPECT_EQ(AuthLimiter::source_of("2001:db8:1:2:aaaa:bbbb:cccc:dddd"), "2001:db8:1:2::/64");
    EXPECT_EQ(AuthLimiter::source_of("2001:db8:1:2::9"), AuthLimiter::source_of("2001:db8:1:2:ffff::1"));
    EXPECT_NE(AuthLimiter::source_of("2001:db8:1:2::9"), AuthLimiter::source_of("2001:db8:1:3::9"));
    EXPECT_EQ(AuthLimiter::source_of("::1"), "::/64");
    EXPECT_EQ(AuthLimiter::source_of("not an address"), "not an address");
}

// On its own clock: the 20th failure within a minute begins a minute's limit; failures
// older than the window do not count; another source is free; the limit ends on time.
TEST(AuthLimiter, TwentyFailuresInAMinuteLimitTheSourceForAMinute)
{
    access::AuthLimiter limiter;
    const Clock::time_point t0 {};
    for (int i = 0; i < 19; ++i)
        EXPECT_FALSE(limiter.failed("10.0.0.1", t0 + std::chrono::seconds(i)));
    EXPECT_FALSE(limiter.limited("10.0.0.1", t0 + std::chrono::seconds(19)));
    // The first failure (at 0 s) is out of the window at 60 s: 19 within it, no limit yet;
    // the next one at 60 s is the 20th within a minute.
    EXPECT_FALSE(limiter.failed("10.0.0.1", t0 + std::chrono::seconds(60)));
    EXPECT_TRUE(limiter.failed("10.0.0.1", t0 + std::chrono::seconds(60)));
    const auto left = limiter.limited("10.0.0.1", t0 + std::chrono::seconds(90));
    ASSERT_TRUE(left);
    EXPECT_EQ(*left, std::chrono::seconds(30));
    EXPECT_FALSE(limiter.failed("10.0.0.1", t0 + std::chrono::seconds(91))) << "a limit begins once";
    EXPECT_FALSE(limiter.limited("10.0.0.2", t0 + std::chrono::seconds(91))) << "another source";
    EXPECT_FALSE(limiter.limited("10.0.0.1", t0 + std::chrono::seconds(120))) << "the limit ended";
    const auto totals = limiter.totals();
    EXPECT_EQ(totals.failures, 22u);
    EXPECT_EQ(totals.limits, 1u);
    EXPECT_EQ(totals.refused, 1u);
}

// The sources followed are bounded; a full table of limited sources follows no new one,
// and one whose failures are old makes room again.
TEST(AuthLimiter, TheSourcesFollowedAreBounded)
{
    access::AuthLimiter limiter({ .failures = 2, .window = std::chrono::seconds(60), .sources = 2 });
    const Clock::time_point t0 {};
    EXPECT_FALSE(limiter.failed("a", t0));
    EXPECT_TRUE(limiter.failed("a", t0));
    EXPECT_FALSE(limiter.failed("b", t0));
    EXPECT_TRUE(limiter.failed("b", t0));
    // The table is full of limited sources: one is forgotten, so c is followed and limited.
    EXPECT_FALSE(limiter.failed("c", t0 + std::chrono::seconds(2)));
    EXPECT_TRUE(limiter.failed("c", t0 + std::chrono::seconds(2)))
        << "a new source is followed though the table is full";
    EXPECT_TRUE(limiter.limited("c", t0 + std::chrono::seconds(3)));
    EXPECT_EQ(static_cast<int>(limiter.limited("a", t0 + std::chrono::seconds(3)).has_value())
            + static_cast<int>(limiter.limited("b", t0 + std::chrono::seconds(3)).has_value()),
        1)
        << "one of the two limited sources made room";
    access::AuthLimiter off({ .failures = 0 });
    for (int i = 0; i < 100; ++i)
        EXPECT_FALSE(off.failed("a", t0));
    EXPECT_FALSE(off.limited("a", t0));
    EXPECT_EQ(off.totals().failures, 100u);
}

} // namespace
