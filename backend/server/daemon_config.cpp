#include "server/daemon_config.h"

#include "common/error.h"
#include "common/json_fields.h"
#include "daemon/daemon_options.h"
#include "daemon/link_schedule.h"
#include "daemon/resource_book.h"
#include "scenario/scenario.h"
#include "sched/placement.h"

#include <filesystem>

namespace fulcrum::server {

using daemon::DaemonOptions;
using daemon::LinkSchedule;
using daemon::parse_byte_size;
using daemon::ResourceBudget;

bool is_loopback(const std::string& host)
{
    return host == "127.0.0.1" || host == "::1" || host == "localhost" || host.rfind("127.", 0) == 0;
}

namespace {

void read_config(const std::string& text, DaemonSettings& s, const GivenOnCommandLine& given)
{
    const json::value root = parse_json_text(text);
    if (!root.is_object())
        throw JsonFieldError("wrong-type", "", "expected a JSON object, got " + std::string(json_kind_name(root)));
    const JsonFields f(root);
    // Each value is checked even where the command line wins.
    const auto set = [&](const char* key, bool given_there, std::string& field, std::string_view what) {
        if (!f.has(key))
            return;
        std::string read = f.string(key, what);
        if (!given_there)
            field = std::move(read);
    };
    set("listen", given.listen, s.listen, "HOST:PORT");
    set("token_file", given.token_file, s.token_file, "a path");
    set("data_dir", given.data_dir, s.data_dir, "a path");
    set("cluster", given.cluster, s.cluster, "a path to a cluster file");
    set("placement", given.placement, s.placement, "a placement policy: rand, ff, ls or lwf-K");
    set("elastic", given.elastic, s.elastic, "an elastic scheduling policy: static, eps or kill-restart");
    if (f.has("elastic_round_s")) {
        const double round = f.number("elastic_round_s", 1e-3, 86400);
        if (!given.elastic_round_s)
            s.elastic_round_s = round;
    }
    set("early_feedback", given.early_feedback, s.early_feedback, "fraction:F, iterations:N or accuracy:A");
    set("comm", given.comm, s.comm, "a communication scheduler: none, srsf-N or ada-srsf");
    set("queue", given.queue, s.queue, "the queue's order: backfill or fifo");
    set("tls_certificate", given.tls_certificate, s.tls_certificate, "a path to a PEM certificate chain");
    set("tls_key", given.tls_key, s.tls_key, "a path to a PEM private key");
    s.allow_plain = s.allow_plain || f.boolean_or("allow_plain", false);
    const auto folders = [&](const char* key, std::string_view what, std::vector<std::filesystem::path>& into) {
        if (f.has(key))
            for (const std::string& p : f.strings(key, what))
                into.emplace_back(p);
    };
    if (f.has("scenarios"))
        for (const std::string& p : f.strings("scenarios", "scenario file paths"))
            s.scenarios.push_back(p);
    folders("datasets_folders", "folders holding data sets", s.folders.datasets);
    folders("runs_folders", "folders holding recorded run stores", s.folders.runs);
    folders("models_folders", "folders holding NARX networks", s.folders.models);
    if (f.has("metrics")) {
        const std::string metrics = f.string_or("metrics", "token", { "token", "loopback", "off" });
        if (!given.metrics)
            s.metrics = metrics;
    }
    set("memory_budget", given.memory_budget, s.memory_budget, "a size such as \"6G\"");
    if (f.has("max_threads")) {
        const auto threads = static_cast<int>(f.integer("max_threads", 16, 1'000'000));
        if (!given.max_threads)
            s.max_threads = threads;
    }
    if (f.has("job_niceness")) {
        const auto niceness = static_cast<int>(f.integer("job_niceness", 0, 19));
        if (!given.job_niceness)
            s.job_niceness = niceness;
    }
    if (f.has("worker_timeout_s")) {
        const double timeout = f.number("worker_timeout_s", scenario::kMinWorkerTimeoutS, 86'400);
        if (!given.worker_timeout_s)
            s.worker_timeout_s = timeout;
    }
    if (f.has("log_level")) {
        const std::string level = f.string_or("log_level", "info", { "debug", "info", "warning", "error" });
        if (!given.log_level)
            s.log_level = level;
    }
    if (f.has("log_format")) {
        const std::string format = f.string_or("log_format", "text", { "text", "json" });
        if (!given.log_format)
            s.log_format = format;
    }
    if (f.has("auth_limit")) {
        const auto limit = static_cast<int>(f.integer("auth_limit", 0, 1'000'000));
        if (!given.auth_limit)
            s.auth_limit = limit;
    }
    if (f.has("resume_jobs"))
        s.resume_manual = f.string_or("resume_jobs", "auto", { "auto", "manual" }) == "manual";
    f.reject_unknown();
}

} // namespace

void apply_config_file(
    const std::string& text, const std::string& path, DaemonSettings& s, const GivenOnCommandLine& given)
{
    try {
        read_config(text, s, given);
    } catch (const JsonFieldError& e) {
        throw InputError(path, e.path(), e.reason());
    }
}

void elastic_options(const DaemonSettings& s, DaemonOptions& options)
{
    const auto policy = sched::parse_elastic_policy(s.elastic);
    if (!policy)
        throw InputError("--elastic", "", "expected " + sched::elastic_policy_help() + ", got '" + s.elastic + "'");
    if (!(s.elastic_round_s > 0))
        throw InputError("--elastic-round-s", "", "expected seconds > 0, got " + std::to_string(s.elastic_round_s));
    options.elastic.policy = *policy;
    options.elastic.round_s = s.elastic_round_s;
    try {
        options.elastic.feedback = sched::parse_early_feedback(s.early_feedback);
    } catch (const std::invalid_argument& e) {
        throw InputError("--feedback", "", e.what());
    }
}

ListenAddress check_settings(DaemonSettings& s)
{
    const auto colon = s.listen.rfind(':');
    int port = -1;
    if (colon != std::string::npos) {
        try {
            std::size_t used = 0;
            port = std::stoi(s.listen.substr(colon + 1), &used);
            if (used != s.listen.size() - colon - 1)
                port = -1;
        } catch (const std::exception&) {
        }
    }
    if (colon == std::string::npos || colon == 0 || port < 0 || port > 65535)
        throw InputError("--listen", "", "expected HOST:PORT (e.g. 127.0.0.1:7480), got '" + s.listen + "'");
    try {
        sched::make_placement(s.placement, 1);
    } catch (const std::invalid_argument& e) {
        throw InputError("--placement", "", e.what());
    }
    try {
        LinkSchedule::check_policy(s.comm);
    } catch (const std::invalid_argument& e) {
        throw InputError("--comm", "", e.what());
    }
    if (s.queue != "backfill" && s.queue != "fifo")
        throw InputError("--queue", "", "expected backfill or fifo, got '" + s.queue + "'");
    if (s.token_file.empty())
        s.token_file = (std::filesystem::path(s.data_dir) / "tokens").string();
    if (s.metrics != "token" && s.metrics != "loopback" && s.metrics != "off")
        throw InputError("--metrics", "", "expected token, loopback or off, got '" + s.metrics + "'");
    if (s.tls_certificate.empty() != s.tls_key.empty())
        throw InputError(s.tls_key.empty() ? "--tls-key" : "--tls-cert", "",
            "TLS needs both --tls-cert and --tls-key (PEM files)"); // names the one missing
    ListenAddress address;
    address.host = s.listen.substr(0, colon);
    address.port = static_cast<unsigned short>(port);
    address.loopback = is_loopback(address.host);
    if (s.tls_certificate.empty() && !address.loopback && !s.allow_plain)
        throw InputError("--listen", "",
            "'" + address.host
                + "' is not a loopback address and no TLS certificate is configured: tokens and data would cross the "
                  "network unencrypted. Give --tls-cert and --tls-key, or --allow-plain on a trusted network");
    return address;
}

int job_niceness(const DaemonSettings& settings)
{
    if (settings.job_niceness < 0 || settings.job_niceness > 19)
        throw InputError("--job-niceness", "",
            "expected a nice value to add from 0 (the jobs run at fulcrumd's priority) to 19, got "
                + std::to_string(settings.job_niceness));
    return settings.job_niceness;
}

ResourceBudget resource_budget(const DaemonSettings& settings)
{
    ResourceBudget budget;
    budget.threads = settings.max_threads;
    if (settings.max_threads < 16)
        throw InputError("--max-threads", "", "expected at least 16, got " + std::to_string(settings.max_threads));
    if (settings.memory_budget.empty())
        return budget; // the default, found when the daemon starts
    try {
        budget.memory_bytes = parse_byte_size(settings.memory_budget);
    } catch (const std::invalid_argument& e) {
        throw InputError("--memory-budget", "", e.what());
    }
    return budget;
}

} // namespace fulcrum::server
