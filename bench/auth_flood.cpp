// A flood of bad tokens beside a live viewer (issue 45): fulcrumd runs the paced demo job
// and a viewer reads its iteration rows over loopback; then T threads send N upgrade
// requests with random tokens from 127.0.0.2 (another client host) as fast as they are
// answered. Measures the viewer's message gaps (time between two iteration frames) before
// and during the flood, p50, p99 and max, and what the flood was answered (401, 429) and how
// fast. --auth-limit 0 turns the limit off, for the same flood checked token by token.
//
//   build/ci/bench/auth_flood [--attempts N] [--threads T] [--auth-limit L] [--before S]
//                             2>/dev/null   (fulcrumd's log lines go to standard error)

#include "access/auth.h"
#include "daemon/daemon.h"
#include "log/log.h"
#include "protocol/codec.h"
#include "sched/statistics.h"
#include "served.h"
#include "server/ws_server.h"
#include "ws_client.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>

using namespace fulcrum;
using namespace fulcrum::protocol;
using Clock = std::chrono::steady_clock;
using testing_support::WsClient;

namespace {

struct Options {
    int attempts = 10'000;
    int threads = 4;
    int auth_limit = 20;
    double before_s = 5;
};

std::string read_file(const std::filesystem::path& path)
{
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

void print_gaps(const char* phase, const std::vector<double>& gaps_ms)
{
    if (gaps_ms.empty()) {
        std::printf("%-8s no iteration frames\n", phase);
        return;
    }
    std::printf("%-8s %5zu frames  gap p50 %6.1f ms  p99 %6.1f ms  max %6.1f ms\n", phase, gaps_ms.size(),
        sched::percentile_of(gaps_ms, 0.5), sched::percentile_of(gaps_ms, 0.99), sched::percentile_of(gaps_ms, 1.0));
}

} // namespace

int run(int argc, char** argv);

int main(int argc, char** argv)
{
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "auth_flood: %s\n", e.what());
        return 1;
    }
}

int run(int argc, char** argv)
{
    Options o;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        const char* value = argv[i + 1];
        if (flag == "--attempts")
            o.attempts = std::atoi(value);
        else if (flag == "--threads")
            o.threads = std::max(1, std::atoi(value));
        else if (flag == "--auth-limit")
            o.auth_limit = std::max(0, std::atoi(value));
        else if (flag == "--before")
            o.before_s = std::atof(value);
        else {
            std::fprintf(stderr, "auth_flood: unknown option %s\n", flag.c_str());
            return 2;
        }
    }
    log::Settings logged;
    logged.program = "fulcrumd";
    logged.background = true; // as fulcrumd writes it
    const log::Session logging(logged);
    const auto dir = std::filesystem::temp_directory_path() / ("fulcrum-auth-flood-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    daemon::DaemonOptions options;
    options.data_dir = dir;
    options.auth_limit = o.auth_limit;
    testing_support::Served served(options, dir / "tokens");
    daemon::Daemon& d = served.daemon;
    const access::TokenStore& tokens = served.tokens;
    const unsigned short port = served.server.port();
    d.submit(read_file(std::filesystem::path(FULCRUM_SOURCE_DIR) / "resources/scenarios/demo.json"), "demo.json",
        daemon::Daemon::Origin::Local);

    WsClient viewer(port, tokens.token_for(Role::Viewer).value());
    viewer.send(Hello { kProtocolVersion, "viewer" });
    viewer.receive_until<Welcome>();
    Subscribe subscribe;
    subscribe.id = "v";
    subscribe.streams = { Stream::Iterations };
    viewer.request(subscribe, "v");

    std::atomic<int> phase { 0 }; // 0 before, 1 during, 2 after
    std::vector<double> gaps[2];
    std::atomic<bool> reading { true };
    std::thread reader([&] {
        Clock::time_point last {};
        while (reading.load()) {
            const ServerMessage m = viewer.receive();
            if (!std::holds_alternative<IterationRows>(m))
                continue;
            const Clock::time_point now = Clock::now();
            const int p = phase.load();
            if (last != Clock::time_point {} && p < 2)
                gaps[p].push_back(std::chrono::duration<double, std::milli>(now - last).count());
            last = now;
        }
    });
    std::this_thread::sleep_for(std::chrono::duration<double>(o.before_s));

    std::mutex answers_mutex;
    std::map<int, int> answers;
    std::atomic<int> next { 0 };
    const Clock::time_point flood_start = Clock::now();
    phase = 1;
    std::vector<std::thread> flood;
    flood.reserve(static_cast<std::size_t>(o.threads));
    for (int t = 0; t < o.threads; ++t)
        flood.emplace_back([&] {
            std::map<int, int> mine;
            for (int i; (i = next.fetch_add(1)) < o.attempts;) {
                try {
                    ++mine[testing_support::http_request(port, "guess-" + std::to_string(i), "127.0.0.2").status];
                } catch (const std::exception&) {
                    ++mine[0];
                }
            }
            std::lock_guard lock(answers_mutex);
            for (const auto& [status, n] : mine)
                answers[status] += n;
        });
    for (std::thread& t : flood)
        t.join();
    const double flood_s = std::chrono::duration<double>(Clock::now() - flood_start).count();
    phase = 2;
    reading = false;
    reader.join();

    std::printf("auth_flood: %d bad upgrades from 127.0.0.2 on %d threads, --auth-limit %d, beside a viewer of the "
                "paced demo\n",
        o.attempts, o.threads, o.auth_limit);
    std::printf("flood    %.2f s, %.0f requests/s; answers:", flood_s, o.attempts / flood_s);
    for (const auto& [status, n] : answers)
        std::printf(" %d x%d", status, n);
    std::printf("\n");
    print_gaps("before", gaps[0]);
    print_gaps("during", gaps[1]);
    served.server.stop();
    served.server.wait();
    d.stop_all();
    std::filesystem::remove_all(dir);
    return 0;
}
