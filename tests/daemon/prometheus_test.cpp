// Debian's Prometheus server scrapes a real fulcrumd on loopback; the metrics are read back
// through Prometheus' HTTP API.

#include "process_support.h"
#include "protocol/token_file.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>

using namespace fulcrum;
namespace fs = std::filesystem;
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = net::ip::tcp;

namespace {

constexpr const char* kPacedJob = R"({"name": "scraped", "seed": 3, "mode": "paced", "pace": 2,
  "data": {"source": "synthetic", "train_size": 1200, "test_size": 200, "dim": 12, "classes": 3},
  "model": {"type": "mlp", "hidden": [16]},
  "training": {"total_batch": 64, "learning_rate": 0.1, "iterations": 100000, "eval_interval": 20},
  "policy": {"type": "lbbsp-cpu", "predictor": {"type": "ema"}},
  "workers": [{"speed": 3000, "count": 3}, {"speed": 1000}]})";

std::optional<std::string> find_program(const std::string& name)
{
    for (const char* dir : { "/usr/bin", "/usr/local/bin", "/bin" })
        if (fs::exists(fs::path(dir) / name))
            return (fs::path(dir) / name).string();
    return std::nullopt;
}

unsigned short free_port()
{
    net::io_context io;
    tcp::acceptor acceptor(io, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
    return acceptor.local_endpoint().port();
}

struct HttpAnswer {
    unsigned status = 0;
    std::string body;
};

// GET http://127.0.0.1:port/target, with a bearer token if one is given; nullopt while
// nothing answers.
std::optional<HttpAnswer> http_answer(unsigned short port, const std::string& target, const std::string& token = "")
{
    try {
        net::io_context io;
        beast::tcp_stream stream(io);
        stream.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
        http::request<http::empty_body> request(http::verb::get, target, 11);
        request.set(http::field::host, "127.0.0.1");
        if (!token.empty())
            request.set(http::field::authorization, "Bearer " + token);
        http::write(stream, request);
        beast::flat_buffer buffer;
        http::response<http::string_body> response;
        http::read(stream, buffer, response);
        return HttpAnswer { response.result_int(), response.body() };
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::optional<std::string> http_get(unsigned short port, const std::string& target)
{
    const auto answer = http_answer(port, target);
    if (!answer || answer->status != 200)
        return std::nullopt;
    return answer->body;
}

// An instant query's result vector: labels and value of each series.
struct Series {
    json::object labels;
    double value = 0;
};
std::vector<Series> query(unsigned short port, const std::string& promql)
{
    std::string target = "/api/v1/query?query=";
    for (const char c : promql) {
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '_')
            target += c;
        else {
            char hex[4];
            std::snprintf(hex, sizeof hex, "%%%02X", static_cast<unsigned char>(c));
            target += hex;
        }
    }
    const auto body = http_get(port, target);
    if (!body)
        return {};
    const json::value answer = json::parse(*body);
    std::vector<Series> out;
    for (const json::value& r : answer.at("data").at("result").as_array())
        out.push_back({ r.at("metric").as_object(), std::stod(std::string(r.at("value").as_array()[1].as_string())) });
    return out;
}

} // namespace

TEST(Prometheus, ScrapesFulcrumdsMetricsWithAViewerToken)
{
    const auto prometheus = find_program("prometheus");
    if (!prometheus)
        GTEST_SKIP() << "Debian's prometheus is not installed (scripts/install-deps.sh --test-tools installs it)";
    const fs::path dir = fs::temp_directory_path() / ("fulcrum-prometheus-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "job.json") << kPacedJob;
    const pid_t daemon
        = testing_support::spawn_logged({ FULCRUM_DAEMON_BINARY, "--data-dir", (dir / "data").string(), "--listen",
                                            "127.0.0.1:0", "--no-demo", "--scenario", (dir / "job.json").string() },
            dir / "fulcrumd.log");
    const unsigned short port = testing_support::announced_port(dir / "fulcrumd.log");
    ASSERT_NE(port, 0);
    const auto viewer
        = protocol::pick_token(protocol::read_token_file(dir / "data" / "tokens"), { protocol::Role::Viewer });
    ASSERT_TRUE(viewer);
    std::ofstream(dir / "scrape-token") << *viewer << "\n";
    std::ofstream(dir / "prometheus.yml")
        << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        << "scrape_configs:\n  - job_name: fulcrumd\n    scrape_interval: 1s\n"
        << "    authorization:\n      type: Bearer\n      credentials_file: " << (dir / "scrape-token").string() << "\n"
        << "    static_configs:\n      - targets: ['127.0.0.1:" << port << "']\n";
    const unsigned short web = free_port();
    const pid_t server = testing_support::spawn_logged(
        { *prometheus, "--config.file=" + (dir / "prometheus.yml").string(),
            "--storage.tsdb.path=" + (dir / "tsdb").string(), "--web.listen-address=127.0.0.1:" + std::to_string(web) },
        dir / "prometheus.log");

    // Wait until Prometheus has scraped fulcrumd with the job running and its workers reported.
    std::vector<Series> iterations, up, batches, running, straggler;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
    while (std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        iterations = query(web, "fulcrum_job_iterations_completed");
        batches = query(web, "fulcrum_worker_batch_size_samples");
        if (!iterations.empty() && iterations[0].value > 0 && batches.size() == 4
            && !query(web, "fulcrum_job_test_accuracy_ratio").empty())
            break;
    }
    // Every query of the shipped Grafana dashboard gives data for this job (rate() needs a few scrapes).
    std::this_thread::sleep_for(std::chrono::seconds(3));
    std::ifstream dashboard_file(std::string(FULCRUM_SOURCE_DIR) + "/packaging/grafana/fulcrum-dashboard.json");
    std::stringstream dashboard_text;
    dashboard_text << dashboard_file.rdbuf();
    const json::value dashboard = json::parse(dashboard_text.str());
    std::vector<std::string> empty_panels;
    int expressions = 0;
    // Each variable's label_values(SERIES, LABEL) finds the label on the series, with the
    // tenant variable at the job's tenant.
    for (const json::value& variable : dashboard.at("templating").at("list").as_array()) {
        if (variable.at("type").as_string() != "query")
            continue;
        std::string text(variable.at("definition").as_string());
        for (std::size_t at; (at = text.find("$tenant")) != std::string::npos;)
            text.replace(at, 7, "default");
        const std::string prefix = "label_values(";
        const std::size_t comma = text.rfind(',');
        ASSERT_TRUE(text.starts_with(prefix) && comma != std::string::npos && text.back() == ')') << text;
        const std::string series = text.substr(prefix.size(), comma - prefix.size());
        std::string label = text.substr(comma + 1, text.size() - comma - 2);
        label.erase(0, label.find_first_not_of(' '));
        const auto found = query(web, series);
        EXPECT_FALSE(found.empty()) << text;
        for (const auto& sample : found)
            EXPECT_TRUE(sample.labels.contains(label)) << text;
        ++expressions;
    }
    for (const json::value& panel : dashboard.at("panels").as_array())
        for (const json::value& target : panel.at("targets").as_array()) {
            std::string expr(target.at("expr").as_string());
            for (std::size_t at; (at = expr.find("$job_id")) != std::string::npos;)
                expr.replace(at, 7, "1");
            ++expressions;
            if (query(web, expr).empty())
                empty_panels.push_back(std::string(panel.at("title").as_string()) + ": " + expr);
        }
    // Prometheus' own linter accepts the page (names, units, _total counters, HELP lines).
    const auto page = http_answer(port, "/metrics", *viewer);
    ASSERT_TRUE(page && page->status == 200);
    std::ofstream(dir / "metrics.txt") << page->body;
    const int lint = std::system(("promtool check metrics < " + (dir / "metrics.txt").string() + " > "
        + (dir / "promtool.txt").string() + " 2>&1")
                                     .c_str());
    std::ifstream lint_output(dir / "promtool.txt");
    std::stringstream lint_text;
    lint_text << lint_output.rdbuf();
    EXPECT_EQ(lint, 0) << "promtool check metrics: " << lint_text.str();
    up = query(web, R"(up{job="fulcrumd"})");
    running = query(web, R"(fulcrum_job_state{state="running"})");
    straggler = query(web, "sum(fulcrum_worker_straggler)");
    ::kill(server, SIGTERM);
    ::waitpid(server, nullptr, 0);
    ::kill(daemon, SIGTERM);
    ::waitpid(daemon, nullptr, 0);

    ASSERT_EQ(iterations.size(), 1u) << "Prometheus never stored fulcrumd's metrics; see " << dir;
    EXPECT_GT(iterations[0].value, 0);
    EXPECT_EQ(std::string(iterations[0].labels.at("job_id").as_string()), "1");
    EXPECT_EQ(std::string(iterations[0].labels.at("job").as_string()), "fulcrumd") << "the scrape job's label is kept";
    ASSERT_EQ(up.size(), 1u);
    EXPECT_EQ(up[0].value, 1) << "the scrape with the viewer token succeeded";
    ASSERT_EQ(batches.size(), 4u);
    double total = 0;
    for (const Series& s : batches)
        total += s.value;
    EXPECT_EQ(total, 64) << "the workers' batch sizes add up to the job's total batch";
    ASSERT_EQ(running.size(), 1u);
    EXPECT_EQ(running[0].value, 1);
    ASSERT_EQ(straggler.size(), 1u);
    EXPECT_EQ(straggler[0].value, 1) << "one straggler per barrier";
    EXPECT_GE(expressions, 12);
    EXPECT_TRUE(empty_panels.empty()) << "dashboard queries without data: " << ::testing::PrintToString(empty_panels);
    fs::remove_all(dir);
}

// Who may read /metrics: a token holder (the default), loopback without a token, or nobody.
TEST(Prometheus, MetricsAccessFollowsTheMetricsSetting)
{
    const fs::path dir = fs::temp_directory_path() / ("fulcrum-metrics-access-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const auto start = [&](const std::string& access) {
        const fs::path log = dir / ("fulcrumd-" + access + ".log");
        const pid_t pid
            = testing_support::spawn_logged({ FULCRUM_DAEMON_BINARY, "--data-dir", (dir / "data").string(), "--listen",
                                                "127.0.0.1:0", "--no-demo", "--metrics", access },
                log);
        return std::pair { pid, testing_support::announced_port(log) };
    };
    const auto stop = [](pid_t pid) {
        ::kill(pid, SIGTERM);
        ::waitpid(pid, nullptr, 0);
    };
    auto [token_daemon, token_port] = start("token");
    const auto viewer
        = protocol::pick_token(protocol::read_token_file(dir / "data" / "tokens"), { protocol::Role::Viewer });
    ASSERT_TRUE(viewer);
    EXPECT_EQ(http_answer(token_port, "/metrics").value_or(HttpAnswer {}).status, 401u);
    EXPECT_EQ(http_answer(token_port, "/metrics", "not-a-token-of-this-server").value_or(HttpAnswer {}).status, 401u);
    const auto with_token = http_answer(token_port, "/metrics", *viewer).value_or(HttpAnswer {});
    EXPECT_EQ(with_token.status, 200u);
    EXPECT_NE(with_token.body.find("fulcrum_daemon_clients 0"), std::string::npos) << with_token.body;
    EXPECT_EQ(http_answer(token_port, "/other", *viewer).value_or(HttpAnswer {}).status, 400u)
        << "only /metrics is served over plain HTTP";
    stop(token_daemon);

    auto [loopback_daemon, loopback_port] = start("loopback");
    EXPECT_EQ(http_answer(loopback_port, "/metrics").value_or(HttpAnswer {}).status, 200u);
    stop(loopback_daemon);

    auto [off_daemon, off_port] = start("off");
    EXPECT_EQ(http_answer(off_port, "/metrics", *viewer).value_or(HttpAnswer {}).status, 404u);
    stop(off_daemon);
    fs::remove_all(dir);
}
