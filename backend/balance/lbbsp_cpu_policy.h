#pragma once

#include "balance/batch_size_policy.h"
#include "predict/narx_bank.h"
#include "predict/predictor_registry.h"

#include <future>
#include <memory>

namespace fulcrum::balance {

// LB-BSP Algorithm 1 for CPU workers: measure v_i = x_i / t_i, predict v_i for the next
// iteration, then x_i = v_i / sum(v) * X, rounded so that sum(x) = X and x_i >= 1.
//
// One refinement: communication does not shrink with the batch, so when links differ the
// sizes solve x_i / v_i + comm_i = T for one common T (T = (X + sum v_i comm_i) / sum v);
// with equal links this is exactly the paper's rule.
class LbBspCpuPolicy final : public BatchSizePolicy {
public:
    explicit LbBspCpuPolicy(predict::PredictorSpec predictor);
    std::string name() const override { return "lbbsp-cpu"; }
    Allocation initial(int workers, std::int32_t total_batch) override;
    Allocation next(const std::vector<WorkerObservation>& observations, std::int32_t total_batch) override;
    // A checkpoint: every worker's predictor, the resource states the next observations
    // pair with, the pooled training set and network (a pooled training in flight is waited
    // for). The NARX bank is rebuilt from the predictors' networks.
    bool save_state(StateWriter& out) const override;
    void load_state(StateReader& in) override;

    // The per-worker predictor, for warm starts and inspection (nullptr before first use).
    predict::SpeedPredictor* predictor(WorkerId worker);

private:
    predict::SpeedPredictor& predictor_for(WorkerId worker);

    void share_models();
    void pool_sample(predict::NarxPredictor& narx);
    void train_pooled_model();
    void stage_in_bank(predict::NarxPredictor& narx, WorkerId worker, const predict::ResourceState& now, std::size_t i);

    predict::PredictorSpec spec_;
    std::optional<predict::NarxNetwork> file_model_; // warm start from an earlier run
    int without_model_ = 0; // NARX predictors still on EMA (peer warm start)
    // warm_start "pooled": one network trained on all workers' samples, then each worker's own.
    std::vector<double> pool_inputs_, pool_targets_;
    std::shared_future<predict::NarxNetwork> pool_training_;
    std::optional<predict::NarxNetwork> pooled_model_;
    std::int64_t decisions_ = 0, pool_started_at_ = 0;
    // Indexed by worker id (ids are 0..n-1): a decision for 1,000 workers must take
    // microseconds, and map lookups were most of it.
    std::vector<std::unique_ptr<predict::SpeedPredictor>> predictors_;
    std::vector<std::optional<predict::ResourceState>> started_with_; // c^k, m^k of the iteration now observed
    std::vector<double> speeds_, comm_;
    // NARX: every worker's network evaluated together (see NarxBank); the versions say which
    // network each slot holds, so a retrained model is copied in once.
    std::optional<predict::NarxBank> bank_;
    std::vector<std::uint64_t> bank_versions_;
    std::vector<double> bank_scale_, bank_ema_; // per observation; scale 0 = EMA answers
    std::string decision_;
};

// Balanced sizes for predicted speeds and per-worker communication times (shared with the
// federated and damping code): x_i = v_i (T - comm_i), sum x = X, each x_i >= 1.
std::vector<std::int32_t> balanced_sizes(
    const std::vector<double>& speeds, const std::vector<double>& comm_s, std::int32_t total_batch);

} // namespace fulcrum::balance
