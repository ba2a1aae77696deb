#include "balance/lbbsp_cpu_policy.h"

#include "balance/rounding.h"
#include "balance/uniform_policy.h"
#include "predict/narx_predictor.h"

#include <algorithm>

namespace fulcrum::balance {

std::vector<std::int32_t> balanced_sizes(
    const std::vector<double>& speeds, const std::vector<double>& comm_s, std::int32_t total_batch)
{
    double speed_sum = 0, weighted_comm = 0;
    for (std::size_t i = 0; i < speeds.size(); ++i) {
        speed_sum += speeds[i];
        weighted_comm += speeds[i] * comm_s[i];
    }
    if (!(speed_sum > 0))
        return proportional_split(std::vector<double>(speeds.size(), 1.0), total_batch);
    const double target = (total_batch + weighted_comm) / speed_sum;
    std::vector<double> weights(speeds.size());
    for (std::size_t i = 0; i < speeds.size(); ++i)
        weights[i] = std::max(0.0, speeds[i] * (target - comm_s[i]));
    return proportional_split(weights, total_batch);
}

LbBspCpuPolicy::LbBspCpuPolicy(predict::PredictorSpec predictor)
    : spec_(std::move(predictor))
    , decision_("lbbsp-cpu/" + spec_.type)
{
    predict::make_predictor(spec_, 0); // fail now on an unknown predictor or a bad setting
    if (predict::trains_network(spec_))
        bank_.emplace(spec_.narx.shape);
    if (spec_.warm_start == predict::WarmStart::File) {
        file_model_ = predict::load_narx_model(spec_.warm_start_file);
        if (!(file_model_->shape() == spec_.narx.shape))
            throw std::invalid_argument(
                spec_.warm_start_file + ": the model's look-back window or hidden size differs from the policy's");
    }
}

void LbBspCpuPolicy::share_models()
{
    // A worker still on EMA starts from a peer's network (or the pooled one); speeds are
    // normalised per worker, so the network carries over, and its own history fine-tunes it
    // at its next retraining.
    const predict::NarxNetwork* donor = pooled_model_ ? &*pooled_model_ : nullptr;
    for (std::size_t i = 0; !donor && spec_.warm_start == predict::WarmStart::Peer && i < predictors_.size(); ++i)
        if (auto* narx = dynamic_cast<predict::NarxPredictor*>(predictors_[i].get()); narx && narx->has_model())
            donor = &*narx->model();
    if (!donor)
        return;
    without_model_ = 0;
    for (auto& p : predictors_)
        if (auto* narx = dynamic_cast<predict::NarxPredictor*>(p.get()); narx && !narx->has_model())
            narx->warm_start(*donor);
}

void LbBspCpuPolicy::pool_sample(predict::NarxPredictor& narx)
{
    // Until the pooled network exists, every worker's newest sample joins one training set:
    // n workers fill it n times faster than any single worker's history.
    const auto inputs = static_cast<std::size_t>(spec_.narx.shape.inputs());
    const std::size_t at = pool_inputs_.size();
    pool_inputs_.resize(at + inputs);
    double target = 0;
    if (narx.latest_training_pair(pool_inputs_.data() + at, target))
        pool_targets_.push_back(target);
    else
        pool_inputs_.resize(at);
}

void LbBspCpuPolicy::train_pooled_model()
{
    if (pooled_model_)
        return;
    const predict::NarxOptions& o = spec_.narx;
    if (pool_training_.valid()) {
        // Adopted a fixed number of decisions after it started, so seeded runs repeat exactly.
        if (decisions_ - pool_started_at_ >= o.adopt_after) {
            pooled_model_ = pool_training_.get();
            pool_training_ = {};
            share_models();
        }
        return;
    }
    if (static_cast<int>(pool_targets_.size()) < o.min_samples)
        return;
    const auto inputs = static_cast<Eigen::Index>(o.shape.inputs());
    const auto n = static_cast<Eigen::Index>(pool_targets_.size());
    auto job = [shape = o.shape, seed = o.seed, training = o.training,
                   x = Eigen::MatrixXd(Eigen::Map<const Eigen::MatrixXd>(pool_inputs_.data(), inputs, n)),
                   y = Eigen::VectorXd(Eigen::Map<const Eigen::VectorXd>(pool_targets_.data(), n))]() {
        predict::NarxNetwork network(shape, seed);
        network.train(x, y, training);
        return network;
    };
    pool_inputs_.clear();
    pool_targets_.clear();
    pool_inputs_.shrink_to_fit();
    pool_targets_.shrink_to_fit();
    if (o.background) {
        pool_started_at_ = decisions_;
        pool_training_ = std::async(std::launch::async, std::move(job)).share();
    } else {
        pooled_model_ = job();
        share_models();
    }
}

predict::SpeedPredictor& LbBspCpuPolicy::predictor_for(WorkerId worker)
{
    const auto index = static_cast<std::size_t>(worker);
    if (index >= predictors_.size()) {
        predictors_.resize(index + 1);
        started_with_.resize(index + 1);
    }
    auto& slot = predictors_[index];
    if (!slot) {
        slot = predict::make_predictor(spec_, worker);
        if (auto* narx = dynamic_cast<predict::NarxPredictor*>(slot.get())) {
            if (file_model_)
                narx->warm_start(*file_model_);
            else if (pooled_model_)
                narx->warm_start(*pooled_model_);
            else if (spec_.warm_start == predict::WarmStart::Peer || spec_.warm_start == predict::WarmStart::Pooled)
                ++without_model_;
        }
    }
    return *slot;
}

predict::SpeedPredictor* LbBspCpuPolicy::predictor(WorkerId worker)
{
    const auto index = static_cast<std::size_t>(worker);
    return index < predictors_.size() ? predictors_[index].get() : nullptr;
}

Allocation LbBspCpuPolicy::initial(int workers, std::int32_t total_batch)
{
    // Nothing is known before the first barrier: start uniform (the paper does the same).
    Allocation a = UniformPolicy().initial(workers, total_batch);
    a.decision = decision_;
    return a;
}

Allocation LbBspCpuPolicy::next(const std::vector<WorkerObservation>& observations, std::int32_t total_batch)
{
    Allocation a;
    a.decision = decision_;
    const std::size_t n = observations.size();
    speeds_.resize(n);
    comm_.resize(n);
    ++decisions_;
    const bool pooling = spec_.warm_start == predict::WarmStart::Pooled && !pooled_model_;
    if (pooling)
        train_pooled_model(); // may adopt the pooled network before this decision's predictions
    if (bank_) {
        bank_scale_.assign(n, 0.0);
        bank_ema_.resize(n);
    }
    for (std::size_t i = 0; i < n; ++i) {
        const WorkerObservation& o = observations[i];
        predict::SpeedPredictor& p = predictor_for(o.worker);
        auto& started = started_with_[static_cast<std::size_t>(o.worker)];
        const predict::ResourceState at_start
            = started.value_or(predict::ResourceState { o.cpu_share, o.memory_share });
        if (o.compute_s > 0 && o.batch_size > 0) {
            p.observe({ o.batch_size / o.compute_s, at_start.cpu, at_start.memory });
            if (pooling && !pooled_model_)
                pool_sample(static_cast<predict::NarxPredictor&>(p));
        }
        const predict::ResourceState now { o.next_cpu_share, o.next_memory_share };
        started = now;
        comm_[i] = o.comm_s;
        if (bank_)
            stage_in_bank(static_cast<predict::NarxPredictor&>(p), o.worker, now, i);
        else
            speeds_[i] = std::max(1e-9, p.predict(now));
    }
    if (bank_) {
        const std::vector<float>& outputs = bank_->infer();
        for (std::size_t i = 0; i < n; ++i)
            speeds_[i] = std::max(1e-9,
                bank_scale_[i] > 0 ? predict::NarxPredictor::speed_from_output(
                    outputs[static_cast<std::size_t>(observations[i].worker)], bank_scale_[i], bank_ema_[i])
                                   : bank_ema_[i]);
    }
    a.predicted_speeds.assign(speeds_.begin(), speeds_.end());
    if (pooling && !pooled_model_)
        train_pooled_model(); // starts once the pool holds enough samples
    if (without_model_ > 0 && spec_.warm_start == predict::WarmStart::Peer)
        share_models();
    a.batch_sizes = balanced_sizes(speeds_, comm_, total_batch);
    return a;
}

void LbBspCpuPolicy::stage_in_bank(
    predict::NarxPredictor& narx, WorkerId worker, const predict::ResourceState& now, std::size_t i)
{
    const auto slot = static_cast<std::size_t>(worker);
    if (slot >= bank_versions_.size())
        bank_versions_.resize(slot + 1, 0);
    if (narx.has_model() && narx.model_version() != bank_versions_[slot]) {
        bank_->set_network(slot, *narx.model());
        bank_versions_[slot] = narx.model_version();
    }
    bank_ema_[i] = narx.ema_speed();
    double scale = 0; // input_lanes() grows the bank for a new worker
    if (narx.input_window(now, bank_->input_lanes(slot), scale, predict::NarxBank::input_stride()))
        bank_scale_[i] = scale;
}

bool LbBspCpuPolicy::save_state(StateWriter& out) const
{
    out.put(decisions_);
    out.put(pool_started_at_);
    out.put(without_model_);
    out.put(pool_inputs_);
    out.put(pool_targets_);
    out.put(pool_training_.valid());
    if (pool_training_.valid())
        pool_training_.get().save_state(out); // waits for a pooled training still running
    out.put(pooled_model_.has_value());
    if (pooled_model_)
        pooled_model_->save_state(out);
    out.put(static_cast<std::uint64_t>(predictors_.size()));
    for (std::size_t i = 0; i < predictors_.size(); ++i) {
        out.put(predictors_[i] != nullptr);
        if (predictors_[i]) {
            out.put(predictors_[i]->name());
            predictors_[i]->save_state(out);
        }
        out.put(started_with_[i].has_value());
        if (started_with_[i]) {
            out.put(started_with_[i]->cpu);
            out.put(started_with_[i]->memory);
        }
    }
    return true;
}

void LbBspCpuPolicy::load_state(StateReader& in)
{
    decisions_ = in.get<std::int64_t>("decisions");
    pool_started_at_ = in.get<std::int64_t>("pooled training start");
    without_model_ = in.get<int>("workers without a network");
    in.get(pool_inputs_, "pooled samples");
    in.get(pool_targets_, "pooled samples");
    pool_training_ = {};
    if (in.get_bool("pooled training in flight")) {
        std::promise<predict::NarxNetwork> done;
        done.set_value(predict::NarxNetwork::load_state(in));
        pool_training_ = done.get_future().share();
    }
    pooled_model_.reset();
    if (in.get_bool("pooled network"))
        pooled_model_ = predict::NarxNetwork::load_state(in);
    const std::size_t n = in.array_size("predictors", 1);
    predictors_.clear();
    predictors_.resize(n);
    started_with_.assign(n, std::nullopt);
    for (std::size_t i = 0; i < n; ++i) {
        if (in.get_bool("predictor")) {
            predictors_[i] = predict::make_predictor(spec_, static_cast<WorkerId>(i));
            if (in.get_string("predictor") != predictors_[i]->name())
                in.fail("predictor", "worker " + std::to_string(i) + "'s is not the policy's " + spec_.type);
            predictors_[i]->load_state(in);
        }
        if (in.get_bool("resource state")) {
            const double cpu = in.get<double>("resource state");
            started_with_[i] = predict::ResourceState { cpu, in.get<double>("resource state") };
        }
    }
    if (bank_) {
        bank_.emplace(spec_.narx.shape);
        bank_versions_.clear(); // every network goes into the new bank at the next decision
    }
}

} // namespace fulcrum::balance
