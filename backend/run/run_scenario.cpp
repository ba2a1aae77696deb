#include "run/run_scenario.h"

#include "common/error.h"
#include "data/fashion_mnist.h"
#include "data/synthetic.h"
#include "db/run_reader.h"
#include "db/run_recorder.h"
#include "run/recorded_shares.h"
#include "run/recording_observer.h"
#include "run/run_external.h"
#include "train/trainer.h"

#include <algorithm>
#include <boost/json.hpp>

namespace fulcrum::run {

data::TrainTest load_scenario_data(const scenario::Scenario& s, std::uint64_t seed)
{
    if (s.data.source == "synthetic") {
        data::SyntheticSpec spec;
        spec.train_size = s.data.train_size;
        spec.test_size = s.data.test_size;
        spec.dim = s.data.dim;
        spec.classes = s.data.classes;
        spec.seed = seed;
        return data::make_synthetic(spec);
    }
    return data::load_fashion_mnist(s.data.path);
}

namespace {

train::ClockMode clock_mode(scenario::Mode mode)
{
    switch (mode) {
    case scenario::Mode::Paced:
        return train::ClockMode::Paced;
    case scenario::Mode::Real:
        return train::ClockMode::Real;
    case scenario::Mode::Virtual:
        break;
    }
    return train::ClockMode::Virtual;
}

std::string profile_json(const train::WorkerSetup& w)
{
    boost::json::object o;
    o["speed"] = w.cpu.speed;
    o["memory_need"] = w.cpu.memory_need;
    o["overhead_s"] = w.cpu.overhead_s;
    o["device"] = perf::to_string(w.device);
    if (w.device.sms)
        o["sms"] = *w.device.sms;
    o["bandwidth_gbps"] = w.network.bandwidth_gbps;
    o["latency_s"] = w.network.latency_s;
    o["noise_sigma"] = w.cpu.noise.sigma;
    o["spike_probability"] = w.cpu.noise.spike_probability;
    o["spike_factor"] = w.cpu.noise.spike_factor;
    o["resource_points"] = w.resources.size();
    o["colocated_arrivals_per_hour"] = w.colocated ? w.colocated->arrivals_per_hour : 0.0;
    if (w.competing) {
        o["competing_run_probability"] = w.competing->run_probability;
        o["competing_cpu"] = w.competing->cpu;
    }
    if (w.gpu) {
        o["gpu"] = w.gpu->device;
        o["gpu_peak_speed"] = w.gpu->peak_speed;
        o["gpu_memory_gb"] = w.gpu->memory_gb;
        o["batch_limit"] = w.gpu->batch_limit();
    }
    if (!w.network.changes.empty()) {
        boost::json::array changes;
        for (const auto& c : w.network.changes)
            changes.push_back(
                boost::json::object { { "at_iteration", c.at_iteration }, { "bandwidth_gbps", c.bandwidth_gbps } });
        o["bandwidth_changes"] = std::move(changes);
    }
    return boost::json::serialize(o);
}

} // namespace

RunSummary run_scenario(const scenario::Scenario& s, const RunOptions& options)
{
    if (s.external)
        return run_external_job(s, options);
    const auto say = [&](const std::string& text) {
        if (options.status)
            options.status(text);
    };
    const std::uint64_t seed = options.seed.value_or(s.seed);
    const scenario::Mode mode = options.mode.value_or(s.mode);

    std::unique_ptr<db::RunRecorder> recorder;
    if (options.database)
        recorder = std::make_unique<db::RunRecorder>(*options.database);

    if (!options.data)
        say("loading " + s.data.source + " data");
    const data::TrainTest data = options.data ? *options.data : load_scenario_data(s, seed);

    train::TrainerConfig config;
    // fulcrumd's id for the job; a resumed one keeps its checkpoint's (fulcrum-run's job is 0).
    config.job = options.job.value_or(options.resume ? options.resume->checkpoint.job : 0);
    config.train = data.train;
    config.test = data.test;
    try {
        config.prototype = model::make_model(s.model, data.train->dim(), data.train->classes);
    } catch (const std::invalid_argument& e) {
        throw InputError(s.source, "model", e.what());
    }
    if (s.server_shards > config.prototype->parameter_count())
        throw InputError(s.source, "servers.shards", "exceeds the model's parameter count");
    config.workers = s.workers;
    const bool has_remote = std::any_of(s.workers.begin(), s.workers.end(), [](const auto& w) { return w.remote; });
    if (has_remote && !options.remote)
        throw InputError(s.source, "workers",
            "has remote workers; only fulcrumd can run them (fulcrum-worker processes join through it)");
    if (has_remote && mode != scenario::Mode::Real)
        throw InputError(s.source, "mode", "remote workers compute on their own clocks: the mode must be real");
    config.remote = has_remote ? options.remote : nullptr;
    config.total_batch = s.total_batch;
    config.optimizer = s.optimizer;
    config.aggregation = s.aggregation;
    config.server_shards = s.server_shards;
    config.server_links = s.server_links;
    config.iterations = scenario::planned_iterations(s, data.train->size());
    config.eval_interval = s.eval_interval;
    config.sync = s.sync;
    config.comm_model_mb = s.comm_model_mb;
    config.target_accuracy = s.target_accuracy;
    config.mode = clock_mode(mode);
    config.pace = options.pace.value_or(s.pace);
    config.shared_clock = options.shared_clock;
    config.comm_gate = options.comm_gate;
    config.seed = seed;
    config.threads = options.threads.value_or(s.threads);
    config.elastic.initial_workers = s.elastic.initial_workers;
    config.elastic.min_workers = s.elastic.min_workers;
    config.elastic.pause_s = s.elastic.pause_s;
    config.elastic.max_workers = s.elastic.max_workers;
    config.elastic.partition_data = s.elastic.partition_data;
    config.elastic.batch_per_worker = s.elastic.batch_per_worker;
    for (const scenario::ResizeSpec& r : s.elastic.resizes)
        config.elastic.resizes.push_back(
            { r.before_iteration, { *parse_resize_action(r.action), r.target, EventActor::scenario(), {}, {} } });

    const bool asynchronous = !sync::closes_every_iteration(s.sync.type);
    const std::string sync_name(sync::to_string(s.sync.type));
    if (asynchronous && balance::balances_at_barriers(s.policy.type))
        throw InputError(s.source, "policy.type",
            "is '" + s.policy.type + "', but " + sync_name
                + " has no barrier to balance at; use uniform (or a BSP-family sync model)");
    std::vector<std::int32_t> limits;
    for (const auto& w : config.workers)
        limits.push_back(w.gpu ? w.gpu->batch_limit() : 0);
    if (options.resume && !recorder)
        throw InputError(s.source, "", "a job resumes into its run store: give the database");
    // A resumed job runs the policy in effect at its checkpoint: an operator may have
    // changed the scenario's.
    balance::PolicySpec policy = s.policy;
    std::string policy_json;
    if (options.resume && !options.resume->checkpoint.policy_json.empty()) {
        policy_json = options.resume->checkpoint.policy_json;
        policy = scenario::parse_policy_section(policy_json, s, s.source + " (checkpoint's policy)",
            options.resume->paths ? *options.resume->paths : paths_as_given());
    }
    std::unique_ptr<balance::BatchSizeManager> manager;
    try {
        manager = balance::make_manager(policy, static_cast<int>(config.workers.size()), s.total_batch, limits);
        manager->keep_policy_spec_json(policy_json); // carried into the next checkpoint
        manager->set_min_batch(s.min_batch);
    } catch (const std::invalid_argument& e) {
        throw InputError(s.source, "policy", e.what());
    }
    // The starting sizes must fit every GPU's memory (x_o), or the job cannot start.
    const auto start = balance::make_policy(s.policy)->initial(static_cast<int>(limits.size()), s.total_batch);
    for (std::size_t i = 0; i < limits.size(); ++i)
        if (limits[i] > 0 && start.batch_sizes[i] > limits[i])
            throw InputError(s.source,
                s.policy.batch_sizes.empty() ? "training.total_batch" : "policy.batch_sizes[" + std::to_string(i) + "]",
                "gives worker " + std::to_string(i) + " (" + config.workers[i].name + ") a batch of "
                    + std::to_string(start.batch_sizes[i]) + " samples, above its GPU memory limit of "
                    + std::to_string(limits[i]) + " samples");

    RunSummary summary;
    summary.scenario = s.name;
    summary.mode = scenario::to_string(mode);
    summary.seed = seed;
    summary.model = config.prototype->name();
    summary.workers = static_cast<int>(config.workers.size());
    summary.sync = sync::describe(s.sync);
    summary.policy = manager->policy().name();

    config.stall = s.stall;
    if (recorder) {
        config.checkpoint_every = s.checkpoint.every_iterations;
        config.checkpoint_seconds = s.checkpoint.every_seconds;
    }
    for (const scenario::ScheduledChange& change : s.changes) {
        train::ScheduledRequest request;
        request.before_iteration = change.before_iteration;
        if (change.policy)
            request.what = "set-policy " + change.policy->type;
        if (change.sync)
            request.what
                += std::string(request.what.empty() ? "" : " and ") + "set-sync-model " + sync::describe(*change.sync);
        request.make = [change](train::JobControl& control) {
            // The sync model first: a switch to bsp must be asked for before a policy that
            // needs its barriers.
            if (change.sync)
                control.set_sync_model(*change.sync, EventActor::scenario());
            if (change.policy)
                control.set_policy(balance::make_policy(*change.policy), change.policy->manager, EventActor::scenario(),
                    change.policy_json);
        };
        config.scheduled.push_back(std::move(request));
    }
    if (recorder && options.resume) {
        const db::Checkpoint& c = options.resume->checkpoint;
        if (c.job == 0) // a store an earlier release wrote, whose rows are job 0's: they go on so
            config.job = 0;
        if (c.job != config.job)
            throw InputError(
                options.database->string(), "checkpoint", "is job " + std::to_string(c.job) + "'s, not this job's");
        summary.run = options.resume->run;
        summary.database = options.database->string();
        // The store is changed only once the trainer has taken the checkpoint (below): a
        // damaged one leaves every recorded row where it was.
    } else if (recorder) {
        db::RunInfo info;
        info.name = s.name;
        info.scenario_json = s.json;
        info.mode = summary.mode;
        info.seed = seed;
        info.tenant = options.tenant;
        summary.run = recorder->begin_run(info);
        summary.database = options.database->string();
        db::JobInfo job;
        job.id = config.job;
        job.name = s.name;
        job.model = summary.model;
        job.parameters = config.prototype->parameter_count();
        job.sync_model = summary.sync;
        job.policy = summary.policy;
        job.total_batch = s.total_batch;
        job.learning_rate = s.optimizer.learning_rate;
        job.aggregation = s.aggregation == ps::Aggregation::Weighted ? "weighted" : "naive";
        job.iterations = config.iterations;
        recorder->add_job(job);
        for (std::size_t i = 0; i < config.workers.size(); ++i)
            recorder->add_worker({ config.job, static_cast<WorkerId>(i), config.workers[i].name,
                config.workers[i].gpu ? "gpu" : "cpu", profile_json(config.workers[i]) });
        for (JobEvent e : options.recorded_before) {
            e.job = config.job;
            e.iteration = 0;
            e.time_s = 0;
            recorder->record_event(record(e));
        }
    }

    if (options.on_model)
        options.on_model(summary.model);
    say("training " + summary.model + " on " + std::to_string(summary.workers) + " workers"
        + (s.elastic.initial_workers > 0 ? " (elastic: " + std::to_string(s.elastic.initial_workers) + " at the start)"
                                         : ""));
    RecordingObserver observer(recorder.get(), options, config.iterations, static_cast<double>(data.train->size()));
    if (config.elastic.batch_per_worker > 0) // weak scaling: the job ends on its samples
        observer.count_work_in_samples(config.total_batch);
    // With scheduled changes among barrier models, the summary reports each setting's
    // iterations: the same cluster under uniform BSP and under LB-BSP, say.
    const bool barriers_throughout = sync::closes_every_iteration(s.sync.type)
        && std::all_of(s.changes.begin(), s.changes.end(),
            [](const scenario::ScheduledChange& c) { return !c.sync || sync::closes_every_iteration(c.sync->type); });
    if (!s.changes.empty() && barriers_throughout) {
        std::vector<std::int64_t> boundaries;
        std::vector<std::string> settings;
        std::string policy_now = s.policy.type, sync_now = sync::describe(s.sync);
        settings.push_back(policy_now + ", " + sync_now);
        for (const scenario::ScheduledChange& c : s.changes) {
            boundaries.push_back(c.before_iteration);
            policy_now = c.policy ? c.policy->type : policy_now;
            sync_now = c.sync ? sync::describe(*c.sync) : sync_now;
            settings.push_back(policy_now + ", " + sync_now);
        }
        observer.track_phases(std::move(boundaries), std::move(settings));
    }
    train::TrainingResult result;
    const JobId job_id = config.job;
    try {
        const std::unique_ptr<train::Trainer> trainer
            = train::make_trainer(std::move(config), std::move(manager), observer);
        observer.set_manager(job_id, &trainer->manager());
        if (options.resume) {
            const db::Checkpoint& c = options.resume->checkpoint;
            trainer->resume_from_checkpoint(c.state);
            observer.start_from(trainer->samples_trained());
            const std::vector<EventRecord> recorded = db::RunReader(*options.database).events(options.resume->run);
            // Nothing set aside (a clean stop): the shares at the checkpoint, then the live ones.
            const double until_s
                = recorder->resume_run(options.resume->run, c.iteration, trainer->rows_recorded_through())
                      .value_or(c.time_s);
            trainer->control().follow_recorded_shares(recorded_shares(recorded, c.job, { c.iteration, c.time_s },
                static_cast<int>(trainer->control().workers().size()), options.resume->links, until_s));
            for (JobEvent e : options.recorded_before) {
                e.job = c.job;
                e.iteration = c.iteration;
                e.time_s = c.time_s;
                recorder->record_event(record(e));
            }
        }
        result = run_shown(*trainer, options);
        // An operator may have changed them during the run; the summary says what ended it.
        summary.policy = trainer->manager().policy().name();
        summary.sync = trainer->control().sync_model();
        if (options.on_finish)
            options.on_finish(*trainer);
    } catch (...) {
        record_failure(recorder.get(), "failed");
        throw;
    }

    take_result(summary, result);
    summary.phases = observer.phases();
    finish_recorded_run(recorder.get(), options, summary);
    return summary;
}

} // namespace fulcrum::run
