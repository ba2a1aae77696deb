#include "sched/cluster.h"

#include "common/error.h"

#include <boost/json.hpp>
#include <cmath>
#include <fstream>
#include <sstream>

namespace fulcrum::sched {

namespace {

namespace json = boost::json;

double number(const json::object& o, const char* key, double fallback, const std::string& path,
    const std::string& prefix, bool positive)
{
    const json::value* v = o.if_contains(key);
    if (!v)
        return fallback;
    if (!v->is_number())
        throw InputError(path, prefix + key, "expected a number");
    const double x = v->to_number<double>();
    if (!std::isfinite(x) || (positive ? !(x > 0) : x < 0))
        throw InputError(path, prefix + key, positive ? "expected a positive number" : "expected a number >= 0");
    return x;
}

int count(const json::object& o, const char* key, int fallback, const std::string& path)
{
    const json::value* v = o.if_contains(key);
    if (!v)
        return fallback;
    if (!v->is_int64() || v->as_int64() < 1 || v->as_int64() > 1'000'000)
        throw InputError(path, key, "expected a whole number from 1 to 1000000");
    return static_cast<int>(v->as_int64());
}

void only_known(
    const json::object& o, std::initializer_list<const char*> keys, const std::string& path, const std::string& prefix)
{
    for (const auto& entry : o) {
        bool known = false;
        for (const char* k : keys)
            known = known || entry.key() == k;
        if (!known)
            throw InputError(path, prefix + std::string(entry.key()), "unknown field");
    }
}

} // namespace

ClusterSpec load_cluster(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
        throw InputError(path, "", "cannot open the cluster file");
    std::stringstream text;
    text << in.rdbuf();
    boost::system::error_code error;
    json::value root = json::parse(text.str(), error);
    if (error)
        throw InputError(path, "", "is not valid JSON: " + error.message());
    if (!root.is_object())
        throw InputError(path, "", "expected a JSON object with servers, gpus_per_server, gpu_memory_gb, network");
    const json::object& o = root.as_object();
    only_known(o, { "servers", "gpus_per_server", "gpu_memory_gb", "intra_server_b", "network" }, path, "");
    ClusterSpec c;
    c.servers = count(o, "servers", c.servers, path);
    c.gpus_per_server = count(o, "gpus_per_server", c.gpus_per_server, path);
    c.gpu_memory_gb = number(o, "gpu_memory_gb", c.gpu_memory_gb, path, "", true);
    c.intra_server_b = number(o, "intra_server_b", c.intra_server_b, path, "", false);
    if (const json::value* n = o.if_contains("network")) {
        if (!n->is_object())
            throw InputError(path, "network", "expected an object with a, b and eta (eq. 5)");
        const json::object& net = n->as_object();
        only_known(net, { "a", "b", "eta" }, path, "network.");
        c.network.a = number(net, "a", c.network.a, path, "network.", false);
        c.network.b = number(net, "b", c.network.b, path, "network.", true);
        c.network.eta = number(net, "eta", c.network.eta, path, "network.", false);
    }
    return c;
}

} // namespace fulcrum::sched
