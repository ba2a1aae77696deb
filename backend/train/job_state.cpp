#include "train/job_state.h"

#include "model/evaluate.h"

#include <algorithm>
#include <stdexcept>

namespace fulcrum::train {

namespace {

Eigen::VectorXf initial_parameters(const TrainerConfig& config)
{
    if (!config.prototype)
        throw std::invalid_argument("a job needs a model");
    Eigen::VectorXf params(config.prototype->parameter_count());
    config.prototype->initialize(params, config.seed);
    return params;
}

} // namespace

JobState::JobState(TrainerConfig c)
    : config(std::move(c))
    , server(initial_parameters(config), config.server_shards, config.optimizer, config.aggregation)
    , evaluator(config.prototype->clone())
    , run_start(std::chrono::steady_clock::now())
{
    if (config.workers.empty())
        throw std::invalid_argument("a job needs at least one worker");
    for (std::size_t i = 0; i < config.workers.size(); ++i)
        workers.push_back(std::make_unique<Worker>(static_cast<WorkerId>(i), config.workers[i], *config.prototype,
            i < config.worker_data.size() ? config.worker_data[i] : config.train, config.seed));
    // x_o on each GPU worker's device, measured now that every worker of this job holds its
    // resident training set (no worker takes more than the total batch).
    for (const auto& worker : workers)
        worker->measure_batch_limit(config.total_batch);
    const bool real = config.mode == ClockMode::Real;
    release = std::make_unique<BatchRelease>(workers.size(), config.remote.get(), real);
    for (const auto& worker : workers)
        endpoints.push_back(config.remote && config.remote->is_remote(worker->id())
                ? make_remote_endpoint(*worker, *config.remote)
                : make_local_endpoint(*worker, real, real ? release.get() : nullptr));
    if (config.mode != ClockMode::Real
        && std::any_of(endpoints.begin(), endpoints.end(), [](const auto& e) { return e->in_another_process(); }))
        throw std::invalid_argument("remote workers compute on their own clocks: they need the real mode");
    members.assign(workers.size(), true);
    const ElasticSpec& elastic = config.elastic;
    if (elastic.enabled()) {
        if (!config.worker_data.empty())
            throw std::invalid_argument("an elastic job splits one training set; it cannot take per-worker data");
        const int slots = static_cast<int>(workers.size());
        const int initial = elastic.initial_workers > 0 ? elastic.initial_workers : slots;
        if (initial > slots)
            throw std::invalid_argument("elastic.initial_workers is " + std::to_string(initial)
                + " but the job has only " + std::to_string(slots) + " worker slots");
        shares.emplace(config.train->size(), initial);
        for (int i = 0; i < slots; ++i)
            members[static_cast<std::size_t>(i)] = i < initial;
        for (const WorkerId w : shares->members())
            workers[static_cast<std::size_t>(w)]->assign_data(data::indices_of(shares->active(w)));
    }
    model_bytes = config.comm_model_mb ? static_cast<std::int64_t>(*config.comm_model_mb * 1e6)
                                       : static_cast<std::int64_t>(sizeof(float)) * config.prototype->parameter_count();
}

double JobState::wall_seconds() const
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
}

double JobState::transfer_s(std::size_t i, std::int64_t iteration, double last_measured_s) const
{
    return last_measured_s > 0 ? last_measured_s
                               : perf::communication_time(workers[i]->setup().network, model_bytes, iteration);
}

std::vector<std::int32_t> JobState::batch_limits() const
{
    std::vector<std::int32_t> limits;
    for (const auto& w : workers) {
        // The real mode's limit is the device's, as measured; the virtual modes' device is the
        // performance model's, and the real device cannot hold more than it measured either.
        const std::int32_t modelled = w->performance().batch_limit();
        const std::optional<std::int32_t> measured = w->measured_batch_limit();
        if (!measured)
            limits.push_back(modelled);
        else if (config.mode == ClockMode::Real || modelled == 0)
            limits.push_back(*measured);
        else
            limits.push_back(std::min(modelled, *measured));
    }
    return limits;
}

EvaluationRecord JobState::evaluate(std::int64_t iteration, double time_s, double epoch, double train_loss)
{
    const Eigen::VectorXf params = server.parameters();
    const model::Evaluation e = model::evaluate(*evaluator, params, *config.test);
    EvaluationRecord record;
    record.job = config.job;
    record.iteration = iteration;
    record.time_s = time_s;
    record.wall_s = wall_seconds();
    record.epoch = epoch;
    record.train_loss = train_loss;
    record.test_loss = e.loss;
    record.test_accuracy = e.accuracy;
    return record;
}

void JobState::finish(TrainingResult& result, std::int64_t steps, std::int64_t samples, double now, double train_loss,
    TrainingObserver& observer, bool resumable)
{
    result.iterations = steps;
    result.updates = steps;
    result.epochs = static_cast<double>(samples) / static_cast<double>(config.train->size());
    result.time_s = now;
    result.mean_iteration_s = steps > 0 ? now / static_cast<double>(steps) : 0;
    if (steps > 0 && result.final_evaluation.iteration != steps - 1) {
        result.final_evaluation = evaluate(steps - 1, now, result.epochs, train_loss);
        result.best_accuracy = std::max(result.best_accuracy, result.final_evaluation.test_accuracy);
        if (!resumable)
            observer.on_evaluation(result.final_evaluation);
    }
    result.wall_s = wall_seconds();
}

int JobState::member_count() const
{
    return static_cast<int>(std::count(members.begin(), members.end(), true));
}

ResizeRequest JobState::resolved(const ResizeRequest& request) const
{
    if (!shares)
        throw ResizeError("not-elastic", "job " + std::to_string(config.job) + " is not elastic (no elastic section)");
    return resolve_resize(Membership { config.job, members, static_cast<int>(server.shards().size()),
                              server.parameter_count(), config.elastic.min_workers, config.elastic.max_workers },
        request);
}

ResizeOutcome JobState::resize(const ResizeRequest& request)
{
    const auto started = std::chrono::steady_clock::now();
    const ResizeRequest r = resolved(request);
    ResizeOutcome outcome;
    outcome.action = r.action;
    outcome.target = *r.target;
    switch (r.action) {
    case ResizeAction::AddServer:
        outcome.moved_keys = server.add_shard().moved_keys;
        break;
    case ResizeAction::RemoveServer:
        outcome.moved_keys = server.remove_shard(outcome.target).moved_keys;
        break;
    case ResizeAction::AddWorker:
        try {
            outcome.moved_samples = shares->add_worker(outcome.target).moved_samples;
        } catch (const std::invalid_argument& e) {
            throw ResizeError("share-too-small", e.what());
        }
        members[static_cast<std::size_t>(outcome.target)] = true;
        break;
    case ResizeAction::RemoveWorker: {
        const data::ShareChange change = shares->remove_worker(outcome.target);
        outcome.moved_samples = change.moved_samples;
        outcome.reactivated_samples = change.reactivated_samples;
        members[static_cast<std::size_t>(outcome.target)] = false;
        break;
    }
    }
    if (r.action == ResizeAction::AddWorker || r.action == ResizeAction::RemoveWorker)
        for (const WorkerId w : shares->members())
            workers[static_cast<std::size_t>(w)]->assign_data(data::indices_of(shares->active(w)));
    outcome.servers = static_cast<int>(server.shards().size());
    outcome.workers = member_count();
    outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return outcome;
}

JobEvent JobState::event(std::int64_t iteration, double time_s, EventKind kind, std::string message) const
{
    JobEvent e = job_event(kind, iteration, time_s, std::move(message));
    e.job = config.job;
    return e;
}

void JobState::save_state(StateWriter& out) const
{
    server.save_state(out);
    out.put(static_cast<std::uint64_t>(workers.size()));
    for (const auto& worker : workers)
        worker->save_state(out);
    out.put(members);
    out.put(shares.has_value());
    if (shares)
        shares->save_state(out);
    out.put(wall_seconds());
}

void JobState::load_state(StateReader& in)
{
    server.load_state(in);
    if (in.array_size("worker slots", 1) != workers.size())
        in.fail("worker slots", "differ from this job's " + std::to_string(workers.size()));
    for (const auto& worker : workers)
        worker->load_state(in);
    std::vector<bool> stored;
    in.get(stored, "members");
    if (stored.size() != members.size())
        in.fail("members",
            "name " + std::to_string(stored.size()) + " slots; the job has " + std::to_string(members.size()));
    members = stored;
    if (in.get_bool("data shares") != shares.has_value())
        in.fail("data shares", "the checkpoint's job and this one differ in being elastic");
    if (shares)
        shares->load_state(in);
    const double wall = in.get<double>("wall time");
    run_start = std::chrono::steady_clock::now()
        - std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(wall));
}

} // namespace fulcrum::train
