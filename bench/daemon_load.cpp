// fulcrumd under load (issue 5): J jobs of W workers each (default 10 × 100 = 1,000
// workers) training paced at about 10 iterations per second in total, streamed over
// loopback WebSockets to C clients (default 10) subscribed to everything. Measures
//   - delivery latency: from the moment a job publishes an iteration's rows (taken by an
//     in-process probe client that the stream hub reaches in the same call) to the moment
//     each WebSocket client has read that frame; p50, p99, max;
//   - a stalled client's effect on training: iterations per second across the jobs in a
//     window without it and in a window of the same length with one more client that
//     subscribes to everything and never reads (the ratio is the figure);
//   - command round trip: an operator client pins and unpins a worker of each running job
//     in turn, one request every 15 ms, each a full request and reply, while the streams
//     run (in window A, and again in window C while the runs are listed); p50, p99;
//   - disk work beside the streams: in window C two operator clients ask for list-runs
//     back to back over R run stores in the runs folder (default 1,000), and the reading
//     clients' delivery latency is compared with window A's (the ratio of the p99s).
//
// The client queue is 128 frames here (fulcrumd's default is 1,024) so that the stalled
// client overflows within the window; after the window it reads what it was sent and the
// `missed` counts it gets prove it was dropping.
//
// With --elastic eps (or kill-restart) every job is elastic: W members of 3W/2 slots, on a
// cluster of J servers of 5W/4 GPUs, so the elastic scheduler grows jobs on the idle GPUs
// (a round a second) while the streams run.
//
//   build/release/bench/daemon_load [--jobs J] [--workers W] [--clients C] [--window S]
//                                   [--commands N] [--queue FRAMES] [--run-files R]
//                                   [--elastic static|eps|kill-restart] [--decode-rows]
//                                   [--job-niceness N]
//
// --job-niceness sets DaemonOptions::job_niceness (fulcrumd's --job-niceness, default 5): 0
// runs the jobs' threads at the commands' priority, for the comparison in benchmarks.md.

#include "access/auth.h"
#include "daemon/daemon.h"
#include "db/run_recorder.h"
#include "protocol/codec.h"
#include "sched/statistics.h"
#include "serve/stream_hub.h"
#include "server/ws_server.h"
#include "ws_client.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace fulcrum;
using namespace fulcrum::protocol;
using Clock = std::chrono::steady_clock;
using testing_support::WsClient;

namespace {

struct Options {
    int jobs = 10;
    int workers = 100;
    int clients = 10;
    double window_s = 20;
    int commands = 1000;
    int queue = 128; // frames a client may fall behind (fulcrumd's default is 1,024)
    int run_files = 1000;
    std::string elastic = "static";
    bool decode_rows = false; // the readers decode every frame whole, rows, workers and all
    int job_niceness = daemon::DaemonOptions {}.job_niceness; // fulcrumd's default (--job-niceness)
};

// R run stores in `folder`: one recorded with a run, two jobs' worth of rows, then copied.
void make_run_files(const std::filesystem::path& folder, int count)
{
    std::filesystem::create_directories(folder);
    const auto first = folder / "old-0.db";
    {
        db::RunRecorder recorder(first);
        db::RunInfo info;
        info.name = "old";
        info.mode = "virtual";
        const RunId run = recorder.begin_run(info);
        db::JobInfo job;
        job.name = "old";
        job.iterations = 50;
        recorder.add_job(job);
        for (std::int64_t k = 0; k < 50; ++k) {
            std::vector<IterationRecord> rows(4);
            for (WorkerId w = 0; w < 4; ++w) {
                IterationRecord& r = rows[static_cast<std::size_t>(w)];
                r.worker = w;
                r.iteration = k;
                r.end_s = 0.01;
                r.batch_size = 16;
            }
            recorder.record_iterations(rows);
        }
        recorder.finish_run("finished", "{}");
        (void)run;
    }
    for (int i = 1; i < count; ++i)
        std::filesystem::copy_file(first, folder / ("old-" + std::to_string(i) + ".db"));
}

// A job of `workers` equal CPU workers on a small synthetic problem. The network model
// charges each pull and push for a 1 MB model at 10 Gbit/s; with 8 samples per worker at
// 800 samples/s an iteration takes about 12 ms of virtual time, so pace 0.0125 gives about
// one iteration per wall second per job.
std::string load_scenario_text(int index, int workers, bool elastic)
{
    const int slots = elastic ? workers + workers / 2 : workers;
    const std::string section = elastic ? R"(, "elastic": {"initial_workers": )" + std::to_string(workers)
            + R"(, "min_workers": 1, "max_workers": )" + std::to_string(slots) + "}"
                                        : std::string();
    return R"({"name": "load-)" + std::to_string(index) + R"(", "seed": )" + std::to_string(index + 1) + R"(,
      "mode": "paced", "pace": 0.0125, "threads": 1,
      "data": {"source": "synthetic", "train_size": 4000, "test_size": 200, "dim": 16, "classes": 4},
      "model": {"type": "softmax"},
      "training": {"total_batch": )"
        + std::to_string(8 * workers)
        + R"(, "learning_rate": 0.05, "iterations": 100000, "eval_interval": 100000, "comm_model_mb": 1},
      "policy": {"type": "uniform"},
      "workers": [{"count": )"
        + std::to_string(slots) + R"(, "speed": 800, "bandwidth_gbps": 10}])" + section + "}";
}

using Key = std::pair<JobId, std::int64_t>;

// The job and iteration of a rows frame, read from its head ({"type":"iterations","job":J,
// "iteration":K,"rows":[...]}); nothing for another frame or another layout. The readers
// share the machine's cores with fulcrumd: decoding every row of every frame (W rows a frame,
// J frames an iteration, C readers) costs more CPU than fulcrumd's own streaming, and on two
// cores that CPU is what the command and delivery tails measured (--decode-rows measures so).
std::optional<Key> rows_key(std::string_view frame)
{
    const auto number = [&](std::string_view prefix) -> std::optional<std::int64_t> {
        if (frame.substr(0, prefix.size()) != prefix)
            return std::nullopt;
        frame.remove_prefix(prefix.size());
        std::int64_t value = 0;
        const auto [end, error] = std::from_chars(frame.data(), frame.data() + frame.size(), value);
        if (error != std::errc())
            return std::nullopt;
        frame.remove_prefix(static_cast<std::size_t>(end - frame.data()));
        return value;
    };
    const std::optional<std::int64_t> job = number(R"({"type":"iterations","job":)");
    const std::optional<std::int64_t> iteration = job ? number(R"(,"iteration":)") : std::nullopt;
    if (!iteration)
        return std::nullopt;
    return Key { static_cast<JobId>(*job), *iteration };
}

// A frame telling its client what it missed ({"type":"missed",...}), the one kind besides the
// rows whose content the figures need. Every other frame (the 500 workers' states of each job
// at each iteration, statuses, events) is read off the socket and not decoded: decoded by 10
// readers in fulcrumd's process they were 43 % of its CPU (`perf record --call-graph dwarf`
// over window A), measuring the readers rather than fulcrumd.
bool is_missed(std::string_view frame)
{
    return frame.starts_with(R"({"type":"missed")");
}

// When each iteration's rows were published: the hub queues a frame for this in-process
// client in the publishing call, and its wake callback takes the frame at once.
class PublishProbe {
public:
    explicit PublishProbe(daemon::Daemon& d)
        : client_(d.connect(Role::Viewer, "probe"))
    {
        d.receive(*client_, encode(ClientMessage { Hello { kProtocolVersion, "probe" } }));
        d.receive(*client_, encode(ClientMessage { Subscribe { "probe", { Stream::Iterations }, std::nullopt, {} } }));
        while (client_->queue().pop()) { }
        client_->set_wake([this] { take(); });
    }
    ~PublishProbe() { client_->set_wake({}); }

    void take()
    {
        const auto now = Clock::now();
        while (auto frame = client_->queue().pop()) {
            std::lock_guard lock(mutex_);
            frames_.push_back({ *frame, now });
        }
    }

    // Decoded after the run, off the publishing path.
    std::map<Key, Clock::time_point> published() const
    {
        std::lock_guard lock(mutex_);
        std::map<Key, Clock::time_point> out;
        for (const auto& [frame, at] : frames_) {
            const auto decoded = decode_server(*frame);
            if (const auto* rows = decoded ? std::get_if<IterationRows>(&*decoded.message) : nullptr)
                out.emplace(Key { rows->job, rows->iteration }, at);
        }
        return out;
    }

private:
    std::shared_ptr<serve::Client> client_;
    mutable std::mutex mutex_;
    std::vector<std::pair<serve::Frame, Clock::time_point>> frames_;
};

// A WebSocket client that reads everything and notes when each iteration's frame arrived.
struct StreamReader {
    std::vector<std::pair<Key, Clock::time_point>> arrivals;
    std::int64_t missed = 0;
    std::thread thread;
};

std::int64_t count_between(
    const std::map<Key, Clock::time_point>& published, Clock::time_point from, Clock::time_point to)
{
    return std::count_if(
        published.begin(), published.end(), [&](const auto& p) { return p.second >= from && p.second < to; });
}

} // namespace

int main(int argc, char** argv)
{
    Options o;
    for (int i = 1; i < argc; ++i) {
        const auto value = [&](const char* flag) -> const char* {
            if (std::strcmp(argv[i], flag) != 0 || i + 1 >= argc)
                return nullptr;
            return argv[++i];
        };
        if (const char* v = value("--jobs"))
            o.jobs = std::atoi(v);
        else if (const char* v2 = value("--workers"))
            o.workers = std::atoi(v2);
        else if (const char* v3 = value("--clients"))
            o.clients = std::atoi(v3);
        else if (const char* v4 = value("--window"))
            o.window_s = std::atof(v4);
        else if (const char* v5 = value("--commands"))
            o.commands = std::atoi(v5);
        else if (const char* v6 = value("--queue"))
            o.queue = std::atoi(v6);
        else if (const char* v7 = value("--run-files"))
            o.run_files = std::atoi(v7);
        else if (const char* v8 = value("--elastic"))
            o.elastic = v8;
        else if (const char* v9 = value("--job-niceness"))
            o.job_niceness = std::atoi(v9);
        else if (std::strcmp(argv[i], "--decode-rows") == 0)
            o.decode_rows = true;
        else {
            std::fprintf(stderr,
                "usage: daemon_load [--jobs J] [--workers W] [--clients C] [--window SECONDS] [--commands N] [--queue "
                "FRAMES] [--run-files R] [--elastic static|eps|kill-restart] [--decode-rows] [--job-niceness N]\n");
            return 2;
        }
    }
    if (o.jobs < 1 || o.workers < 1 || o.clients < 1 || !(o.window_s > 0) || o.commands < 1 || o.queue < 2
        || o.job_niceness < 0 || o.job_niceness > 19) {
        std::fprintf(stderr, "daemon_load: every count must be at least 1 and the window positive\n");
        return 2;
    }

    const auto dir = std::filesystem::temp_directory_path() / ("fulcrum-load-" + std::to_string(::getpid()));
    std::fprintf(stderr, "daemon_load: writing %d run stores\n", o.run_files);
    make_run_files(dir / "runs", o.run_files);
    daemon::DaemonOptions options;
    options.data_dir = dir;
    const auto policy = sched::parse_elastic_policy(o.elastic);
    if (!policy) {
        std::fprintf(stderr, "daemon_load: --elastic is static, eps or kill-restart\n");
        return 2;
    }
    const bool elastic = *policy != sched::ElasticPolicy::StaticFifo;
    options.cluster.servers = o.jobs;
    options.cluster.gpus_per_server = elastic ? o.workers + o.workers / 4 : o.workers;
    options.elastic.policy = *policy;
    options.elastic.round_s = 1;
    options.client_queue = static_cast<std::size_t>(o.queue);
    options.job_niceness = o.job_niceness;
    daemon::Daemon d(options);
    const auto tokens = access::TokenStore::load_or_create(dir / "tokens");
    server::ServerOptions server_options;
    server_options.port = 0;
    server::WebSocketServer server(d, tokens, server_options);
    server.start();
    const std::string viewer_token = *tokens.token_for(Role::Viewer);
    const std::string operator_token = *tokens.token_for(Role::Operator);

    PublishProbe probe(d);
    std::atomic<bool> done { false };
    std::vector<std::unique_ptr<StreamReader>> readers;
    for (int c = 0; c < o.clients; ++c) {
        auto reader = std::make_unique<StreamReader>();
        auto client = std::make_shared<WsClient>(server.port(), viewer_token);
        client->send(Hello { kProtocolVersion, "reader" });
        client->receive_until<Welcome>();
        client->request(Subscribe { "all", {}, std::nullopt, {} }, "all");
        reader->thread = std::thread([client, r = reader.get(), &done, decode_rows = o.decode_rows] {
            namespace beast = boost::beast;
            try {
                // One buffer for every frame, read in place, as fulcrum's own clients keep theirs
                // (ws_client::BlockingConnection): a new 150 KB buffer and a copy of each frame
                // would make the readers' allocations, not fulcrumd, what the machine spends on.
                beast::flat_buffer buffer;
                while (!done.load()) {
                    buffer.consume(buffer.size());
                    client->stream().read(buffer);
                    const auto at = Clock::now();
                    const std::string_view frame(static_cast<const char*>(buffer.data().data()), buffer.size());
                    if (const std::optional<Key> key = decode_rows ? std::nullopt : rows_key(frame)) {
                        r->arrivals.push_back({ *key, at });
                        continue;
                    }
                    // A console on another machine decodes the workers' states; here they would
                    // be the readers' CPU on fulcrumd's cores. Only what the figures need is read.
                    if (!decode_rows && !is_missed(frame))
                        continue;
                    const auto decoded = decode_server(frame);
                    if (!decoded)
                        continue;
                    if (const auto* rows = std::get_if<IterationRows>(&*decoded.message))
                        r->arrivals.push_back({ { rows->job, rows->iteration }, at });
                    else if (const auto* m = std::get_if<Missed>(&*decoded.message))
                        r->missed += m->dropped;
                }
            } catch (const std::exception&) {
                // the server closed at the end
            }
        });
        readers.push_back(std::move(reader));
    }

    std::vector<JobId> jobs;
    for (int j = 0; j < o.jobs; ++j)
        jobs.push_back(d.submit(load_scenario_text(j, o.workers, elastic), "load job " + std::to_string(j)));
    std::fprintf(
        stderr, "daemon_load: %d jobs x %d workers, %d clients; warming up 5 s\n", o.jobs, o.workers, o.clients);
    std::this_thread::sleep_for(std::chrono::seconds(5));

    // Window A: every client reads. The operator's commands run in it.
    std::fprintf(
        stderr, "daemon_load: window A (%.0f s): every client reads, %d operator commands\n", o.window_s, o.commands);
    // The operator's pins and unpins, one every 15 ms until `deadline`: their round trips.
    const auto run_commands = [&](Clock::time_point deadline, const std::string& prefix, std::vector<double>& rtt) {
        WsClient op(server.port(), operator_token);
        op.send(Hello { kProtocolVersion, "operator" });
        op.receive_until<Welcome>();
        for (int k = 0; k < o.commands && Clock::now() < deadline; ++k) {
            const std::string id = prefix + std::to_string(k);
            const WorkerAction action = k % 2 == 0 ? WorkerAction::Pin : WorkerAction::Unpin;
            const auto t0 = Clock::now();
            // Spread over the jobs, so no job gets a burst of override events at one barrier.
            const JobId job = jobs[static_cast<std::size_t>(k / 2) % jobs.size()];
            const Reply reply = op.request(WorkerCommand { id, action, job, 0, 4, std::nullopt, 1 }, id);
            rtt.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
            if (reply.error) {
                std::fprintf(stderr, "daemon_load: command %s refused: %s\n", id.c_str(), reply.error->message.c_str());
                std::exit(1);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(15));
        }
        std::this_thread::sleep_until(deadline);
    };
    const auto a_start = Clock::now();
    std::vector<double> rtt_ms;
    run_commands(
        a_start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.window_s)), "c", rtt_ms);
    const auto a_end = Clock::now();

    // Window C: two operator clients list the runs folder back to back.
    std::fprintf(stderr,
        "daemon_load: window C (%.0f s): list-runs over %d run stores, back to back from two clients\n", o.window_s,
        o.run_files);
    std::vector<double> list_ms;
    std::vector<double> rtt_listing_ms;
    std::mutex list_mutex;
    const auto c_start = Clock::now();
    {
        const auto c_deadline
            = c_start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.window_s));
        std::vector<std::thread> listers;
        for (int l = 0; l < 2; ++l)
            listers.emplace_back([&, l] {
                WsClient op(server.port(), operator_token);
                op.send(Hello { kProtocolVersion, "lister" });
                op.receive_until<Welcome>();
                for (int k = 0; Clock::now() < c_deadline; ++k) {
                    const std::string id = "l" + std::to_string(l) + "-" + std::to_string(k);
                    const auto t0 = Clock::now();
                    const Reply reply = op.request(ListRuns { id }, id);
                    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
                    std::lock_guard lock(list_mutex);
                    list_ms.push_back(ms);
                    if (reply.runs.size() < static_cast<std::size_t>(o.run_files))
                        std::fprintf(stderr, "daemon_load: list-runs listed %zu runs\n", reply.runs.size());
                }
            });
        // The commands again, while the listings keep the disk threads busy.
        listers.emplace_back([&] { run_commands(c_deadline, "d", rtt_listing_ms); });
        for (auto& t : listers)
            t.join();
    }
    const auto c_end = Clock::now();

    // Window B: one more client subscribes to everything and never reads.
    std::fprintf(stderr, "daemon_load: window B (%.0f s): a stalled client joins\n", o.window_s);
    WsClient stalled(server.port(), viewer_token, {}, 4096);
    stalled.send(Hello { kProtocolVersion, "stalled" });
    stalled.receive_until<Welcome>();
    stalled.request(Subscribe { "all", {}, std::nullopt, {} }, "all");
    const auto b_start = Clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(o.window_s));
    const auto b_end = Clock::now();
    // The stalled client wakes up.
    std::fprintf(stderr, "daemon_load: the stalled client reads its backlog\n");
    // It asks for the job list: the reply queues behind its backlog, so reading up to it
    // reads the whole backlog, with `missed` on the way if its queue overflowed.
    Missed stalled_missed;
    bool stalled_overflowed = false;
    stalled.send(Unsubscribe { "all" });
    stalled.send(ListJobs { "caught-up" });
    for (;;) {
        ServerMessage m = stalled.receive();
        if (const auto* lost = std::get_if<Missed>(&m)) {
            stalled_missed = *lost;
            stalled_overflowed = true;
        }
        if (const auto* reply = std::get_if<Reply>(&m); reply && reply->id == "caught-up")
            break;
    }

    done = true;
    server.stop();
    server.wait();
    for (auto& r : readers)
        r->thread.join();
    const ClusterState end_cluster = d.cluster(); // before the jobs stop and give their GPUs back
    d.stop_all();

    const auto published = probe.published();
    std::vector<double> latency_a, latency_b, latency_c;
    std::int64_t missed = 0;
    for (const auto& r : readers) {
        missed += r->missed;
        for (const auto& [key, at] : r->arrivals) {
            const auto it = published.find(key);
            if (it == published.end())
                continue;
            const double ms = std::chrono::duration<double, std::milli>(at - it->second).count();
            if (it->second >= a_start && it->second < a_end)
                latency_a.push_back(ms);
            else if (it->second >= b_start && it->second < b_end)
                latency_b.push_back(ms);
            else if (it->second >= c_start && it->second < c_end)
                latency_c.push_back(ms);
        }
    }
    const double seconds_a = std::chrono::duration<double>(a_end - a_start).count();
    const double seconds_b = std::chrono::duration<double>(b_end - b_start).count();
    const double rate_a = static_cast<double>(count_between(published, a_start, a_end)) / seconds_a;
    const double rate_b = static_cast<double>(count_between(published, b_start, b_end)) / seconds_b;

    std::printf("workers: %d (%d jobs x %d), clients: %d, windows: %.1f s each\n", o.jobs * o.workers, o.jobs,
        o.workers, o.clients, o.window_s);
    if (elastic) {
        const auto busy = std::count_if(
            end_cluster.gpus.begin(), end_cluster.gpus.end(), [](const GpuUsage& g) { return !g.jobs.empty(); });
        std::printf("elastic %s: %td of %zu GPUs busy at the end (%d at the start)\n", o.elastic.c_str(), busy,
            end_cluster.gpus.size(), o.jobs * o.workers);
    }
    std::printf("training: %.2f iterations/s (%.0f worker rows/s) without a stalled client, %.2f with one: ratio %.4f "
                "(%+.2f %%)\n",
        rate_a, rate_a * o.workers, rate_b, rate_b / rate_a, 100.0 * (rate_b / rate_a - 1));
    std::printf("delivery latency, reading clients, window A: p50 %.2f ms, p99 %.2f ms, max %.2f ms (%zu deliveries)\n",
        sched::percentile_of(latency_a, 0.5), sched::percentile_of(latency_a, 0.99),
        sched::percentile_of(latency_a, 1.0), latency_a.size());
    std::printf("delivery latency, reading clients, window B (stalled client present): p50 %.2f ms, p99 %.2f ms, max "
                "%.2f ms (%zu deliveries)\n",
        sched::percentile_of(latency_b, 0.5), sched::percentile_of(latency_b, 0.99),
        sched::percentile_of(latency_b, 1.0), latency_b.size());
    std::printf("command round trip (pin/unpin, %zu commands): p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", rtt_ms.size(),
        sched::percentile_of(rtt_ms, 0.5), sched::percentile_of(rtt_ms, 0.99), sched::percentile_of(rtt_ms, 1.0));
    std::printf("command round trip during the listings (window C, %zu commands): p50 %.3f ms, p99 %.3f ms, max %.3f "
                "ms\n",
        rtt_listing_ms.size(), sched::percentile_of(rtt_listing_ms, 0.5), sched::percentile_of(rtt_listing_ms, 0.99),
        sched::percentile_of(rtt_listing_ms, 1.0));
    std::printf("delivery latency, reading clients, window C (list-runs over %d stores, %zu requests, each p50 %.0f "
                "ms): p50 %.2f ms, "
                "p99 %.2f ms, max %.2f ms (%zu deliveries); p99 against window A: x%.2f\n",
        o.run_files, list_ms.size(), sched::percentile_of(list_ms, 0.5), sched::percentile_of(latency_c, 0.5),
        sched::percentile_of(latency_c, 0.99), sched::percentile_of(latency_c, 1.0), latency_c.size(),
        sched::percentile_of(latency_c, 0.99) / sched::percentile_of(latency_a, 0.99));
    if (stalled_overflowed)
        std::printf("rows the reading clients missed: %lld; the stalled client was told it missed %lld frames "
                    "(dropped) and %lld "
                    "state updates (coalesced)\n",
            static_cast<long long>(missed), static_cast<long long>(stalled_missed.dropped),
            static_cast<long long>(stalled_missed.coalesced));
    else
        std::printf("rows the reading clients missed: %lld; the stalled client's queue never overflowed (the socket "
                    "buffers held "
                    "its backlog): use a longer --window or a smaller --queue to exercise dropping\n",
            static_cast<long long>(missed));
    std::filesystem::remove_all(dir);
    const bool met = sched::percentile_of(latency_a, 0.99) < 100 && sched::percentile_of(latency_b, 0.99) < 100
        && std::abs(rate_b / rate_a - 1) < 0.01 && sched::percentile_of(rtt_ms, 0.99) < 5
        && sched::percentile_of(rtt_listing_ms, 0.99) < 5;
    std::printf("targets (p99 delivery < 100 ms, stalled client < 1 %%, command p99 < 5 ms, also while listing): %s\n",
        met ? "met" : "NOT met");
    return 0;
}
