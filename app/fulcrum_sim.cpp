// fulcrum-sim: simulates a multi-job GPU cluster under a placement and a communication
// scheduler (Wang, Shi, Wang, Chu) and prints the job-completion metrics.

#include "common/error.h"
#include "common/progress_bar.h"
#include "common/registry.h"
#include "sched/cluster.h"
#include "sched/comm_policy.h"
#include "sched/elastic_simulator.h"
#include "sched/placement.h"
#include "sched/ps_live_export.h"
#include "sched/sim_report.h"
#include "sched/simulator.h"
#include "sched/statistics.h"
#include "sched/workload.h"
#include "sched_store/schedule_store.h"

#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <unistd.h>

namespace po = boost::program_options;
using namespace fulcrum;

namespace {

constexpr const char* kUsage
    = R"(Usage: fulcrum-sim [--cluster FILE] [--models M] (--workload FILE | --generate microsoft-N
                   [--iterations MIN-MAX] [--arrival-window-s S]) [--placement P] [--comm C]
                   [--seed N] [--json] [--csv DIR] [--out RUN.db]
       fulcrum-sim --list-models [--models M]
       fulcrum-sim --elastic eps|static|kill-restart [--cluster FILE]
                   (--workload FILE | --generate ps-mixed-N) [--seed N] [--json] [--csv DIR]
                   [--round-s S] [--feedback fraction:F|iterations:N|accuracy:A] [--restart-s S]
                   [--export-live DIR] [--tenants FILE [--compare-tenants]]

Simulates data-parallel training jobs sharing a GPU cluster: each job's iterations are a
DAG of forward and backward tasks on its GPUs and an all-reduce across them; all-reduces
that share a server's network link slow each other down by eq. 5 of "Communication
Contention Aware Scheduling of Multiple Deep Learning Training Jobs". Prints the average,
median and 95th-percentile job completion time (JCT), the makespan and the GPU utilization.

With --elastic, the jobs are parameter-server jobs (servers and workers, one cluster slot
each) and the policy is elastic resource scheduling: eps (the Elastic Parameter Server:
grow running jobs round-robin on idle slots, roll back a step that made a job slower, take
slots from jobs past early feedback for a newcomer), static (FIFO, no elasticity) or
kill-restart (EPS's decisions carried out by checkpoint and restart). Prints the average
JCT, the early-feedback latency and the CPU utilization. With --tenants, the cluster's slots
are tenants' quotas (docs/operations.md, "Tenants"): each tenant's jobs are served within its
quota first, borrowers take idle slots by weight and give them back when the owner needs
them; the summary adds each tenant's average JCT and slowdown.

Examples:
  fulcrum-sim --generate microsoft-160 --placement lwf-1 --comm ada-srsf
  fulcrum-sim --workload jobs.csv --cluster cluster.json --placement ff --comm srsf-1 --json
  fulcrum-sim --elastic eps --generate ps-mixed-40 --seed 2
  fulcrum-sim --generate microsoft-160 --iterations 10-60 --arrival-window-s 12 \
              --cluster resources/clusters/dl-scheduling.json     # the authors' kind of workload
  fulcrum-sim --list-models > my-models.csv    # edit, then --models my-models.csv
  fulcrum-sim --elastic eps --generate ps-mixed-120 \
              --tenants resources/clusters/tenants-3.json --compare-tenants   # docs/scheduling.md
)";

constexpr const char* kFormats = R"(
Workload file (CSV): the header 'name,model,gpus,iterations,arrival_s', then one job a line;
a model is one of --models: 'table3' (default: the paper's Table III, vgg16, resnet50,
inception-v3, lstm-ptb), 'estimates' (Fulcrum's earlier estimates of the same four) or a
models file with the header 'model,size_mb,forward_ms,backward_ms,batch,memory_mb' in
Table III's units ('--list-models' prints the chosen set in that format).
Cluster file (JSON, every field optional): {"servers": 16, "gpus_per_server": 4,
"gpu_memory_gb": 16, "intra_server_b": 1e-10, "network": {"a": 6.69e-4, "b": 8.53e-10, "eta": 2.35e-10}}.
Without --cluster: the paper's 16 servers x 4 V100 (16 GB) on 10 Gbps Ethernet.
'--generate microsoft-N' draws N jobs in the paper's Microsoft-trace mix (of 160: 80 x 1 GPU,
14 x 2, 26 x 4, 30 x 8, 8 x 16, 2 x 32), with --iterations (default 1000-6000) iterations,
arriving over --arrival-window-s (default 20 minutes per 160 jobs).
With --elastic: the workload CSV header is 'name,model,workers,servers,iterations,arrival_s';
'--generate ps-mixed-N' draws N jobs with Poisson arrivals (mean gap 120 s), 2-8 workers,
1-4 servers, 500-3,000 iterations. The cluster's slots are its servers x GPUs.
Tenants file (JSON, a cluster file's sections): {"tenants": {"T": {"gpus": N, "borrow": true,
"weight": 1}}, "rigid_borrowers": "wait"|"requeue"}; a generated workload's jobs are dealt to
its tenants in bursts of 2 to 8 arrivals, each tenant's bursts in proportion to its quota.
Exit status: 0 done, 1 bad input or failure, 2 bad arguments.
)";

// The jobs simulated so far, on the tools' common progress display.
class Progress {
public:
    void operator()(double fraction) { bar_.update(fraction, "of the jobs done"); }
    ~Progress() { bar_.finish(); }

private:
    fulcrum::ProgressBar bar_ { stderr };
};

struct ElasticArgs {
    std::string policy, cluster_file, workload_file, generate, csv_dir, export_live, tenants_file;
    bool compare_tenants = false;
    sched::ModelCatalogue models = sched::ModelCatalogue::table3();
    sched::ElasticOptions options;
    bool json = false;
    double restart_s = 30;
};

std::string format_number(double x)
{
    char text[32];
    std::snprintf(text, sizeof text, "%g", x);
    return text;
}

// --compare-tenants: the same jobs under one FIFO queue (no quotas), quotas only (nobody
// borrows) and the file's quotas with its borrowing, as a Markdown table for
// docs/scheduling.md.
int compare_tenants(const sched::PsClusterModel& cluster, const std::vector<sched::PsJobSpec>& jobs,
    const sched::ElasticOptions& options)
{
    struct Mode {
        const char* name;
        sched::TenantQuotas tenants;
    };
    sched::TenantQuotas quotas_only = options.tenants;
    for (auto& [name, quota] : quotas_only.named)
        quota.borrow = false;
    const Mode modes[]
        = { { "FIFO (no quotas)", {} }, { "quotas only", quotas_only }, { "quotas with borrowing", options.tenants } };
    std::printf("| scheduling |");
    for (const auto& [name, quota] : options.tenants.named)
        std::printf(" %s: avg JCT (s) |", name.c_str());
    std::printf(" worst tenant's slowdown | slots allocated | slots training |\n|---|");
    for (std::size_t i = 0; i < options.tenants.named.size(); ++i)
        std::printf("---:|");
    std::printf("---:|---:|---:|\n");
    for (const Mode& mode : modes) {
        sched::ElasticOptions o = options;
        o.tenants = mode.tenants;
        const sched::ElasticResult result = sched::simulate_elastic(cluster, jobs, o);
        const std::vector<sched::TenantOutcome> tenants = sched::tenant_outcomes(result, cluster);
        double worst = 0;
        std::string worst_name;
        std::printf("| %s |", mode.name);
        for (const auto& entry : options.tenants.named) {
            const std::string& name = entry.first;
            const auto t = std::find_if(
                tenants.begin(), tenants.end(), [&](const sched::TenantOutcome& x) { return x.tenant == name; });
            if (t == tenants.end()) {
                std::printf(" - |");
                continue;
            }
            std::printf(" %.0f |", t->avg_jct);
            if (t->slowdown > worst) {
                worst = t->slowdown;
                worst_name = name;
            }
        }
        std::printf(" %.2f (%s) | %.1f %% | %.1f %% |\n", worst, worst_name.c_str(), 100 * result.allocated_util,
            100 * result.cpu_util);
        for (const auto& r : result.rejected)
            std::fprintf(stderr, "fulcrum-sim: %s: job %d (%s) rejected: %s\n", mode.name, r.job.id, r.job.name.c_str(),
                r.reason.c_str());
    }
    return 0;
}

int run_elastic(ElasticArgs& a)
{
    const auto policy = sched::parse_elastic_policy(a.policy);
    if (!policy) {
        std::cerr << "fulcrum-sim: --elastic: expected eps, static or kill-restart, got '" << a.policy << "'\n";
        return 2;
    }
    a.options.policy = *policy;
    try {
        const sched::ClusterSpec spec
            = a.cluster_file.empty() ? sched::ClusterSpec {} : sched::load_cluster(a.cluster_file);
        sched::PsClusterModel cluster = sched::ps_cluster_model(spec);
        cluster.restart_s = a.restart_s;
        a.options.tenants = a.tenants_file.empty() ? spec.tenants : sched::load_cluster(a.tenants_file).tenants;
        if (a.options.tenants.total_gpus() > cluster.slots) {
            std::cerr << "fulcrum-sim: --tenants: the tenants' quotas add up to " << a.options.tenants.total_gpus()
                      << " slots; the cluster has " << cluster.slots << "\n";
            return 1;
        }
        if (!a.tenants_file.empty() && !a.options.tenants.active()) {
            std::cerr << "fulcrum-sim: --tenants: " << a.tenants_file << " names no tenants (expected a \"tenants\" "
                      << "section)\n";
            return 1;
        }
        if (a.compare_tenants && !a.options.tenants.active()) {
            std::cerr << "fulcrum-sim: --compare-tenants: "
                      << (a.tenants_file.empty() ? a.cluster_file : a.tenants_file)
                      << " names no tenants (expected a \"tenants\" section)\n";
            return 1;
        }
        if (a.options.tenants.active() && a.generate.empty()) {
            std::cerr << "fulcrum-sim: --tenants: a workload file names no tenants; use --generate ps-mixed-N, whose "
                         "jobs are dealt to the tenants\n";
            return 2;
        }
        std::vector<sched::PsJobSpec> jobs;
        if (!a.generate.empty()) {
            const auto n = numbered_name(a.generate, "ps-mixed-");
            if (!n || *n > 1'000'000) {
                std::cerr
                    << "fulcrum-sim: --generate: with --elastic, expected ps-mixed-N with N from 1 to 1000000, got '"
                    << a.generate << "'\n";
                return 2;
            }
            std::vector<sched::TenantShareOfArrivals> tenants; // each tenant's load in proportion to its quota
            for (const auto& [name, quota] : a.options.tenants.named)
                tenants.push_back({ name, std::max(1, quota.gpus) * 1.0 });
            jobs = sched::generate_ps_workload({ .jobs = *n,
                .mean_gap_s = 120,
                .seed = a.options.seed,
                .models = a.models,
                .tenants = std::move(tenants) });
        } else {
            jobs = sched::load_ps_workload(a.workload_file, a.models);
        }
        if (!a.export_live.empty()) { // the same jobs for a live fulcrumd, instead of simulating them
            sched::export_live_workload(jobs, spec, cluster, a.export_live);
            std::printf("%zu jobs for fulcrumd in %s: workload.csv (fulcrumctl submit-workload), jobs/, cluster.json "
                        "(fulcrumd --cluster)\n",
                jobs.size(), a.export_live.c_str());
            return 0;
        }
        if (a.compare_tenants)
            return compare_tenants(cluster, jobs, a.options);
        Progress progress;
        a.options.progress = [&](double f) { progress(f); };
        const sched::ElasticResult result = sched::simulate_elastic(cluster, std::move(jobs), a.options);
        for (const auto& r : result.rejected)
            std::cerr << "fulcrum-sim: job " << r.job.id << " (" << r.job.name << ") rejected: " << r.reason << "\n";
        if (!a.csv_dir.empty())
            sched::write_elastic_csv(result, a.csv_dir);
        if (a.json) {
            std::cout << sched::elastic_metrics_json(result, a.options) << "\n";
            return 0;
        }
        std::vector<double> jct, feedback;
        int feedback_at_finish = 0;
        for (const auto& j : result.jobs) {
            jct.push_back(j.jct());
            feedback.push_back(j.feedback_latency());
            feedback_at_finish += j.feedback_at_finish ? 1 : 0;
        }
        std::printf("elastic policy %s, %d slots\n", a.policy.c_str(), cluster.slots);
        std::printf("  jobs finished            %zu (%zu rejected)\n", result.jobs.size(), result.rejected.size());
        std::printf("  average JCT              %.1f s\n", sched::mean_of(jct));
        std::printf("  median JCT               %.1f s\n", sched::median_of(jct));
        std::printf("  early-feedback latency   %.1f s on average (%s", sched::mean_of(feedback),
            sched::to_string(a.options.feedback).c_str());
        if (feedback_at_finish > 0)
            std::printf("; %d jobs never reached it and count at their finish", feedback_at_finish);
        std::printf(")\n");
        std::printf("  makespan                 %.1f s\n", result.makespan);
        std::printf("  CPU utilization          %.1f %% training, %.1f %% allocated\n", 100 * result.cpu_util,
            100 * result.allocated_util);
        for (const auto& c : result.changes)
            std::printf("  %-24s %d, %.2f s each\n", c.change.c_str(), c.count, c.total_s / c.count);
        if (a.options.tenants.active())
            for (const sched::TenantOutcome& t : sched::tenant_outcomes(result, cluster)) {
                const sched::TenantQuota q = a.options.tenants.of(t.tenant);
                std::printf("  tenant %-17s %d jobs, average JCT %.1f s, slowdown %.2f (quota %d slots%s)\n",
                    t.tenant.c_str(), t.jobs, t.avg_jct, t.slowdown, q.gpus,
                    q.borrow ? (", borrows at weight " + format_number(q.weight)).c_str() : "");
            }
        return 0;
    } catch (const InputError& e) {
        std::cerr << "fulcrum-sim: " << e.source() << (e.field().empty() ? "" : ": " + e.field()) << ": " << e.reason()
                  << "\n";
    } catch (const std::exception& e) {
        std::cerr << "fulcrum-sim: " << e.what() << "\n";
    }
    return 1;
}

} // namespace

int run(int argc, char** argv)
{
    po::options_description visible("Options");
    std::string cluster_file, workload_file, generate, csv_dir;
    sched::SimulationOptions options;
    visible.add_options()("help,h", "show this help")("version", "print the version and exit")(
        "cluster", po::value(&cluster_file), "cluster description (JSON); default: 16 servers x 4 GPUs")(
        "workload", po::value(&workload_file), "jobs to run (CSV)")("generate", po::value(&generate),
        "generated workload instead of a file: microsoft-N (e.g. microsoft-160)")("iterations",
        po::value<std::string>()->default_value("1000-6000"),
        "--generate microsoft-N: each job's iterations, drawn uniformly from MIN-MAX")("arrival-window-s",
        po::value<double>(),
        "--generate microsoft-N: arrivals uniform over this many seconds (default 1200 per 160 jobs)")("models",
        po::value<std::string>()->default_value("table3"),
        "the models jobs name: table3 (the paper's Table III), estimates, or a models file (CSV)")(
        "list-models", "print the chosen models in the models-file format and exit")(
        "placement", po::value(&options.placement)->default_value("lwf-1"), "rand, ff, ls or lwf-K (K >= 1)")("comm",
        po::value(&options.comm)->default_value("ada-srsf"),
        "communication scheduler: srsf-N (N >= 1) or ada-srsf")("seed", po::value(&options.seed)->default_value(1),
        "random seed (generated workload, rand placement)")("exclusive-gpus", po::bool_switch(&options.exclusive_gpus),
        "a GPU holds one job at a time (default: jobs share GPUs in time)")(
        "json", "print the metrics as one JSON object (avg_jct, median_jct, p95_jct, makespan, gpu_util, ...)")(
        "csv", po::value(&csv_dir), "write jobs.csv, jct_cdf.csv and utilization.csv into this folder")("out",
        po::value<std::string>(),
        "record the schedule (jobs and per-GPU timeline) as a new run in this run store, for the console")("elastic",
        po::value<std::string>(),
        "simulate parameter-server jobs under elastic scheduling: eps, static or kill-restart")(
        "round-s", po::value<double>()->default_value(60), "--elastic: seconds between growth rounds")("feedback",
        po::value<std::string>()->default_value("fraction:0.1"),
        "--elastic: a job's early-feedback point: fraction:F of its samples, iterations:N at its requested size, "
        "or accuracy:A on its modelled learning curve (docs/scheduling.md)")("restart-s",
        po::value<double>()->default_value(30),
        "--elastic kill-restart: cost of one restart besides checkpointing")("export-live", po::value<std::string>(),
        "--elastic: write the workload for a live fulcrumd into this folder instead of simulating it: "
        "workload.csv for fulcrumctl submit-workload, jobs/*.json, cluster.json for fulcrumd --cluster "
        "(scripts/elastic-cross-check.sh)")("tenants", po::value<std::string>(),
        "--elastic: tenants' quotas of the slots, borrowing and weights: the \"tenants\" section of this JSON file (a "
        "cluster file's; default: --cluster's)")("compare-tenants",
        "--elastic --tenants: run the same jobs with no quotas (FIFO), quotas only and quotas with borrowing, and "
        "print "
        "each tenant's average JCT, the worst tenant's slowdown and the utilization as a Markdown table");
    po::variables_map vm;
    try {
        po::store(po::parse_command_line(argc, argv, visible), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        std::cerr << "fulcrum-sim: " << e.what() << "\nTry 'fulcrum-sim --help'.\n";
        return 2;
    }
    if (vm.count("help")) {
        std::cout << kUsage << "\n" << visible << kFormats;
        return 0;
    }
    if (vm.count("version")) {
        std::cout << "fulcrum-sim " FULCRUM_VERSION "\n";
        return 0;
    }
    std::optional<sched::ModelCatalogue> models;
    try {
        models = sched::ModelCatalogue::named_or_file(vm["models"].as<std::string>());
    } catch (const InputError& e) {
        std::cerr << "fulcrum-sim: --models: " << e.source() << (e.field().empty() ? "" : ": " + e.field()) << ": "
                  << e.reason() << "\n";
        return 1;
    }
    if (vm.count("list-models")) {
        std::cout << models->csv();
        return 0;
    }
    if (workload_file.empty() == generate.empty()) {
        std::cerr << "fulcrum-sim: give exactly one of --workload FILE and --generate microsoft-N (or ps-mixed-N with "
                     "--elastic)\n"
                     "Try 'fulcrum-sim --help'.\n";
        return 2;
    }
    if (vm.count("elastic")) {
        if (!vm["placement"].defaulted() || !vm["comm"].defaulted()) {
            std::cerr << "fulcrum-sim: --placement and --comm schedule GPU jobs; they do not apply with --elastic\n";
            return 2;
        }
        ElasticArgs a;
        a.policy = vm["elastic"].as<std::string>();
        a.cluster_file = cluster_file;
        a.workload_file = workload_file;
        a.generate = generate;
        a.csv_dir = csv_dir;
        a.models = *models;
        a.json = vm.count("json") > 0;
        a.options.seed = options.seed;
        a.options.round_s = vm["round-s"].as<double>();
        try {
            a.options.feedback = sched::parse_early_feedback(vm["feedback"].as<std::string>());
        } catch (const std::invalid_argument& e) {
            std::cerr << "fulcrum-sim: --feedback: " << e.what() << "\n";
            return 2;
        }
        a.restart_s = vm["restart-s"].as<double>();
        if (vm.count("export-live"))
            a.export_live = vm["export-live"].as<std::string>();
        if (vm.count("tenants"))
            a.tenants_file = vm["tenants"].as<std::string>();
        a.compare_tenants = vm.count("compare-tenants") > 0;
        if (a.compare_tenants && (a.json || !a.csv_dir.empty() || !a.export_live.empty())) {
            std::cerr << "fulcrum-sim: --compare-tenants prints a table of three runs; --json, --csv and --export-live "
                         "describe one run\n";
            return 2;
        }
        if (a.compare_tenants && a.tenants_file.empty() && a.cluster_file.empty()) {
            std::cerr << "fulcrum-sim: --compare-tenants needs --tenants FILE (or a --cluster file with tenants)\n";
            return 2;
        }
        if (!(a.options.round_s > 0) || !(a.restart_s >= 0)) {
            std::cerr << "fulcrum-sim: --round-s must be positive and --restart-s at least 0\n";
            return 2;
        }
        if (vm.count("out")) {
            std::cerr << "fulcrum-sim: --out records the GPU schedule; it is not available with --elastic yet\n";
            return 2;
        }
        return run_elastic(a);
    }
    options.record_spans = vm.count("out") > 0;
    try {
        const sched::ClusterSpec cluster
            = cluster_file.empty() ? sched::ClusterSpec {} : sched::load_cluster(cluster_file);
        std::vector<sched::JobSpec> jobs;
        if (!generate.empty()) {
            const auto n = numbered_name(generate, "microsoft-");
            if (!n || *n > 10'000'000) {
                std::cerr << "fulcrum-sim: --generate: expected microsoft-N with N from 1 to 10000000, got '"
                          << generate << "'\n";
                return 2;
            }
            sched::WorkloadGenerator g;
            g.jobs = *n;
            g.horizon_s = vm.count("arrival-window-s") ? vm["arrival-window-s"].as<double>() : 20.0 * 60.0 * *n / 160.0;
            if (!(g.horizon_s >= 0) || !std::isfinite(g.horizon_s)) {
                std::cerr << "fulcrum-sim: --arrival-window-s: expected seconds >= 0, got " << g.horizon_s << "\n";
                return 2;
            }
            const auto range = sched::parse_iteration_range(vm["iterations"].as<std::string>());
            if (!range) {
                std::cerr << "fulcrum-sim: --iterations: expected MIN-MAX with 1 <= MIN <= MAX (e.g. 10-60), got '"
                          << vm["iterations"].as<std::string>() << "'\n";
                return 2;
            }
            g.min_iterations = range->first;
            g.max_iterations = range->second;
            g.seed = options.seed;
            g.models = *models;
            jobs = sched::generate_workload(g);
        } else {
            if (!vm["iterations"].defaulted() || vm.count("arrival-window-s")) {
                std::cerr << "fulcrum-sim: --iterations and --arrival-window-s shape a generated workload; they do "
                             "not apply to --workload\n";
                return 2;
            }
            jobs = sched::load_workload(workload_file, *models);
        }
        try {
            sched::make_placement(options.placement, 0);
        } catch (const std::invalid_argument& e) {
            std::cerr << "fulcrum-sim: --placement: " << e.what() << "\n";
            return 2;
        }
        try {
            sched::make_scheduled_comm_policy(options.comm, cluster.network);
        } catch (const std::invalid_argument& e) {
            std::cerr << "fulcrum-sim: --comm: " << e.what() << "\n";
            return 2;
        }
        Progress progress;
        options.progress = [&](double f) { progress(f); };
        const auto start = std::chrono::steady_clock::now();
        const sched::SimulationResult result = sched::simulate(cluster, std::move(jobs), options);
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        for (const auto& r : result.rejected)
            std::cerr << "fulcrum-sim: job " << r.job.id << " (" << r.job.name << ") rejected: " << r.reason << "\n";
        for (const auto& r : result.never_ran)
            std::cerr << "fulcrum-sim: job " << r.job.id << " (" << r.job.name << ") " << r.reason << "\n";
        if (!csv_dir.empty())
            sched::write_csv_reports(result, csv_dir, options.utilization_bin_s);
        if (vm.count("out")) {
            const std::string description = "fulcrum-sim "
                + (generate.empty() ? "--workload " + workload_file
                                    : "--generate " + generate + " --iterations " + vm["iterations"].as<std::string>()
                            + (vm.count("arrival-window-s")
                                    ? " --arrival-window-s " + std::to_string(vm["arrival-window-s"].as<double>())
                                    : ""))
                + " --models " + vm["models"].as<std::string>()
                + (cluster_file.empty() ? "" : " --cluster " + cluster_file) + " --placement " + options.placement
                + " --comm " + options.comm + " --seed " + std::to_string(options.seed);
            const RunId run = sched_store::write_schedule(vm["out"].as<std::string>(),
                options.placement + " + " + options.comm, description, options.seed, result);
            std::cerr << "fulcrum-sim: schedule recorded as run " << run << " in " << vm["out"].as<std::string>()
                      << "\n";
        }
        if (vm.count("json")) {
            std::cout << sched::metrics_json(result) << "\n";
        } else {
            std::printf("placement %s, communication %s, %d GPUs\n", result.placement.c_str(), result.comm.c_str(),
                cluster.gpus());
            std::printf("  jobs finished     %zu (%zu rejected)\n", result.jobs.size(), result.rejected.size());
            std::printf("  average JCT       %.1f s\n", result.average_jct_s());
            std::printf("  median JCT        %.1f s\n", result.median_jct_s());
            std::printf("  95th pct JCT      %.1f s\n", result.percentile_jct_s(0.95));
            std::printf("  makespan          %.1f s\n", result.makespan_s);
            std::printf("  GPU utilization   %.1f %%\n", 100 * result.gpu_utilization);
            std::printf("  simulated         %lld tasks in %.2f s\n", static_cast<long long>(result.tasks), wall);
        }
        return result.never_ran.empty() ? 0 : 1;
    } catch (const InputError& e) {
        std::cerr << "fulcrum-sim: " << e.source() << (e.field().empty() ? "" : ": " + e.field()) << ": " << e.reason()
                  << "\n";
    } catch (const std::exception& e) {
        std::cerr << "fulcrum-sim: " << e.what() << "\n";
    }
    return 1;
}

int main(int argc, char** argv)
{
    try {
        return run(argc, argv);
    } catch (const std::exception& e) { // what run() does not turn into a message itself
        std::cerr << "fulcrum-sim: " << e.what() << "\n";
        return 1;
    }
}
