#include "common/error.h"
#include "daemon/daemon_options.h"
#include "server/daemon_config.h"

#include <gtest/gtest.h>

using namespace fulcrum;
using server::DaemonSettings;
using server::GivenOnCommandLine;

namespace {

std::string refusal(const std::function<void()>& act)
{
    try {
        act();
    } catch (const InputError& e) {
        return e.source() + " " + e.field() + ": " + e.reason();
    }
    return "accepted";
}

} // namespace

TEST(DaemonConfig, AFileSetsWhatTheCommandLineLeftAndNamesABadField)
{
    DaemonSettings s;
    GivenOnCommandLine given;
    given.listen = true; // --listen on the command line wins over the file's
    s.listen = "127.0.0.1:9000";
    server::apply_config_file(R"({"listen": "0.0.0.0:7480", "data_dir": "/var/lib/fulcrum", "placement": "ff",
        "resume_jobs": "manual", "runs_folders": ["/srv/runs"], "scenarios": ["a.json"], "allow_plain": true,
        "log_level": "warning", "log_format": "json", "auth_limit": 5})",
        "fulcrumd.json", s, given);
    EXPECT_EQ(s.log_level, "warning");
    EXPECT_EQ(s.log_format, "json");
    EXPECT_EQ(s.auth_limit, 5);
    EXPECT_EQ(s.listen, "127.0.0.1:9000");
    EXPECT_EQ(s.data_dir, "/var/lib/fulcrum");
    EXPECT_EQ(s.placement, "ff");
    EXPECT_TRUE(s.resume_manual);
    EXPECT_TRUE(s.allow_plain);
    ASSERT_EQ(s.folders.runs.size(), 1u);
    EXPECT_EQ(s.scenarios, std::vector<std::string> { "a.json" });

    const auto apply = [](const std::string& text) {
        return refusal([&] {
            DaemonSettings t;
            server::apply_config_file(text, "fulcrumd.json", t, {});
        });
    };
    const std::string typo = apply(R"({"listne": "x"})");
    EXPECT_EQ(typo.rfind(
                  "fulcrumd.json listne: unknown field (expected allow_plain, auth_limit, cluster, comm, data_dir,", 0),
        0u)
        << typo;
    EXPECT_NE(typo.find("listen"), std::string::npos) << "the known fields are listed: " << typo;
    EXPECT_EQ(apply(R"({"data_dir": 5})"), "fulcrumd.json data_dir: expected a path, got a number");
    EXPECT_EQ(
        apply(R"({"resume_jobs": "later"})"), "fulcrumd.json resume_jobs: is 'later', expected one of: auto, manual");
    EXPECT_EQ(apply(R"({"runs_folders": "/srv/runs"})"),
        "fulcrumd.json runs_folders: expected an array of folders holding recorded run stores, got a string");
    EXPECT_EQ(apply(R"({"scenarios": ["a.json", 3]})"),
        "fulcrumd.json scenarios[1]: expected scenario file paths, got a number");
    EXPECT_EQ(apply(R"({"log_level": "loud"})"),
        "fulcrumd.json log_level: is 'loud', expected one of: debug, info, warning, error");
    EXPECT_EQ(apply(R"({"log_format": "xml"})"), "fulcrumd.json log_format: is 'xml', expected one of: text, json");
    EXPECT_NE(apply(R"({"auth_limit": -1})").find("fulcrumd.json auth_limit:"), std::string::npos);
    EXPECT_EQ(apply("[1, 2]"), "fulcrumd.json : expected a JSON object, got an array");
    EXPECT_EQ(apply("{"), "fulcrumd.json line 1, column 2: malformed JSON: incomplete JSON");
}

TEST(DaemonConfig, PlainWebSocketLeavesLoopbackOnlyWhenAllowedAndTheAddressIsChecked)
{
    const auto check = [](DaemonSettings s) { return refusal([&] { server::check_settings(s); }); };
    DaemonSettings local;
    const server::ListenAddress address = server::check_settings(local);
    EXPECT_EQ(address.host, "127.0.0.1");
    EXPECT_EQ(address.port, 7480);
    EXPECT_TRUE(address.loopback);
    EXPECT_EQ(local.token_file, "fulcrum-data/tokens") << "the token file defaults into the data folder";

    for (const char* bad : { "7480", ":7480", "host:99999", "host:74x0", "host:" }) {
        DaemonSettings s;
        s.listen = bad;
        EXPECT_EQ(check(s), std::string("--listen : expected HOST:PORT (e.g. 127.0.0.1:7480), got '") + bad + "'");
    }
    DaemonSettings open;
    open.listen = "0.0.0.0:7480";
    EXPECT_NE(check(open).find("is not a loopback address and no TLS certificate is configured"), std::string::npos);
    open.allow_plain = true;
    EXPECT_EQ(check(open), "accepted");
    DaemonSettings half_tls;
    half_tls.tls_certificate = "cert.pem";
    EXPECT_EQ(check(half_tls), "--tls-key : TLS needs both --tls-cert and --tls-key (PEM files)");
    DaemonSettings placement;
    placement.placement = "best";
    EXPECT_EQ(check(placement).rfind("--placement : ", 0), 0u);
}

TEST(DaemonConfig, CommunicationSchedulingIsNoneSrsfNOrAdaSrsf)
{
    const auto check = [](DaemonSettings s) { return refusal([&] { server::check_settings(s); }); };
    DaemonSettings s;
    EXPECT_EQ(s.comm, "none") << "no scheduler by default: transfers contend by eq. 5";
    server::apply_config_file(R"({"comm": "srsf-2"})", "fulcrumd.json", s, {});
    EXPECT_EQ(s.comm, "srsf-2");
    GivenOnCommandLine given;
    given.comm = true; // --comm on the command line wins
    s.comm = "ada-srsf";
    server::apply_config_file(R"({"comm": "srsf-1"})", "fulcrumd.json", s, given);
    EXPECT_EQ(s.comm, "ada-srsf");
    for (const char* good : { "none", "srsf-1", "srsf-3", "ada-srsf" }) {
        DaemonSettings t;
        t.comm = good;
        EXPECT_EQ(check(t), "accepted") << good;
    }
    for (const char* bad : { "srsf-0", "srsf", "fifo", "" }) {
        DaemonSettings t;
        t.comm = bad;
        EXPECT_EQ(check(t),
            std::string("--comm : unknown communication scheduler '") + bad
                + "' (expected none, srsf-N with N >= 1 (e.g. srsf-1) or ada-srsf)")
            << bad;
    }
    EXPECT_EQ(refusal([] {
        DaemonSettings t;
        server::apply_config_file(R"({"comm": 1})", "fulcrumd.json", t, {});
    }).rfind("fulcrumd.json comm: ", 0),
        0u);
}

TEST(DaemonConfig, TheQueueIsBackfillOrFifo)
{
    DaemonSettings s;
    EXPECT_EQ(s.queue, "backfill");
    server::apply_config_file(R"({"queue": "fifo"})", "fulcrumd.json", s, {});
    EXPECT_EQ(s.queue, "fifo");
    EXPECT_EQ(refusal([&] { server::check_settings(s); }), "accepted");
    GivenOnCommandLine given;
    given.queue = true; // --queue on the command line wins
    s.queue = "backfill";
    server::apply_config_file(R"({"queue": "fifo"})", "fulcrumd.json", s, given);
    EXPECT_EQ(s.queue, "backfill");
    s.queue = "lifo";
    EXPECT_EQ(refusal([&] { server::check_settings(s); }), "--queue : expected backfill or fifo, got 'lifo'");
}

TEST(DaemonConfig, ElasticSchedulingIsStaticOrEpsWithARoundAndAFeedbackPoint)
{
    DaemonSettings s;
    GivenOnCommandLine given;
    given.early_feedback = true; // --feedback on the command line wins
    s.early_feedback = "iterations:50";
    server::apply_config_file(
        R"({"elastic": "eps", "elastic_round_s": 5, "early_feedback": "accuracy:0.8"})", "fulcrumd.json", s, given);
    daemon::DaemonOptions options;
    server::elastic_options(s, options);
    EXPECT_EQ(options.elastic.policy, sched::ElasticPolicy::Eps);
    EXPECT_EQ(options.elastic.round_s, 5);
    EXPECT_EQ(sched::to_string(options.elastic.feedback), "iterations:50");
    EXPECT_EQ(daemon::DaemonOptions {}.elastic.policy, sched::ElasticPolicy::StaticFifo) << "static by default";

    const auto refused = [](const std::function<void(DaemonSettings&)>& change) {
        return refusal([&] {
            DaemonSettings t;
            change(t);
            daemon::DaemonOptions o;
            server::elastic_options(t, o);
        });
    };
    EXPECT_EQ(refused([](DaemonSettings& t) { t.elastic = "fifo"; }),
        "--elastic : expected eps, static or kill-restart, got 'fifo'");
    EXPECT_EQ(refused([](DaemonSettings& t) { t.elastic = "kill-restart"; }), "accepted");
    EXPECT_EQ(
        refused([](DaemonSettings& t) { t.elastic_round_s = 0; }).rfind("--elastic-round-s : expected seconds > 0", 0),
        0u);
    EXPECT_EQ(refused([](DaemonSettings& t) { t.early_feedback = "soon"; }).rfind("--feedback : ", 0), 0u);
    EXPECT_EQ(refusal([] {
        DaemonSettings t;
        server::apply_config_file(R"({"elastic_round_s": -1})", "fulcrumd.json", t, {});
    }).rfind("fulcrumd.json elastic_round_s: ", 0),
        0u);
}

TEST(DaemonConfig, TheJobsRunFiveBelowFulcrumdsPriorityUnlessToldFromZeroToNineteen)
{
    DaemonSettings s;
    EXPECT_EQ(server::job_niceness(s), 5);
    EXPECT_EQ(server::job_niceness(s), daemon::DaemonOptions {}.job_niceness) << "one default, in both places";
    server::apply_config_file(R"({"job_niceness": 0})", "fulcrumd.json", s, {});
    EXPECT_EQ(server::job_niceness(s), 0);
    GivenOnCommandLine given;
    given.job_niceness = true; // --job-niceness on the command line wins
    s.job_niceness = 12;
    server::apply_config_file(R"({"job_niceness": 3})", "fulcrumd.json", s, given);
    EXPECT_EQ(server::job_niceness(s), 12);

    const auto apply = [](const std::string& text) {
        return refusal([&] {
            DaemonSettings t;
            server::apply_config_file(text, "fulcrumd.json", t, {});
        });
    };
    EXPECT_NE(apply(R"({"job_niceness": 20})").find("fulcrumd.json job_niceness:"), std::string::npos);
    EXPECT_NE(apply(R"({"job_niceness": -1})").find("fulcrumd.json job_niceness:"), std::string::npos);
    EXPECT_NE(apply(R"({"job_niceness": "low"})").find("fulcrumd.json job_niceness:"), std::string::npos);
    s.job_niceness = -3;
    EXPECT_EQ(refusal([&] { server::job_niceness(s); }),
        "--job-niceness : expected a nice value to add from 0 (the jobs run at fulcrumd's priority) to 19, got -3");
    s.job_niceness = 20;
    EXPECT_NE(refusal([&] { server::job_niceness(s); }).find("got 20"), std::string::npos);
}
