#include "sched/cluster.h"

#include "common/error.h"
#include "common/json_fields.h"

#include <fstream>
#include <limits>
#include <sstream>

namespace fulcrum::sched {

namespace {

double non_negative(const JsonFields& f, const char* key, double fallback)
{
    return f.number_or(key, fallback, 0, std::numeric_limits<double>::max());
}

double positive(const JsonFields& f, const char* key, double fallback)
{
    const double x = non_negative(f, key, fallback);
    if (!(x > 0))
        f.fail(f.at(key), "is 0, expected a positive number");
    return x;
}

int count(const JsonFields& f, const char* key, int fallback)
{
    return static_cast<int>(f.integer_or(key, fallback, 1, 1'000'000));
}

ClusterSpec read_cluster(const std::string& text)
{
    const json::value root = parse_json_text(text);
    if (!root.is_object())
        throw JsonFieldError(
            "wrong-type", "", "expected a JSON object with servers, gpus_per_server, gpu_memory_gb, network");
    const JsonFields o(root);
    ClusterSpec c;
    c.servers = count(o, "servers", c.servers);
    c.gpus_per_server = count(o, "gpus_per_server", c.gpus_per_server);
    c.gpu_memory_gb = positive(o, "gpu_memory_gb", c.gpu_memory_gb);
    c.intra_server_b = non_negative(o, "intra_server_b", c.intra_server_b);
    c.placement_comm_b = non_negative(o, "placement_comm_b", c.placement_comm_b);
    c.cpu_workers_take_gpus = o.boolean_or("cpu_workers_take_gpus", c.cpu_workers_take_gpus);
    if (const json::value* n = o.find("network")) {
        if (!n->is_object())
            o.fail("network", "expected an object with a, b and eta (eq. 5)", "wrong-type");
        const JsonFields net(*n, "network");
        c.network.a = non_negative(net, "a", c.network.a);
        c.network.b = positive(net, "b", c.network.b);
        c.network.eta = non_negative(net, "eta", c.network.eta);
        net.reject_unknown();
    }
    o.reject_unknown();
    return c;
}

} // namespace

ClusterSpec load_cluster(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
        throw InputError(path, "", "cannot open the cluster file");
    std::stringstream text;
    text << in.rdbuf();
    try {
        return read_cluster(text.str());
    } catch (const JsonFieldError& e) {
        throw InputError(path, e.path(), e.reason());
    }
}

} // namespace fulcrum::sched
