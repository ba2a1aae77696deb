// fulcrum-worker: one remote worker of a fulcrumd job, on this host (docs/remote-workers.md).

#include "common/error.h"
#include "gpu/cuda_devices.h"
#include "log/log.h"
#include "protocol/server_address.h"
#include "protocol/token_file.h"
#include "worker_client/remote_worker.h"

#include <algorithm>
#include <atomic>
#include <boost/program_options.hpp>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <unistd.h>

namespace po = boost::program_options;
using namespace fulcrum;

namespace {

std::atomic<bool> g_stop { false };
extern "C" void request_stop(int)
{
    g_stop.store(true);
}

constexpr const char* kUsage = R"(Usage: fulcrum-worker [--server URL] (--job N [--worker SLOT] | --pool)
                      [--token TOKEN | --token-file FILE] [--ca-file PEM] [--name NAME] [--data DIR]
                      [--log-level LEVEL] [--log-format text|json]

Joins job N of a fulcrumd as one of its remote workers (a worker the scenario marks
"remote": true) and computes its batches on this host until the job ends: it builds the
job's data and model from the scenario fulcrumd sends, then for every task loads the
parameters, computes the gradient of a batch of the size the batch-size manager chose, and
sends it back with its own batch time, CPU share and available memory. If it exits or its
connection drops mid-iteration, or it sends nothing for fulcrumd's worker timeout (10 s by
default; it sends a heartbeat every second, whatever it computes), the job drops it from
that barrier, gives its share to the others and records a worker-lost event; started
again, it takes the free slot back.

With --pool instead of --job, it waits in fulcrumd's worker pool: under --elastic eps or
kill-restart the scheduler gives pooled workers to real-mode elastic jobs whose workers are
all remote (at their start, in growth rounds, for a lost one), takes them back (releases
for newcomers, rollbacks, the job's end), and the worker then waits for its next slot;
under --elastic static such a job starts when its whole request idles in the pool (first
come, first served) and keeps its workers to its end. It runs until stopped (SIGINT,
SIGTERM) or fulcrumd closes the connection.

The server is ws://127.0.0.1:7480 unless --server or FULCRUM_SERVER says otherwise, as
ws://HOST:PORT, wss://HOST:PORT (TLS, with --ca-file for a private CA) or HOST:PORT, as every
Fulcrum program takes it (--tls with HOST:PORT still means wss://).

The token is a worker token from fulcrumd's token file (the line 'worker TOKEN'); it is
read from --token, else the FULCRUM_TOKEN environment variable, else --token-file (the
first 'worker' line, or a file holding only the token).

What it does (joined, ready, fulcrumd's errors, its summary at the end; with debug, every
hundred batches) goes to standard error as
fulcrumd's log does: --log-format text (journald priorities under systemd) or json.
)";

std::string token_from_file(const std::string& path)
{
    const auto token = fulcrum::protocol::pick_token(
        fulcrum::protocol::read_token_file(path), { fulcrum::protocol::Role::Worker }, true);
    if (!token)
        throw fulcrum::InputError(path, "", "holds no 'worker TOKEN' line and no bare token (--token-file)");
    return *token;
}

} // namespace

int main(int argc, char** argv)
{
    worker_client::RemoteWorkerOptions o;
    std::string server, token_file, ca_file, data, device, log_level = "info", log_format = "text";
    int job = -1, worker = -1;
    char host[256] = "host";
    ::gethostname(host, sizeof host - 1);
    o.name = host;
    po::options_description visible("Options");
    visible.add_options()("help,h", "show this help")("version", "print the version and exit")("server",
        po::value(&server),
        "fulcrumd's address: ws://HOST:PORT, wss://HOST:PORT (TLS) or HOST:PORT (default $FULCRUM_SERVER or "
        "ws://127.0.0.1:7480)")("job", po::value(&job), "the job to join (its id in fulcrumd)")(
        "pool", po::bool_switch(&o.pool), "wait in fulcrumd's worker pool for the elastic scheduler to assign a job")(
        "worker", po::value(&worker), "a particular remote slot of the job (default: the first free one)")("token",
        po::value(&o.token), "a worker token")("token-file", po::value(&token_file), "a file holding the token")(
        "tls", po::bool_switch(&o.tls), "connect with TLS, as wss:// does (fulcrumd started with --tls-cert)")(
        "ca-file", po::value(&ca_file), "wss://: PEM certificates to trust (default: the system's)")(
        "name", po::value(&o.name), "this worker's name in fulcrumd's log (default: the host name)")(
        "data", po::value(&data), "the Fashion-MNIST folder on this host, if not the scenario's path")("device",
        po::value(&device)->default_value("cpu"),
        "where to compute: cpu, or cuda:N for this host's CUDA GPU N (a build with the CUDA path; docs/gpu.md)")(
        "batch-delay", po::value(&o.batch_delay_s)->default_value(0),
        "drills: answer each task this many seconds late, as an overloaded node would (the heartbeat goes on, so "
        "fulcrumd's --worker-timeout does not lose it)")("log-level", po::value(&log_level)->default_value(log_level),
        "the least level logged: debug, info, warning or error")("log-format",
        po::value(&log_format)->default_value(log_format), "the log's lines: text or json (one object a line)");
    po::variables_map vm;
    try {
        po::store(po::parse_command_line(argc, argv, visible), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        std::cerr << "fulcrum-worker: " << e.what() << "\nTry 'fulcrum-worker --help'.\n";
        return 2;
    }
    if (vm.count("help")) {
        std::cout << kUsage << "\n" << visible;
        return 0;
    }
    if (vm.count("version")) {
        std::cout << "fulcrum-worker " FULCRUM_VERSION "\n";
        return 0;
    }
    std::optional<log::Session> logging;
    try {
        logging.emplace(log::Settings { .program = "fulcrum-worker",
            .level = log::level_option("--log-level", log_level),
            .format = log::format_option("--log-format", log_format),
            .background = false,
            .to = {} });
        const protocol::ServerAddress address
            = protocol::server_address(vm.count("server") ? std::optional<std::string>(server) : std::nullopt);
        const char* from_env = std::getenv("FULCRUM_SERVER");
        const std::string given = vm.count("server") ? server : std::string(from_env ? from_env : "");
        if (o.tls && !address.tls && given.find("://") != std::string::npos) // ws:// says plain
            throw std::invalid_argument("--tls: the server is " + address.url() + " (plain); give "
                + protocol::ServerAddress { address.host, address.port, true }.url() + " for TLS");
        if (o.pool && (job >= 0 || worker >= 0))
            throw std::invalid_argument("--pool: a pooled worker is given its job and slot by fulcrumd; leave out "
                                        "--job and --worker");
        if (job < 0 && !o.pool)
            throw std::invalid_argument(
                "--job: the job's id is required (fulcrumd lists its jobs), or --pool to wait for one");
        o.host = address.host;
        o.port = address.port;
        o.tls = o.tls || address.tls;
        o.job = std::max(job, 0);
        if (worker >= 0)
            o.worker = worker;
        if (o.token.empty())
            if (const char* env = std::getenv("FULCRUM_TOKEN"))
                o.token = env;
        if (o.token.empty() && !token_file.empty())
            o.token = token_from_file(token_file);
        if (o.token.empty())
            throw std::invalid_argument("a token is required: --token, FULCRUM_TOKEN or --token-file");
        o.trusted = ca_file;
        if (!(o.batch_delay_s >= 0 && o.batch_delay_s <= 86'400))
            throw std::invalid_argument(
                "--batch-delay: expected seconds from 0 to 86400, got " + std::to_string(o.batch_delay_s));
        if (!data.empty())
            o.data = data;
        const auto parsed_device = fulcrum::perf::parse_compute_device(device);
        if (!parsed_device)
            throw std::invalid_argument("--device: expected cpu or cuda:N, got '" + device + "'");
        o.device = *parsed_device;
        if (o.device.is_cuda())
            if (const std::string why = fulcrum::gpu::absent_device_reason(o.device.index); !why.empty())
                throw std::invalid_argument("--device: " + device + " is not a CUDA device of this host: " + why);
    } catch (const std::exception& e) {
        std::cerr << "fulcrum-worker: " << e.what() << "\n";
        return 2;
    }
    std::signal(SIGINT, request_stop);
    std::signal(SIGTERM, request_stop);
    try {
        const auto summary = worker_client::run_remote_worker(o, g_stop);
        const std::initializer_list<log::Field> done { { "batches", summary.batches }, { "samples", summary.samples },
            { "compute_s", summary.compute_s }, { "ended", summary.ended } };
        if (o.pool)
            log::info("pooled: " + std::to_string(summary.assignments) + " job slots served", done);
        else
            log::info("worker " + std::to_string(summary.worker) + " done", done);
        return 0;
    } catch (const std::exception& e) {
        log::error("stopped", { { "reason", e.what() } });
        return 1;
    }
}
