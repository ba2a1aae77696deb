#include "daemon/daemon_config.h"

#include "common/error.h"
#include "sched/placement.h"

#include <boost/json.hpp>
#include <filesystem>

namespace fulcrum::daemon {

bool is_loopback(const std::string& host)
{
    return host == "127.0.0.1" || host == "::1" || host == "localhost" || host.rfind("127.", 0) == 0;
}

void apply_config_file(
    const std::string& text, const std::string& path, DaemonSettings& s, const GivenOnCommandLine& given)
{
    boost::system::error_code ec;
    const boost::json::value v = boost::json::parse(text, ec);
    if (ec || !v.is_object())
        throw InputError(path, "", "expected a JSON object" + (ec ? ": " + ec.message() : std::string()));
    for (const auto& [key, value] : v.get_object()) {
        const std::string k(key);
        const auto string = [&](const char* what) {
            if (!value.is_string())
                throw InputError(path, k, std::string("expected ") + what);
            return std::string(value.get_string());
        };
        const auto strings = [&](const char* what) {
            std::vector<std::string> out;
            if (!value.is_array())
                throw InputError(path, k, std::string("expected an array of ") + what);
            for (const auto& p : value.get_array()) {
                if (!p.is_string())
                    throw InputError(path, k, std::string("expected an array of ") + what);
                out.emplace_back(p.get_string());
            }
            return out;
        };
        const auto set = [&](bool given_there, std::string& field, const char* what) {
            const std::string read = string(what); // checked even when the command line wins
            if (!given_there)
                field = read;
        };
        if (k == "listen") {
            set(given.listen, s.listen, "HOST:PORT");
        } else if (k == "token_file") {
            set(given.token_file, s.token_file, "a path");
        } else if (k == "data_dir") {
            set(given.data_dir, s.data_dir, "a path");
        } else if (k == "cluster") {
            set(given.cluster, s.cluster, "a path to a cluster file");
        } else if (k == "placement") {
            set(given.placement, s.placement, "a placement policy: rand, ff, ls or lwf-K");
        } else if (k == "tls_certificate") {
            set(given.tls_certificate, s.tls_certificate, "a path to a PEM certificate chain");
        } else if (k == "tls_key") {
            set(given.tls_key, s.tls_key, "a path to a PEM private key");
        } else if (k == "allow_plain") {
            if (!value.is_bool())
                throw InputError(path, k, "expected true or false");
            s.allow_plain = s.allow_plain || value.get_bool();
        } else if (k == "scenarios") {
            for (const std::string& p : strings("scenario file paths"))
                s.scenarios.push_back(p);
        } else if (k == "datasets_folders") {
            for (const std::string& p : strings("folders holding data sets"))
                s.folders.datasets.emplace_back(p);
        } else if (k == "resume_jobs") {
            const std::string mode = string("\"auto\" or \"manual\"");
            if (mode != "auto" && mode != "manual")
                throw InputError(path, k, "expected \"auto\" or \"manual\", got \"" + mode + "\"");
            s.resume_manual = mode == "manual";
        } else if (k == "runs_folders") {
            for (const std::string& p : strings("folders holding recorded run stores"))
                s.folders.runs.emplace_back(p);
        } else if (k == "models_folders") {
            for (const std::string& p : strings("folders holding NARX networks"))
                s.folders.models.emplace_back(p);
        } else {
            throw InputError(path, k,
                "unknown field (expected listen, token_file, data_dir, cluster, placement, tls_certificate, tls_key, "
                "allow_plain, scenarios, datasets_folders, models_folders, runs_folders, resume_jobs)");
        }
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
    if (s.token_file.empty())
        s.token_file = (std::filesystem::path(s.data_dir) / "tokens").string();
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

} // namespace fulcrum::daemon
