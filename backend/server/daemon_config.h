#pragma once

#include "archive/server_folders.h"

#include <string>
#include <vector>

namespace fulcrum::daemon {
struct DaemonOptions;
struct ResourceBudget;
} // namespace fulcrum::daemon

namespace fulcrum::server {

// fulcrumd's settings, from its command line and its config file (docs: fulcrumd --help).
struct DaemonSettings {
    std::string listen = "127.0.0.1:7480";
    std::string token_file; // empty: DATA_DIR/tokens
    std::string data_dir = "fulcrum-data";
    std::string cluster; // a cluster file; empty: the default cluster
    std::string placement = "lwf-1";
    std::string elastic = "static"; // static, eps or kill-restart (DaemonOptions::Elastic)
    double elastic_round_s = 60;
    std::string early_feedback = "fraction:0.1";
    std::string comm = "none"; // none, srsf-N or ada-srsf (DaemonOptions::comm)
    std::string queue = "backfill"; // backfill or fifo (DaemonOptions::queue)
    std::string tls_certificate, tls_key;
    bool allow_plain = false;
    bool no_demo = false;
    std::vector<std::string> scenarios;
    archive::FolderOptions folders;
    bool resume_manual = false;
    std::string metrics = "token"; // GET /metrics: token, loopback or off
    std::string memory_budget; // "6G"; empty: default_memory_budget()
    int max_threads = 2048;
    int job_niceness = 5; // DaemonOptions::job_niceness
    double worker_timeout_s = 10; // DaemonOptions::worker_timeout_s
    std::string log_level = "info"; // debug, info, warning or error (log::Level)
    std::string log_format = "text"; // text or json (log::Format)
    // Failed upgrades from one address within a minute before it is answered 429 for a
    // minute (access::AuthLimiter); 0: no limit.
    int auth_limit = 20;
};

// The settings the command line gave: a config file does not override them.
struct GivenOnCommandLine {
    bool listen = false, token_file = false, data_dir = false, cluster = false, placement = false,
         tls_certificate = false, tls_key = false, metrics = false, elastic = false, elastic_round_s = false,
         early_feedback = false, comm = false, queue = false, memory_budget = false, max_threads = false,
         job_niceness = false, worker_timeout_s = false, log_level = false, log_format = false, auth_limit = false;
};

// A config file's JSON object (`text`, read from `path`) applied to `settings`. Throws
// InputError naming the file and the field for an unknown field or a wrong value.
void apply_config_file(
    const std::string& text, const std::string& path, DaemonSettings& settings, const GivenOnCommandLine& given);

// Where fulcrumd serves, once the settings are checked.
struct ListenAddress {
    std::string host;
    unsigned short port = 0;
    bool loopback = true;
};

bool is_loopback(const std::string& host);

// The elastic scheduling the settings name (--elastic, --elastic-round-s, --feedback).
// Throws InputError naming the option.
void elastic_options(const DaemonSettings& settings, daemon::DaemonOptions& options);

// The rules between the settings: HOST:PORT, a placement policy the scheduler knows, a TLS
// certificate and key given together, and plain WebSocket on a non-loopback address only
// with allow_plain (tokens and data would cross the network unencrypted). Fills the token
// file's default, and a communication scheduler fulcrumd has. Throws InputError naming the
// option (--listen, --placement, --comm, --tls-cert...).
ListenAddress check_settings(DaemonSettings& settings);

// How far below fulcrumd's priority its jobs' threads run (--job-niceness, 0 to 19).
// Throws InputError naming the option.
int job_niceness(const DaemonSettings& settings);

// What running jobs may hold together (--memory-budget, --max-threads). Throws InputError
// naming the option for a size it cannot read.
daemon::ResourceBudget resource_budget(const DaemonSettings& settings);

} // namespace fulcrum::server
