// fulcrumd: the Fulcrum backend daemon. Runs jobs, records them, and serves their live
// stream and the operator's commands over a WebSocket (docs/protocol.md).

#include "access/auth.h"
#include "common/error.h"
#include "daemon/daemon.h"
#include "daemon/start_watch.h"
#include "embedded_demo_scenario.h"
#include "log/log.h"
#include "protocol/messages.h"
#include "scenario/scenario.h"
#include "server/daemon_config.h"
#include "server/ws_server.h"

#include <boost/program_options.hpp>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <malloc.h>
#include <optional>
#include <sstream>
#include <string_view>

namespace po = boost::program_options;
using namespace fulcrum;

namespace {

constexpr const char* kUsage
    = R"(Usage: fulcrumd [--config FILE] [--listen HOST:PORT] [--token-file FILE] [--data-dir DIR]
                [--tls-cert FILE --tls-key FILE] [--allow-plain] [--scenario FILE]...
                [--cluster FILE] [--placement POLICY] [--metrics token|loopback|off]
                [--elastic static|eps|kill-restart [--elastic-round-s S] [--feedback POINT]]
                [--comm none|srsf-N|ada-srsf] [--queue backfill|fifo]
                [--job-niceness N] [--log-level LEVEL] [--log-format text|json] [--auth-limit N]
       fulcrumd [--config FILE] [--token-file FILE] [--data-dir DIR] --add-token ROLE NAME [tenant=T]

The Fulcrum backend daemon. Places training jobs on the cluster's GPUs with the
scheduling module's placement policy (lwf-1 by default), records every iteration of every
worker into one run store per job (DATA_DIR/runs/job-N.db) and serves the live stream and
the operator's commands over a WebSocket (docs/protocol.md; --version names the protocol).

The cluster is servers of identical GPUs, one worker each (the file format is
fulcrum-sim's: {"servers": 16, "gpus_per_server": 4, "gpu_memory_gb": 16}; that is also
the default). A job takes one GPU per local worker with a GPU profile or a CUDA device,
per worker of a virtual-mode job and per member of an elastic job, each worker a whole GPU
unless its scenario's "placement": {"memory_gb": X} lets jobs share. The CPU workers of
paced and real-mode jobs run beside the GPUs, bounded only by --memory-budget and
--max-threads, and share no server's link; a cluster file places them on GPUs too, as
fulcrum-sim's workloads are, unless it says "cpu_workers_take_gpus": false. A job that
does not fit waits
in the queue without holding back smaller jobs behind it. Placement policies (Wang et al.,
Sec. IV): rand, ff (first fit), ls (list scheduling), lwf-K (least workload first, jobs
of more than K GPUs consolidated on the fewest servers). --queue fifo starts no job that
takes GPUs before an earlier one that waits for GPUs (strict arrival order, as the Elastic
PS paper's baselines and fulcrum-sim --elastic queue their jobs).

--elastic eps resizes running elastic jobs (scenarios with an "elastic" section and only
local workers) by the Elastic Parameter Server's rules, the ones fulcrum-sim --elastic eps
follows: an elastic job that does not fit starts with fewer workers (down to its
elastic.min_workers); a job that does not fit takes workers from elastic jobs past their
early-feedback point (--feedback fraction:F of their iterations, iterations:N, or
accuracy:A measured by their evaluations; those beyond their request first); every
--elastic-round-s seconds, while no job waits, elastic jobs in turn get one worker on an
idle GPU, up to elastic.max_workers, and a step that made a job's iterations slower over
the next 20 iterations is undone. Every change is an add-worker or remove-worker event in
the job's run store, with the scheduler as actor and its reason. --elastic kill-restart
takes the same decisions and carries each out by stopping the job at a barrier with a
checkpoint and starting it again from there (a job-restarted event says what it cost).
--elastic static (the default) keeps each job's workers where they were placed. When
the jobs it sizes all run in virtual mode, the rounds are --elastic-round-s seconds of
their shared virtual clock, and the decisions fall at the same iterations on any machine.

Live jobs on one server share its network link (the parameter servers run in fulcrumd,
so every push and pull crosses the worker's server link): --comm none (the default) lets
every transfer start at once, stretched by the scheduling paper's eq. 5 for the live jobs
on the link (a, b, eta from the cluster file). --comm srsf-N or ada-srsf schedules the
transfers of virtual-mode and paced jobs by fulcrum-sim's rules (real-mode jobs measure
theirs): before each iteration's pushes and pulls a job asks (an asp or ssp worker before
each batch's; paced jobs in wall time, among themselves); srsf-N lets at most N transfers
share a link, ada-srsf (AdaDUAL, Algorithm 3) lets a small transfer start beside one large
one when that finishes it sooner; a held transfer waits for one on its links to end, and
the held jobs then go in SRSF order (least remaining compute first). A job's status says how
many of its transfers were held and for how long (its rows' comm_s include the wait).

With no --config and no --scenario it starts the embedded demo: a paced run of four
heterogeneous workers training an MLP on Fashion-MNIST (--no-demo: it starts nothing;
the console runs it so to replay a run file from disk).

Clients authenticate with 'Authorization: Bearer TOKEN' in the WebSocket handshake. The
token file holds 'ROLE NAME TOKEN [tenant=T]' lines (viewer: streams only; operator:
streams and commands; worker: joins jobs; each within tenant T, the default tenant when the
line names none; admin: every tenant's jobs and the cluster's policies; an operator line
naming no tenant, as the last release wrote them, reaches every tenant too). NAME is who
holds the token: every command is recorded with that name ('ROLE TOKEN' lines, naming no
one, are read too). If the file does not exist it is created with one token of each role,
mode 0600, and its path is printed. --add-token ROLE NAME [tenant=T] appends a new token for
NAME, prints it and exits; deleting a line
revokes its token while fulcrumd runs (the file is read again within a second, and the
sessions opened with that token are closed). SIGINT or SIGTERM stops every job at its next barrier, flushes the recorders and
exits.

With --tls-cert and --tls-key (PEM files) the port speaks TLS only (wss://). Without them
fulcrumd serves plain WebSocket on a loopback address only: it refuses to listen on
another address unless --allow-plain says that the network is trusted (tokens and data
would cross it unencrypted).

Jobs checkpoint into their run stores (every 500 iterations and 30 s by default, and at
a clean stop). When fulcrumd starts, the jobs an earlier fulcrumd was running (it was
killed, or SIGTERM interrupted them) come back under their own ids and go on from their
checkpoints in the same runs ("resume_jobs": "manual" lists them as interrupted until an
operator's resume-job). Job ids are never reused.

Recorded runs in DATA_DIR/runs are listed and replayed over the same port (list-runs,
open-replay; docs/protocol.md).

Its log goes to standard error, one line per event of the daemon's own story: each
connection opened and closed (peer, program, role, token name, why it closed), each refused
upgrade (peer and reason, never the token), each command (actor, job, command, outcome),
each job's states and events (the scheduler's decisions with their reasons, workers joined
and lost), each internal error. --log-format text (the default) writes
'TIME [LEVEL] fulcrumd: message: key=value...', or under systemd the journal's priority
prefixes instead of the time, so journalctl -p warning shows the warnings and worse; json
writes one JSON object per line. --log-level debug adds the link and GPU sharing notes.

A source address with --auth-limit (20) failed upgrades within a minute is answered 429
(Too Many Requests) for a minute without its token being read, logged once and counted in
/metrics (an IPv6 source counts by its /64); 0 turns the limit off.

Prometheus scrapes GET /metrics on the same port (text format 0.0.4: jobs, workers,
clients, dropped frames, the scheduler's queue; docs/operations.md lists every metric).
--metrics token (the default) asks for a valid token of any role, sent as a bearer token;
--metrics loopback serves it without a token to loopback addresses only; off turns it off.

Jobs are admitted by resources: at submission fulcrumd estimates what a job will hold (its
model's parameters times the copies the servers and workers keep, the workers' batch
buffers, its data set, its threads) and refuses one that could never fit the budget
(--memory-budget, --max-threads) with the estimate; one that fits but not beside the running
jobs waits in the queue, its status saying for what. A data set is read once and shared by
the jobs that read it.

fulcrumd's threads are named for what they do (fulcrum-io, fulcrum-core, fulcrum-sched,
fulcrum-replay, fulcrum-job, fulcrum-disk), as top -H and perf show them. The jobs' and the
disk threads run --job-niceness (5) below fulcrumd's own priority, so that on a busy
machine an operator's command and the clients' streams take a core first; on a machine
shared with other users, --job-niceness 0 keeps the jobs' share against their processes.

Paths a client sends never leave fulcrumd's folders: a submitted scenario's data.path
names a data set in DATA_DIR/datasets or /usr/share/datasets (e.g. "fashion-mnist"), its
policy.predictor.warm_start_file a NARX network in DATA_DIR/models, open-replay a run
store in DATA_DIR/runs or a --runs-folder. Absolute paths, '..' and links that lead out are refused with
illegal-value and the field. Scenarios given here with --scenario may name any path.

Config file (JSON, every field optional; command-line options win):
  {"listen": "127.0.0.1:7480", "token_file": "...", "data_dir": "...",
   "cluster": "/etc/fulcrum/cluster.json", "placement": "lwf-1",
   "elastic": "static", "elastic_round_s": 60, "early_feedback": "fraction:0.1", "comm": "none",
   "queue": "backfill", "worker_timeout_s": 10, "job_niceness": 5,
   "tls_certificate": "/etc/fulcrum/cert.pem", "tls_key": "/etc/fulcrum/key.pem",
   "allow_plain": false, "scenarios": ["resources/scenarios/demo.json"],
   "datasets_folders": ["/srv/datasets"], "models_folders": ["/srv/narx"],
   "runs_folders": ["/srv/fulcrum/archive"], "resume_jobs": "auto", "metrics": "token",
   "log_level": "info", "log_format": "text", "auth_limit": 20}
  (the folders lists replace the defaults DATA_DIR/datasets + /usr/share/datasets and
   DATA_DIR/models; name the defaults too to keep them)
)";

std::string read_file(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
        throw InputError(path, "", "cannot be read");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// Why fulcrumd could not start (or, once serving, why it stopped), in the format its log was
// asked for (on the command line or in the config file read so far): a JSON log's reader
// parses every line, the last one too.
void report_failure(const std::string& log_format, std::string_view message, const std::string& input,
    const std::string& field, const std::string& reason, const std::string& plain)
{
    bool json = false;
    try {
        json = log::format_option("--log-format", log_format) == log::Format::Json;
    } catch (const InputError&) { // the format itself is what is wrong: said as text
    }
    if (!json) {
        std::cerr << plain;
        return;
    }
    try {
        const log::Session failing({ .program = "fulcrumd", .format = log::Format::Json, .to = {} });
        log::error(message, { { "input", input }, { "field", field }, { "reason", reason } });
    } catch (const std::exception&) { // no logger: said as text rather than not at all
        std::cerr << plain;
    }
}

} // namespace

int main(int argc, char** argv)
{
    server::DaemonSettings s;
    std::string config;
    po::options_description visible("Options");
    visible.add_options()("help,h", "show this help")("version", "print the version and exit")("config",
        po::value(&config), "settings file (JSON, see below)")("listen", po::value(&s.listen)->default_value(s.listen),
        "address and port to serve on; 0.0.0.0:7480 for every interface")("token-file", po::value(&s.token_file),
        "bearer tokens (default: DATA_DIR/tokens)")("data-dir", po::value(&s.data_dir)->default_value(s.data_dir),
        "where run stores and the token file go")("cluster", po::value(&s.cluster),
        "the cluster's servers and GPUs (JSON; default 16 servers x 4 GPUs of 16 GB)")("placement",
        po::value(&s.placement)->default_value(s.placement),
        "placement policy: rand, ff, ls or lwf-K")("elastic", po::value(&s.elastic)->default_value(s.elastic),
        "how running jobs' sizes change: static, eps (Elastic Parameter Server) or kill-restart")("elastic-round-s",
        po::value(&s.elastic_round_s)->default_value(s.elastic_round_s),
        "--elastic eps: seconds between growth rounds")("feedback",
        po::value(&s.early_feedback)->default_value(s.early_feedback),
        "--elastic eps: a job's early-feedback point: fraction:F, iterations:N or accuracy:A")("comm",
        po::value(&s.comm)->default_value(s.comm),
        "when live jobs' transfers start on the servers' links: none, srsf-N or ada-srsf")("queue",
        po::value(&s.queue)->default_value(s.queue),
        "the queue's order: backfill (a job that fits goes ahead of one that waits) or fifo")(
        "tls-cert", po::value(&s.tls_certificate), "serve TLS (wss://) with this PEM certificate chain")("tls-key",
        po::value(&s.tls_key), "the certificate's PEM private key")("allow-plain", po::bool_switch(&s.allow_plain),
        "serve plain WebSocket on a non-loopback address")("metrics", po::value(&s.metrics)->default_value(s.metrics),
        "who may read GET /metrics: token (any valid token), loopback (no token, loopback only) or off")(
        "memory-budget", po::value(&s.memory_budget),
        "what running jobs may hold in memory together, estimated from their scenarios (\"6G\", \"512M\"; default "
        "75% of the least of the machine's memory, its cgroup's memory.max and the process's ulimits)")("max-threads",
        po::value(&s.max_threads)->default_value(s.max_threads), "the threads running jobs may use together")(
        "job-niceness", po::value(&s.job_niceness)->default_value(s.job_niceness),
        "how far below fulcrumd's own priority the jobs' threads run (nice, 0 to 19), so that commands and "
        "streams go first on a busy machine")("worker-timeout",
        po::value(&s.worker_timeout_s)->default_value(s.worker_timeout_s),
        "seconds a remote worker (fulcrum-worker) may send nothing, heartbeats included, before it is lost: "
        "dropped from its barrier and excluded (3 to 86400; a scenario's worker_timeout_s overrides it)")("log-level",
        po::value(&s.log_level)->default_value(s.log_level), "the least level logged: debug, info, warning or error")(
        "log-format", po::value(&s.log_format)->default_value(s.log_format),
        "the log's lines: text (journald priorities under systemd) or json (one object a line)")("auth-limit",
        po::value(&s.auth_limit)->default_value(s.auth_limit),
        "failed upgrades from one address within a minute before it gets 429 for a minute (0: no limit)")(
        "scenario", po::value(&s.scenarios)->composing(), "submit this scenario at start (repeatable)")("no-demo",
        po::bool_switch(&s.no_demo),
        "start no job without a scenario: serve the recorded runs and wait for submissions")("runs-folder",
        po::value<std::vector<std::string>>()->composing(),
        "also list and replay the run stores in this folder (repeatable)")("add-token",
        po::value<std::vector<std::string>>()->multitoken(),
        "ROLE NAME [tenant=T]: append a token for NAME (admin, operator, viewer or worker; of tenant T) to the "
        "token file, print it and exit");
    po::variables_map vm;
    bool serving = false; // set once the server listens: a later failure is no failure to start
    try {
        po::store(po::parse_command_line(argc, argv, visible), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        std::cerr << "fulcrumd: " << e.what() << "\nTry 'fulcrumd --help'.\n";
        return 2;
    }
    if (vm.count("help")) {
        std::cout << kUsage << "\n" << visible;
        return 0;
    }
    if (vm.count("version")) {
        std::cout << "fulcrumd " FULCRUM_VERSION ", protocol version " << protocol::kProtocolVersion << "\n";
        return 0;
    }
    try {
        if (!config.empty()) {
            server::GivenOnCommandLine given;
            given.listen = !vm["listen"].defaulted();
            given.token_file = vm.count("token-file") > 0;
            given.data_dir = !vm["data-dir"].defaulted();
            given.cluster = vm.count("cluster") > 0;
            given.placement = !vm["placement"].defaulted();
            given.elastic = !vm["elastic"].defaulted();
            given.elastic_round_s = !vm["elastic-round-s"].defaulted();
            given.early_feedback = !vm["feedback"].defaulted();
            given.comm = !vm["comm"].defaulted();
            given.queue = !vm["queue"].defaulted();
            given.tls_certificate = vm.count("tls-cert") > 0;
            given.tls_key = vm.count("tls-key") > 0;
            given.metrics = !vm["metrics"].defaulted();
            given.memory_budget = vm.count("memory-budget") > 0;
            given.max_threads = !vm["max-threads"].defaulted();
            given.job_niceness = !vm["job-niceness"].defaulted();
            given.worker_timeout_s = !vm["worker-timeout"].defaulted();
            given.log_level = !vm["log-level"].defaulted();
            given.log_format = !vm["log-format"].defaulted();
            given.auth_limit = !vm["auth-limit"].defaulted();
            server::apply_config_file(read_file(config), config, s, given);
        }
        const log::Session logging({ .program = "fulcrumd",
            .level = log::level_option("--log-level", s.log_level),
            .format = log::format_option("--log-format", s.log_format),
            .background = true,
            .to = {} });
        if (s.auth_limit < 0)
            throw InputError("--auth-limit", "", "expected 0 (no limit) or more failed upgrades a minute");
        if (vm.count("add-token")) {
            const auto& words = vm["add-token"].as<std::vector<std::string>>();
            constexpr std::string_view kTenant = "tenant=";
            const bool tenanted = words.size() == 3 && words[2].starts_with(kTenant);
            const std::optional<protocol::Role> role
                = words.size() == 2 || tenanted ? protocol::role_named(words[0]) : std::nullopt;
            if (!role)
                throw InputError(
                    "--add-token", "", "expected ROLE NAME [tenant=T] with ROLE admin, operator, viewer or worker");
            const std::optional<std::string> tenant
                = tenanted ? std::optional(words[2].substr(kTenant.size())) : std::nullopt;
            if (s.token_file.empty())
                s.token_file = (std::filesystem::path(s.data_dir) / "tokens").string();
            std::cout << access::TokenStore::add_token(s.token_file, *role, words[1], tenant) << "\n";
            std::cerr << "fulcrumd: added a token for " << words[1] << " (" << words[0]
                      << (tenant ? ", tenant " + *tenant : std::string()) << ") to " << s.token_file
                      << " (a running fulcrumd takes it within a second)\n";
            return 0;
        }
        const server::ListenAddress address = server::check_settings(s);
        const std::string& host = address.host;

        daemon::DaemonOptions options;
        options.data_dir = s.data_dir;
        if (vm.count("runs-folder"))
            for (const std::string& folder : vm["runs-folder"].as<std::vector<std::string>>())
                s.folders.runs.emplace_back(folder);
        options.folders = s.folders;
        if (!s.cluster.empty())
            options.cluster = sched::load_cluster(s.cluster);
        else // its own default: CPU workers run beside the GPUs (a cluster file says otherwise)
            options.cluster.cpu_workers_take_gpus = false;
        options.placement = s.placement;
        server::elastic_options(s, options);
        options.comm = s.comm;
        options.queue = s.queue == "fifo" ? daemon::DaemonOptions::Queue::Fifo : daemon::DaemonOptions::Queue::Backfill;
        options.server_name = "fulcrumd " FULCRUM_VERSION;
        options.resources = server::resource_budget(s);
        options.job_niceness = server::job_niceness(s);
        if (!(s.worker_timeout_s >= scenario::kMinWorkerTimeoutS && s.worker_timeout_s <= 86'400))
            throw InputError("--worker-timeout", "",
                "expected seconds from " + std::to_string(static_cast<int>(scenario::kMinWorkerTimeoutS))
                    + " (workers send a heartbeat every second) to 86400, got " + std::to_string(s.worker_timeout_s));
        options.worker_timeout_s = s.worker_timeout_s;
        options.auth_limit = s.auth_limit;
        options.resume
            = s.resume_manual ? daemon::DaemonOptions::Resume::Manual : daemon::DaemonOptions::Resume::Automatic;
        // Buffers of 1 MiB and more (data sets, parameter copies, batches) are mapped and
        // unmapped on their own, whatever sizes came before: glibc's moving threshold would
        // keep them in the heap, where an ended job's memory stays with the process.
        ::mallopt(M_MMAP_THRESHOLD, 1 << 20);
        // Four malloc arenas, not eight per core: each reserves 64 MiB of address space, which
        // under a ulimit -v is budget the jobs cannot have (the threads allocate little).
        ::mallopt(M_ARENA_MAX, 4);
        // A job that crashes fulcrumd as it starts is marked so, and not started again.
        daemon::StartWatch::install_crash_handlers();
        daemon::Daemon d(options);
        const auto recovered = d.recover();
        for (const auto& found : recovered)
            log::info(found.job ? "job from before the restart" : "journal entry not recovered",
                { { "job", static_cast<std::int64_t>(found.job) }, { "text", found.message } });
        bool created = false;
        const access::TokenStore tokens = access::TokenStore::load_or_create(s.token_file, &created);
        if (created)
            log::info("created the token file with an operator, a viewer and a worker token",
                { { "path", s.token_file }, { "mode", "0600" } });
        else
            log::info("tokens read", { { "path", s.token_file } });
        access::warn_unconfined(tokens);

        server::ServerOptions server_options;
        server_options.host = host;
        server_options.port = address.port;
        server_options.tls_certificate = s.tls_certificate;
        server_options.tls_key = s.tls_key;
        server_options.metrics = s.metrics == "off" ? server::MetricsAccess::Off
            : s.metrics == "loopback"               ? server::MetricsAccess::Loopback
                                                    : server::MetricsAccess::Token;
        server::WebSocketServer server(d, tokens, server_options);
        if (!server.tls() && !address.loopback)
            log::warning("serving plain WebSocket off loopback (--allow-plain): tokens cross the network unencrypted",
                { { "host", host } });

        if (s.scenarios.empty() && config.empty() && !s.no_demo && recovered.empty()) {
            const JobId id = d.submit(kEmbeddedDemoScenario, "embedded demo scenario", daemon::Daemon::Origin::Local);
            log::info("no scenario given: started the embedded demo", { { "job", static_cast<std::int64_t>(id) } });
        }
        for (const std::string& path : s.scenarios) {
            const JobId id = d.submit(read_file(path), path, daemon::Daemon::Origin::Local);
            log::info("submitted", { { "path", path }, { "job", static_cast<std::int64_t>(id) } });
        }

        server.stop_on_signals([](int signal) {
            log::info("stopping: every job stops at its next safe point",
                { { "signal", signal == SIGINT ? "SIGINT" : "SIGTERM" } });
        });
        server.start();
        serving = true;
        log::info(
            std::string("serving ") + (server.tls() ? "wss://" : "ws://") + host + ":" + std::to_string(server.port()),
            { { "data_dir", s.data_dir }, { "version", FULCRUM_VERSION },
                { "protocol", static_cast<std::int64_t>(protocol::kProtocolVersion) } });
        server.wait();
        d.stop_all();
        for (const auto& job : d.jobs())
            // A job's name is a client's text: the log escapes it, so it cannot forge a line.
            log::info("job at stop",
                { { "job", static_cast<std::int64_t>(job.job) }, { "name", job.name },
                    { "state", protocol::to_string(job.state) }, { "iteration", job.iteration },
                    { "database", job.database } });
        log::info("stopped");
        return 0;
    } catch (const InputError& e) {
        report_failure(s.log_format, "cannot start", e.source(), e.field(), e.reason(),
            "fulcrumd: " + printable(e.source()) + (e.field().empty() ? "" : ": " + printable(e.field())) + ": "
                + printable(e.reason()) + "\n");
        return 2;
    } catch (const std::exception& e) {
        report_failure(s.log_format, serving ? "stopped on an error" : "cannot start", "", "", e.what(),
            "fulcrumd: " + printable(e.what()) + "\n");
        return 1;
    }
}
