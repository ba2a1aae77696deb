#include "sched/cluster.h"

#include "common/error.h"
#include "common/json_fields.h"
#include "common/tenant_name.h"

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

// "tenants": {"T": {"gpus": N, "borrow": B, "weight": W}}: every name a tenant's (token file
// tenant=T), the quotas within the cluster's GPUs.
TenantQuotas read_tenants(const JsonFields& o, int cluster_gpus)
{
    TenantQuotas quotas;
    if (const json::value* v = o.find("tenants")) {
        if (!v->is_object())
            o.wrong_type(
                "tenants", "an object of tenants, {\"T\": {\"gpus\": N, \"borrow\": true, \"weight\": 1}}", *v);
        for (const auto& [key, section] : v->as_object()) {
            const std::string name(key);
            const std::string path = "tenants." + name;
            if (!valid_tenant_name(name))
                o.fail(path, "is not a tenant's name: expected 1 to 64 of letters, digits and . _ - @ +");
            const JsonFields t(section, path, o);
            TenantQuota q;
            q.gpus = static_cast<int>(t.integer_or("gpus", 0, 0, 1'000'000));
            q.borrow = t.boolean_or("borrow", q.borrow);
            q.weight = t.number_or("weight", q.weight, 0, 1e6);
            if (!(q.weight > 0))
                t.fail(t.at("weight"), "is 0, expected a positive weight");
            t.reject_unknown();
            quotas.named.emplace(name, q);
        }
        if (quotas.total_gpus() > cluster_gpus)
            o.fail("tenants",
                "the tenants' quotas add up to " + std::to_string(quotas.total_gpus()) + " GPUs; the cluster has "
                    + std::to_string(cluster_gpus) + " (servers x gpus_per_server)");
    }
    const std::string rigid = o.string_or("rigid_borrowers", "wait");
    const auto mode = parse_rigid_borrowers(rigid);
    if (!mode)
        o.fail("rigid_borrowers", "is '" + rigid + "', expected " + rigid_borrowers_help());
    quotas.rigid = *mode;
    return quotas;
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
    c.tenants = read_tenants(o, c.gpus());
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
