#include "common/error.h"
#include "sched/elastic_simulator.h"
#include "sched/statistics.h"

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <map>

namespace fulcrum::sched {

std::vector<TenantOutcome> tenant_outcomes(const ElasticResult& result, const PsClusterModel& cluster)
{
    std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> by_tenant; // JCTs, slowdowns
    for (const PsJobOutcome& j : result.jobs) {
        const double alone = j.job.samples() / cluster.throughput(j.job.model, j.job.workers, j.job.servers);
        auto& [jct, slowdown] = by_tenant[j.job.tenant];
        jct.push_back(j.jct());
        slowdown.push_back(j.jct() / alone);
    }
    std::vector<TenantOutcome> out;
    out.reserve(by_tenant.size());
    for (const auto& [tenant, values] : by_tenant)
        out.push_back({ tenant, static_cast<int>(values.first.size()), mean_of(values.first), mean_of(values.second) });
    return out;
}

std::string elastic_metrics_json(const ElasticResult& r, const ElasticOptions& options)
{
    std::vector<double> jct, feedback;
    int grown = 0, rolled_back = 0, released = 0, restarts = 0, feedback_at_finish = 0, reclaimed = 0, requeued = 0;
    for (const PsJobOutcome& j : r.jobs) {
        reclaimed += j.reclaimed;
        requeued += j.requeued;
        feedback_at_finish += j.feedback_at_finish ? 1 : 0;
        jct.push_back(j.jct());
        feedback.push_back(j.feedback_latency());
        grown += j.grown;
        rolled_back += j.rolled_back;
        released += j.released;
        restarts += j.restarts;
    }
    boost::json::object o;
    o["elastic"] = std::string(policy_name(options.policy));
    o["jobs"] = r.jobs.size();
    o["rejected"] = r.rejected.size();
    o["avg_jct"] = mean_of(jct);
    o["median_jct"] = median_of(jct);
    o["p95_jct"] = percentile_of(jct, 0.95);
    o["makespan"] = r.makespan;
    o["avg_feedback_latency"] = mean_of(feedback);
    o["p95_feedback_latency"] = percentile_of(feedback, 0.95);
    o["early_feedback"] = to_string(options.feedback);
    o["feedback_at_finish"] = feedback_at_finish;
    o["cpu_util"] = r.cpu_util;
    o["allocated_util"] = r.allocated_util;
    o["growth_steps"] = grown;
    o["rollbacks"] = rolled_back;
    o["released_slots"] = released;
    o["restarts"] = restarts;
    if (options.tenants.active()) {
        o["reclaimed_slots"] = reclaimed;
        o["requeued"] = requeued;
        o["rigid_borrowers"] = std::string(rigid_borrowers_name(options.tenants.rigid));
    }
    boost::json::object changes;
    for (const ChangeCost& c : r.changes)
        changes[c.change]
            = boost::json::object { { "count", c.count }, { "mean_s", c.count ? c.total_s / c.count : 0.0 } };
    o["changes"] = std::move(changes);
    return boost::json::serialize(o);
}

void write_elastic_csv(const ElasticResult& r, const std::string& dir)
{
    std::error_code error;
    std::filesystem::create_directories(dir, error);
    if (error)
        throw InputError(dir, "", "cannot create the folder: " + error.message());
    const std::filesystem::path path = std::filesystem::path(dir) / "jobs.csv";
    std::ofstream out(path);
    if (!out)
        throw InputError(path.string(), "", "cannot be written");
    out.precision(10);
    out << "id,name,model,workers,servers,iterations,arrival_s,start_s,feedback_s,finish_s,jct_s,feedback_latency_s,"
           "peak_workers,peak_servers,grown,rolled_back,released,restarts,paused_s,tenant,reclaimed,requeued,note\n";
    for (const PsJobOutcome& j : r.jobs)
        out << j.job.id << ',' << j.job.name << ',' << j.job.model.name << ',' << j.job.workers << ',' << j.job.servers
            << ',' << j.job.iterations << ',' << j.job.arrival_s << ',' << j.start_s << ',' << j.feedback_s << ','
            << j.finish_s << ',' << j.jct() << ',' << j.feedback_latency() << ',' << j.peak_workers << ','
            << j.peak_servers << ',' << j.grown << ',' << j.rolled_back << ',' << j.released << ',' << j.restarts << ','
            << j.paused_s << ',' << j.job.tenant << ',' << j.reclaimed << ',' << j.requeued << ','
            << (j.feedback_at_finish ? "no early feedback" : "") << '\n';
    for (const PsRejected& j : r.rejected)
        out << j.job.id << ',' << j.job.name << ',' << j.job.model.name << ',' << j.job.workers << ',' << j.job.servers
            << ',' << j.job.iterations << ',' << j.job.arrival_s << ",,,,,,,,,,,,," << j.job.tenant
            << ",,,rejected: " << j.reason << '\n';
}

} // namespace fulcrum::sched
