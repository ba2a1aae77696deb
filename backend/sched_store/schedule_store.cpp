#include "sched_store/schedule_store.h"

#include "db/run_recorder.h"
#include "sched/sim_report.h"

namespace fulcrum::sched_store {

namespace {

std::string gpu_list(const std::vector<int>& gpus)
{
    std::string text;
    for (int g : gpus)
        text += (text.empty() ? "" : " ") + std::to_string(g);
    return text;
}

db::ScheduledJob unscheduled(const sched::JobSpec& job, const std::string& status)
{
    return { job.id, job.name, job.model.name, job.gpus, job.iterations, job.arrival_s, std::nullopt, std::nullopt, "",
        status };
}

} // namespace

RunId write_schedule(const std::filesystem::path& path, const std::string& name, const std::string& description,
    std::uint64_t seed, const sched::SimulationResult& result)
{
    std::vector<db::ScheduledJob> jobs;
    for (const sched::JobOutcome& j : result.jobs)
        jobs.push_back({ j.job.id, j.job.name, j.job.model.name, j.job.gpus, j.job.iterations, j.job.arrival_s,
            j.placed_s, j.finish_s, gpu_list(j.gpus), "finished" });
    for (const sched::RejectedJob& r : result.rejected)
        jobs.push_back(unscheduled(r.job, "rejected: " + r.reason));
    for (const sched::RejectedJob& r : result.never_ran)
        jobs.push_back(unscheduled(r.job, "never ran: " + r.reason));

    std::vector<db::ScheduleSpan> spans;
    spans.reserve(result.spans.size());
    for (const sched::TimelineSpan& s : result.spans) {
        const bool compute = s.kind == sched::TimelineSpan::Kind::Compute;
        spans.push_back(
            { compute ? "compute" : "all-reduce", compute ? std::optional<std::int32_t>(s.gpu) : std::nullopt, s.job,
                s.start_s, s.end_s, s.first_iteration, s.iterations, s.contention });
    }

    db::RunRecorder recorder(path);
    db::RunInfo run;
    run.name = name;
    run.scenario_json = description;
    run.mode = "simulated";
    run.seed = seed;
    const RunId id = recorder.begin_run(run);
    recorder.record_schedule(jobs, spans);
    recorder.finish_run("finished", sched::metrics_json(result));
    return id;
}

} // namespace fulcrum::sched_store
