// fulcrumctl: fulcrumd from a terminal. Lists, submits and steers jobs, watches a job's
// workers live, and exports recorded runs as CSV.

#include "common/error.h"
#include "ctl/ctl_client.h"
#include "ctl/redraw_pacer.h"
#include "ctl/run_export.h"
#include "ctl/worker_table.h"
#include "ctl/workload_file.h"
#include "log/log.h"
#include "protocol/codec.h"

#include <boost/program_options.hpp>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <unistd.h>

namespace po = boost::program_options;
using namespace fulcrum;
using namespace fulcrum::protocol;
using ctl::CtlError;

namespace {

constexpr const char* kUsage
    = R"(Usage: fulcrumctl [--server URL] [--token-file FILE] [--ca-file FILE] [--json] COMMAND ...

Commands:
  jobs                          the jobs your token's tenants own: tenant, state, iteration, sync, policy
  runs                          the recorded runs the daemon serves (your token's tenants')
  tenants                       each tenant's GPU quota, whether it borrows and at what weight,
                                the GPUs its jobs hold and have borrowed, its running and queued
                                jobs (fulcrumd --cluster's tenants section)
  submit SCENARIO               submit a scenario file (docs/scenarios.md) as a new job
  submit-workload FILE.csv      virtual-mode jobs that arrive on fulcrumd's virtual clock: a CSV
                                'scenario,arrival_s' (scenario files relative to FILE's folder,
                                arrivals in seconds from now on that clock); `jobs` then shows
                                each job's completion time on that clock
  pause JOB | resume JOB | cancel JOB
  freeze JOB | unfreeze JOB     keep an elastic job's size from fulcrumd --elastic eps (or let it go)
  set-placement POLICY          the cluster's placement policy for jobs placed from now on:
                                rand, ff, ls or lwf-K
  set-elastic POLICY            the cluster's elastic policy from now on: static, eps or kill-restart
  set-comm POLICY               when live jobs' transfers start on the servers' links, from their
                                next iteration: none, srsf-N or ada-srsf
  pin JOB WORKER BATCH          fix a worker's batch size from the next barrier on
  unpin JOB WORKER
  exclude JOB WORKER [--for S]  take a worker out of the barrier (for S seconds of run clock)
  include JOB WORKER
  set-policy JOB SPEC           the job's batch-size policy: a name (lbbsp-cpu) or the
                                scenario's policy section as JSON ('{"type": "fixed", ...}')
  resize JOB ACTION [WORKER]    an elastic job's resize between iterations: add-worker,
                                remove-worker (WORKER: which slot), add-server, remove-server
  watch [JOB] [--count N]       a live table of the job's workers, redrawn when it changes, at
                                most --refresh-hz times a second (default: the newest running
                                job); ends with the job, or after N iterations
  export RUN.db --csv DIR [--run N]
                                write a run store's iterations, evaluations and events as CSV
  export STORE:RUN --csv DIR    the same for a run fulcrumd serves (as `runs` lists it,
                                e.g. job-1.db:1), fetched by replaying it at full speed

The server is ws://127.0.0.1:7480 unless --server or FULCRUM_SERVER says otherwise, as
ws://HOST:PORT, wss://HOST:PORT (TLS, with --ca-file for a private CA) or HOST:PORT, as every
Fulcrum program takes it. The token comes from --token-file (fulcrumd's
token file: its operator token, else its viewer token; or a file holding one token) or
from FULCRUM_TOKEN. Commands that change a job need an operator token.

--json prints the server's reply as docs/protocol.md shows it (watch: one message a line;
tenants: the cluster message; export: a summary object).

Exit status: 0 done, 1 failed, 2 bad input (arguments, files), 3 refused by the server
(token, or a request it turned down: the reason is printed), 4 fulcrumd unreachable.
)";

struct Args {
    std::vector<std::string> words;
    ctl::ClientOptions client;
    std::optional<std::filesystem::path> token_file;
    bool json = false;
    std::optional<double> for_s;
    std::optional<std::string> csv_dir;
    std::optional<RunId> run;
    std::optional<std::int64_t> count;
    double refresh_hz = 2;
};

template <typename T> T number(const std::string& text, const char* what)
{
    T value {};
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size())
        throw CtlError(ctl::kBadInput, std::string(what) + ": expected a number, got '" + text + "'");
    return value;
}

void need(const Args& a, std::size_t words, const char* usage)
{
    if (a.words.size() != words)
        throw CtlError(ctl::kBadInput, std::string("usage: fulcrumctl ") + usage);
}

std::string read_file(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
        throw CtlError(ctl::kBadInput, path + ": cannot open the scenario file");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

void print_reply(const Args& a, const Reply& reply, const std::string& text)
{
    if (a.json)
        std::cout << encode(ServerMessage { reply }) << "\n";
    else
        std::cout << text;
}

std::string jobs_text(const std::vector<JobStatus>& jobs)
{
    if (jobs.empty())
        return "no jobs\n";
    std::string out;
    char line[512];
    std::snprintf(line, sizeof line, "%4s  %-22s %-10s %-11s %13s %-12s %-10s %-8s %8s %9s\n", "job", "name", "tenant",
        "state", "iteration", "sync", "policy", "mode", "accuracy", "jct (s)");
    out += line;
    for (const JobStatus& j : jobs) {
        const std::string iterations = std::to_string(j.iteration) + "/" + std::to_string(j.iterations);
        const std::string accuracy = j.accuracy ? std::to_string(*j.accuracy).substr(0, 5) : "-";
        // A virtual-mode job's completion time on fulcrumd's clock, from its arrival.
        char jct[32] = "-";
        if (j.daemon_clock && j.daemon_clock->finish_s)
            std::snprintf(jct, sizeof jct, "%.1f", *j.daemon_clock->finish_s - j.daemon_clock->arrival_s);
        std::snprintf(line, sizeof line, "%4lld  %-22s %-10s %-11s %13s %-12s %-10s %-8s %8s %9s%s\n",
            static_cast<long long>(j.job), j.name.c_str(), j.tenant.c_str(), std::string(to_string(j.state)).c_str(),
            iterations.c_str(), j.sync_model.c_str(), j.policy.c_str(), j.mode.c_str(), accuracy.c_str(), jct,
            j.message.empty() ? "" : ("  " + j.message).c_str());
        out += line;
    }
    return out;
}

std::string tenants_text(const ClusterState& cluster)
{
    if (cluster.tenants.empty())
        return "no tenants' quotas: fulcrumd's cluster file has no tenants section (docs/operations.md, "
               "\"Tenants\"); every job shares the whole cluster\n";
    std::string out;
    char line[512];
    std::snprintf(line, sizeof line, "%-16s %6s %-13s %6s %9s %8s %8s\n", "tenant", "quota", "borrows", "held",
        "borrowed", "running", "queued");
    out += line;
    for (const TenantUsage& t : cluster.tenants) {
        char borrows[32] = "no";
        if (t.borrow)
            std::snprintf(borrows, sizeof borrows, "weight %g", t.weight);
        std::snprintf(line, sizeof line, "%-16s %6d %-13s %6d %9d %8d %8d%s\n", t.tenant.c_str(), t.quota_gpus, borrows,
            t.held_gpus, t.borrowed_gpus, t.running, t.queued, t.named ? "" : "  (not in the cluster file)");
        out += line;
    }
    out += "GPUs; rigid borrowers " + cluster.rigid_borrowers + " when an owner needs their GPUs back\n";
    return out;
}

// The cluster's state, as the snapshot of a cluster subscription sends it first.
ClusterState cluster_of(ctl::CtlClient& client, const Args& a)
{
    client.request(Subscribe { {}, { Stream::Cluster }, std::nullopt, {} });
    for (;;) {
        const auto message = client.next(std::nullopt, nullptr);
        if (!message)
            throw CtlError(ctl::kUnreachable, "fulcrumd closed the connection");
        if (const auto* update = std::get_if<ClusterUpdate>(&*message)) {
            if (a.json)
                std::cout << encode(*message) << std::endl;
            return update->cluster;
        }
    }
}

std::string workload_text(const std::vector<JobStatus>& jobs)
{
    std::ostringstream out;
    out << "submitted " << jobs.size() << (jobs.size() == 1 ? " job" : " jobs")
        << " arriving on fulcrumd's virtual clock:";
    for (const JobStatus& j : jobs)
        out << " " << j.job << " (t=" << (j.daemon_clock ? j.daemon_clock->arrival_s : 0) << " s)";
    out << "\n";
    return out.str();
}

std::string runs_text(const std::vector<RunListing>& runs)
{
    if (runs.empty())
        return "no recorded runs\n";
    std::string out;
    char line[512];
    std::snprintf(line, sizeof line, "%-24s %4s  %-22s %-10s %-8s %-11s %10s  %s\n", "store", "run", "name", "tenant",
        "mode", "status", "iterations", "started");
    out += line;
    for (const RunListing& r : runs) {
        std::snprintf(line, sizeof line, "%-24s %4lld  %-22s %-10s %-8s %-11s %10lld  %s\n", r.database.c_str(),
            static_cast<long long>(r.run), r.name.c_str(), r.tenant.c_str(), r.mode.c_str(), r.status.c_str(),
            static_cast<long long>(r.iterations), r.started_at.c_str());
        out += line;
    }
    return out;
}

// A policy given by name becomes the section {"type": NAME}; JSON passes as it is.
std::string policy_spec(const std::string& spec)
{
    if (!spec.empty() && spec.front() == '{')
        return spec;
    for (const char c : spec)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'))
            throw CtlError(ctl::kBadInput, "set-policy: expected a policy name or a JSON object, got '" + spec + "'");
    return R"({"type": ")" + spec + R"("})";
}

JobId newest_running(ctl::CtlClient& client)
{
    const Reply reply = client.request(ListJobs {});
    for (auto it = reply.jobs.rbegin(); it != reply.jobs.rend(); ++it)
        if (it->state == JobState::Running || it->state == JobState::Paused)
            return it->job;
    throw CtlError(ctl::kBadInput, "watch: no job is running; give a JOB (fulcrumctl jobs lists them)");
}

int watch(const Args& a, ctl::CtlClient& client)
{
    if (a.words.size() > 2)
        throw CtlError(ctl::kBadInput, "usage: fulcrumctl watch [JOB] [--count N]");
    const JobId job = a.words.size() == 2 ? number<JobId>(a.words[1], "JOB") : newest_running(client);
    client.request(Subscribe { {}, { Stream::Iterations, Stream::Jobs, Stream::Workers }, job, {} });
    ctl::WatchTable table(job);
    const bool redraw = !a.json && ::isatty(STDOUT_FILENO);
    // A 256-worker job's table changes many times a second: drawn at most --refresh-hz times,
    // only when its text changed (a change held back is drawn when its turn comes).
    ctl::RedrawPacer pacer(std::chrono::duration_cast<ctl::RedrawPacer::Clock::duration>(
        std::chrono::duration<double>(1.0 / a.refresh_hz)));
    for (;;) {
        bool timed_out = false;
        const auto message = client.next(a.json ? std::nullopt : pacer.next_due(), &timed_out);
        if (!message && !timed_out)
            throw CtlError(ctl::kUnreachable, "fulcrumd closed the connection");
        if (message && table.apply(*message) && a.json)
            std::cout << encode(*message) << std::endl;
        const bool done = table.ended() || (a.count && table.iterations_seen() >= *a.count);
        if (!a.json) {
            const std::string text = table.render();
            if (pacer.offer(ctl::RedrawPacer::Clock::now(), text, done)) {
                if (redraw)
                    std::cout << "\x1b[H\x1b[2J";
                std::cout << text << (redraw ? "" : "\n") << std::flush;
            }
        }
        if (done)
            return ctl::kOk;
    }
}

int run_command(const Args& a)
{
    const std::string& command = a.words.at(0);
    if (command == "export") {
        need(a, 2, "export RUN.db|STORE:RUN --csv DIR [--run N]");
        if (!a.csv_dir)
            throw CtlError(ctl::kBadInput, "export: give --csv DIR, the folder for the CSV files");
        try {
            const std::string& what = a.words[1];
            const auto colon = what.rfind(':');
            ctl::ExportSummary s;
            if (std::filesystem::exists(what) || colon == std::string::npos) {
                s = ctl::export_run_store(what, a.run, *a.csv_dir);
            } else { // a run fulcrumd serves, as `runs` lists it: STORE:RUN
                const RunId run = number<RunId>(what.substr(colon + 1), "export: RUN of STORE:RUN");
                ctl::ClientOptions options = a.client;
                options.token = ctl::resolve_token(a.token_file);
                ctl::CtlClient client(options);
                s = ctl::export_served_run(client, what.substr(0, colon), run, *a.csv_dir);
            }
            if (a.json)
                std::cout << R"({"runs":)" << s.runs << R"(,"iteration_rows":)" << s.iteration_rows
                          << R"(,"evaluations":)" << s.evaluations << R"(,"events":)" << s.events << "}\n";
            else
                std::cout << "exported " << s.runs << " run(s) to " << s.folder.string() << ": " << s.iteration_rows
                          << " iteration rows, " << s.evaluations << " evaluations, " << s.events << " events\n";
            return ctl::kOk;
        } catch (const InputError& e) {
            throw CtlError(
                ctl::kBadInput, e.source() + (e.field().empty() ? "" : ": " + e.field()) + ": " + e.reason());
        }
    }
    static const std::vector<std::string> known { "jobs", "runs", "tenants", "submit", "submit-workload", "pause",
        "resume", "cancel", "freeze", "unfreeze", "pin", "unpin", "exclude", "include", "set-policy", "resize",
        "set-placement", "set-elastic", "set-comm", "watch" };
    if (std::find(known.begin(), known.end(), command) == known.end())
        throw CtlError(ctl::kBadInput, "unknown command '" + command + "' (fulcrumctl --help lists them)");
    // Arguments are checked before connecting, so bad input never waits on the network.
    std::optional<ClientMessage> message;
    if (command == "jobs") {
        need(a, 1, "jobs");
        message = ListJobs {};
    } else if (command == "runs") {
        need(a, 1, "runs");
        message = ListRuns {};
    } else if (command == "tenants") {
        need(a, 1, "tenants");
    } else if (command == "submit") {
        need(a, 2, "submit SCENARIO");
        message = SubmitJob { {}, read_file(a.words[1]) };
    } else if (command == "submit-workload") {
        need(a, 2, "submit-workload FILE.csv");
        try {
            message = SubmitWorkload { {}, ctl::read_workload_file(a.words[1]) };
        } catch (const InputError& e) {
            throw CtlError(ctl::kBadInput, e.what());
        }
    } else if (command == "pause" || command == "resume" || command == "cancel" || command == "freeze"
        || command == "unfreeze") {
        need(a, 2, (command + " JOB").c_str());
        // The wire names are the commands' with "-job": one table.
        const JobAction action = *protocol::parse_job_action(command + "-job");
        message = JobCommand { {}, action, number<JobId>(a.words[1], "JOB") };
    } else if (command == "set-placement" || command == "set-elastic" || command == "set-comm") {
        need(a, 2, (command + " POLICY").c_str());
        SetClusterPolicy p;
        (command == "set-placement" ? p.placement : command == "set-elastic" ? p.elastic : p.comm) = a.words[1];
        message = p;
    } else if (command == "pin") {
        need(a, 4, "pin JOB WORKER BATCH");
        WorkerCommand c;
        c.action = WorkerAction::Pin;
        c.job = number<JobId>(a.words[1], "JOB");
        c.worker = number<WorkerId>(a.words[2], "WORKER");
        c.batch_size = number<std::int32_t>(a.words[3], "BATCH");
        message = c;
    } else if (command == "unpin" || command == "include" || command == "exclude") {
        need(a, 3, (command + " JOB WORKER" + (command == "exclude" ? " [--for S]" : "")).c_str());
        const WorkerAction action = command == "unpin"
            ? WorkerAction::Unpin
            : (command == "include" ? WorkerAction::Include : WorkerAction::Exclude);
        WorkerCommand c;
        c.action = action;
        c.job = number<JobId>(a.words[1], "JOB");
        c.worker = number<WorkerId>(a.words[2], "WORKER");
        if (a.for_s && action != WorkerAction::Exclude)
            throw CtlError(ctl::kBadInput, "--for goes with exclude only");
        c.for_s = a.for_s;
        message = c;
    } else if (command == "set-policy") {
        need(a, 3, "set-policy JOB SPEC");
        message = ChangeJob { {}, JobSetting::Policy, number<JobId>(a.words[1], "JOB"), policy_spec(a.words[2]) };
    } else if (command == "resize") {
        if (a.words.size() != 3 && a.words.size() != 4)
            throw CtlError(ctl::kBadInput, "usage: fulcrumctl resize JOB ACTION [WORKER]");
        ResizeJob r;
        r.job = number<JobId>(a.words[1], "JOB");
        const auto action = parse_resize_action(a.words[2]);
        if (!action)
            throw CtlError(ctl::kBadInput,
                "ACTION is '" + a.words[2] + "', expected add-worker, remove-worker, add-server or remove-server");
        r.action = *action;
        if (a.words.size() == 4)
            r.worker = number<WorkerId>(a.words[3], "WORKER");
        message = r;
    } else if (a.words.size() == 2) {
        number<JobId>(a.words[1], "JOB"); // watch's JOB, checked now
    }

    ctl::ClientOptions options = a.client;
    options.token = ctl::resolve_token(a.token_file);
    ctl::CtlClient client(options);
    if (command == "watch")
        return watch(a, client);
    if (command == "tenants") {
        const ClusterState cluster = cluster_of(client, a);
        if (!a.json)
            std::cout << tenants_text(cluster);
        return ctl::kOk;
    }
    const Reply reply = client.request(*message);
    if (command == "jobs")
        print_reply(a, reply, jobs_text(reply.jobs));
    else if (command == "runs")
        print_reply(a, reply, runs_text(reply.runs));
    else if (command == "submit")
        print_reply(a, reply, "submitted as job " + std::to_string(reply.job.value_or(0)) + "\n");
    else if (command == "submit-workload")
        print_reply(a, reply, workload_text(reply.jobs));
    else
        print_reply(a, reply, command + ": done (applied at the job's next barrier or safe point)\n");
    return ctl::kOk;
}

} // namespace

int main(int argc, char** argv)
{
    po::options_description visible("Options");
    Args a;
    std::string server, log_level = "info", log_format = "text";
    visible.add_options()("help,h", "show this help")("version", "print the version")("server", po::value(&server),
        "fulcrumd's address: ws://HOST:PORT, wss://HOST:PORT (TLS) or HOST:PORT (default $FULCRUM_SERVER or "
        "ws://127.0.0.1:7480)")("token-file", po::value<std::string>(),
        "read the token from this file (default: $FULCRUM_TOKEN)")("ca-file", po::value<std::string>(),
        "wss://: trust this CA certificate (PEM)")("json", po::bool_switch(&a.json), "print JSON")("for",
        po::value<double>(), "exclude: for this many seconds of the run's clock")("csv", po::value<std::string>(),
        "export: the folder for the CSV files")("run", po::value<RunId>(), "export: only this run of the store")(
        "count", po::value<std::int64_t>(), "watch: stop after this many iterations")("refresh-hz",
        po::value<double>(&a.refresh_hz)->default_value(2),
        "watch: redraw at most this many times a second")("log-level", po::value(&log_level)->default_value(log_level),
        "the least level of its diagnostics on standard error: debug, info, warning or error")("log-format",
        po::value(&log_format)->default_value(log_format),
        "its diagnostics as text ('[ERROR] fulcrumctl: ...') or json (one object a line, as fulcrumd's log)");
    po::options_description hidden;
    hidden.add_options()("words", po::value(&a.words));
    po::options_description all;
    all.add(visible).add(hidden);
    po::positional_options_description positional;
    positional.add("words", -1);
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        std::cerr << "fulcrumctl: " << e.what() << "\nTry 'fulcrumctl --help'.\n";
        return ctl::kBadInput;
    }
    if (vm.count("help")) {
        std::cout << kUsage << "\n" << visible;
        return ctl::kOk;
    }
    if (vm.count("version")) {
        std::cout << "fulcrumctl " FULCRUM_VERSION " (protocol " << kProtocolVersion << ")\n";
        return ctl::kOk;
    }
    if (a.words.empty()) {
        std::cerr << "fulcrumctl: give a command\nTry 'fulcrumctl --help'.\n";
        return ctl::kBadInput;
    }
    try { // --server, else $FULCRUM_SERVER, else the default, in any of the forms every program takes
        a.client.server
            = protocol::server_address(server.empty() ? std::nullopt : std::optional<std::string>(server)).url();
    } catch (const InputError& e) {
        std::cerr << "fulcrumctl: " << e.what() << "\n";
        return ctl::kBadInput;
    }
    if (vm.count("token-file"))
        a.token_file = vm["token-file"].as<std::string>();
    if (vm.count("ca-file"))
        a.client.ca_file = vm["ca-file"].as<std::string>();
    if (vm.count("for"))
        a.for_s = vm["for"].as<double>();
    if (vm.count("csv"))
        a.csv_dir = vm["csv"].as<std::string>();
    if (vm.count("run"))
        a.run = vm["run"].as<RunId>();
    if (vm.count("count"))
        a.count = vm["count"].as<std::int64_t>();
    if (!(a.refresh_hz >= 0.1 && a.refresh_hz <= 60)) {
        std::cerr << "fulcrumctl: --refresh-hz: expected 0.1 to 60 redraws a second, got " << a.refresh_hz << "\n";
        return ctl::kBadInput;
    }
    std::optional<log::Session> logging;
    try {
        logging.emplace(log::Settings { .program = "fulcrumctl",
            .level = log::level_option("--log-level", log_level),
            .format = log::format_option("--log-format", log_format),
            .background = false,
            .time = false,
            .to = {} });
    } catch (const InputError& e) {
        std::cerr << "fulcrumctl: " << e.what() << "\n";
        return ctl::kBadInput;
    }
    try {
        return run_command(a);
    } catch (const CtlError& e) {
        log::error(e.what());
        return e.status();
    } catch (const std::exception& e) {
        log::error(e.what());
        return ctl::kFailed;
    }
}
