#include "run/run_external.h"

#include "common/error.h"
#include "run/recording_observer.h"
#include "train/external_trainer.h"

#include <boost/json.hpp>

namespace fulcrum::run {

RunSummary run_external_job(const scenario::Scenario& s, const RunOptions& options)
{
    if (!s.external)
        throw InputError(s.source, "external", "is not an external job");
    if (!options.ranks)
        throw InputError(s.source, "external",
            "is an external job: only fulcrumd runs it, with the ranks that join it (fulcrum_torch)");
    if (options.resume)
        throw InputError(s.source, "external", "an external job keeps no checkpoint to resume from");
    const std::string framework = s.external->framework;

    std::unique_ptr<db::RunRecorder> recorder;
    if (options.database)
        recorder = std::make_unique<db::RunRecorder>(*options.database);

    train::ExternalJobConfig config;
    config.job = options.job.value_or(0);
    for (const scenario::WorkerSpec& w : s.workers)
        config.ranks.push_back(w.name);
    config.total_batch = s.total_batch;
    config.iterations = s.iterations.value_or(1);
    config.eval_interval = s.eval_interval;
    config.stall = s.stall;
    config.plan_ahead = s.external->plan_ahead;

    std::unique_ptr<balance::BatchSizeManager> manager;
    try {
        manager = balance::make_manager(s.policy, static_cast<int>(config.ranks.size()), s.total_batch);
        manager->set_min_batch(s.min_batch);
    } catch (const std::invalid_argument& e) {
        throw InputError(s.source, "policy", e.what());
    }

    RunSummary summary;
    summary.scenario = s.name;
    summary.mode = scenario::to_string(s.mode);
    summary.seed = options.seed.value_or(s.seed);
    summary.model = framework + " (external)";
    summary.workers = static_cast<int>(config.ranks.size());
    summary.sync = sync::describe(s.sync);
    summary.policy = manager->policy().name();
    if (recorder) {
        db::RunInfo info;
        info.name = s.name;
        info.scenario_json = s.json;
        info.mode = summary.mode;
        info.seed = summary.seed;
        info.tenant = options.tenant;
        summary.run = recorder->begin_run(info);
        summary.database = options.database->string();
        db::JobInfo job;
        job.id = config.job;
        job.name = s.name;
        job.model = summary.model;
        job.sync_model = summary.sync;
        job.policy = summary.policy;
        job.total_batch = s.total_batch;
        job.aggregation = "weighted";
        job.iterations = config.iterations;
        recorder->add_job(job);
        for (std::size_t i = 0; i < config.ranks.size(); ++i) {
            const boost::json::object profile { { "framework", framework }, { "rank", i },
                { "rank_timeout_s", s.external->rank_timeout_s } };
            recorder->add_worker(
                { config.job, static_cast<WorkerId>(i), config.ranks[i], "external", boost::json::serialize(profile) });
        }
        for (JobEvent e : options.recorded_before) {
            e.job = config.job;
            recorder->record_event(record(e));
        }
    }
    if (options.status)
        options.status("waiting for " + std::to_string(config.ranks.size()) + " " + framework + " ranks");

    RecordingObserver observer(
        recorder.get(), options, config.iterations, static_cast<double>(s.external->samples_per_epoch));
    observer.set_manager(config.job, manager.get());
    train::TrainingResult result;
    try {
        train::ExternalTrainer trainer(config, std::move(manager), options.ranks, observer);
        result = run_shown(trainer, options);
        summary.policy = trainer.manager().policy().name();
    } catch (const train::RankLost&) {
        record_failure(recorder.get(), "lost");
        throw;
    } catch (...) {
        record_failure(recorder.get(), "failed");
        throw;
    }
    take_result(summary, result);
    summary.epochs = s.external->samples_per_epoch > 0 ? std::optional<double>(
                         static_cast<double>(observer.samples()) / static_cast<double>(s.external->samples_per_epoch))
                                                       : std::nullopt;
    finish_recorded_run(recorder.get(), options, summary);
    return summary;
}

} // namespace fulcrum::run
