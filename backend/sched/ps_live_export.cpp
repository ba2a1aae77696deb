#include "sched/ps_live_export.h"

#include "common/error.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace fulcrum::sched {

namespace {

void write_file(const std::filesystem::path& path, const std::string& text)
{
    std::ofstream out(path);
    out << text;
    if (!out.flush())
        throw InputError(path.string(), "", "cannot write the file");
}

} // namespace

LiveJob live_job(const PsJobSpec& job, const PsClusterModel& model, int max_workers)
{
    const ModelTemplate& m = job.model;
    const int workers = std::max(1, job.workers);
    // The live job's total batch is the simulator's at the requested size, each worker
    // computing at the template's pace; its pushes and pulls take the rest of the simulated
    // iteration (both links, the barrier overhead) as a fixed latency per message. It may
    // grow to as many workers as its total batch has samples.
    const std::int64_t total_batch = static_cast<std::int64_t>(workers) * m.batch_size;
    const int slots = static_cast<int>(std::clamp<std::int64_t>(max_workers, workers, total_batch));
    const double compute_s = m.forward_s + m.backward_s;
    const double comm_s = model.iteration_s(m, workers, std::max(1, job.servers)) - compute_s;
    std::ostringstream s;
    s.precision(17);
    s << R"({"name": ")" << job.name << R"(", "mode": "virtual", "seed": )" << job.id + 1
      << R"(, "data": {"source": "synthetic", "train_size": )" << std::max<std::int64_t>(2048, 4 * total_batch)
      << R"(, "test_size": 200, "dim": 8, "classes": 2}, "model": {"type": "softmax"}, "policy": {"type": "uniform"},)"
      << R"( "placement": {"server_gpus": )" << std::max(1, job.servers) << "},"
      << R"( "training": {"total_batch": )" << total_batch << R"(, "iterations": )" << job.iterations
      << R"(, "eval_interval": )" << job.iterations << "}, "
      << R"("workers": [{"speed": )" << static_cast<double>(m.batch_size) / compute_s << R"(, "count": )" << slots
      << R"(, "noise": {"sigma": 0}, "bandwidth_gbps": 1e4, "latency_s": )" << comm_s / 2 << "}], "
      << R"("elastic": {"initial_workers": )" << workers << R"(, "min_workers": 1, "max_workers": )" << slots
      << R"(, "pause_s": {"add-worker": )" << model.add_worker_cost(m) << R"(, "remove-worker": )"
      << model.remove_worker_s << R"(, "restart": )" << model.restart_cost(m) << "}}}\n";
    return { "job-" + std::to_string(job.id) + ".json", s.str(), job.arrival_s };
}

void export_live_workload(const std::vector<PsJobSpec>& jobs, const ClusterSpec& cluster, const PsClusterModel& model,
    const std::filesystem::path& folder)
{
    std::error_code error;
    std::filesystem::create_directories(folder / "jobs", error);
    if (error)
        throw InputError((folder / "jobs").string(), "", "cannot create the folder: " + error.message());
    std::ostringstream workload;
    workload.precision(17);
    workload << "scenario,arrival_s\n";
    for (const PsJobSpec& job : jobs) {
        const LiveJob live = live_job(job, model, cluster.gpus() - std::max(1, job.servers));
        write_file(folder / "jobs" / live.file, live.scenario_json);
        workload << "jobs/" << live.file << "," << live.arrival_s << "\n";
    }
    write_file(folder / "workload.csv", workload.str());
    std::ostringstream c;
    c.precision(17);
    c << R"({"servers": )" << cluster.servers << R"(, "gpus_per_server": )" << cluster.gpus_per_server
      << R"(, "gpu_memory_gb": )" << cluster.gpu_memory_gb << R"(, "network": {"a": )" << cluster.network.a
      << R"(, "b": 1e-18, "eta": 0}})"
      << "\n";
    write_file(folder / "cluster.json", c.str());
}

} // namespace fulcrum::sched
