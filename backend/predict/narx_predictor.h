#pragma once

#include "predict/ema_predictor.h"
#include "predict/narx_network.h"

#include <deque>
#include <future>
#include <memory>
#include <optional>

namespace fulcrum::predict {

struct NarxOptions {
    NarxShape shape;
    NarxTraining training;
    int min_samples = 500;    // EMA predicts until this many iterations were seen
    int retrain_every = 100;  // iterations between retrainings once a model exists
    int history = 1000;       // most recent samples a training uses
    // A retraining runs on its own thread while iterations go on; its model is adopted this
    // many observations after it started (waiting only if it is still not done), which keeps
    // a seeded run reproducible.
    int adopt_after = 10;
    bool background = true;   // false: train inline (tests)
    double ema_alpha = 0.2;
    std::uint64_t seed = 1;
};

// LB-BSP's NARX speed predictor for one worker: a feed-forward network over the look-back
// window of speeds and resource shares, trained online on this worker's own history.
class NarxPredictor final : public SpeedPredictor {
public:
    explicit NarxPredictor(NarxOptions options = {});
    ~NarxPredictor() override;

    std::string name() const override { return "narx"; }
    void observe(const SpeedSample& sample) override;
    double predict(const ResourceState& next) override;

    // Starts from another worker's or an earlier run's network: it predicts at once, and
    // later trainings fine-tune it instead of starting from random weights.
    void warm_start(const NarxNetwork& network);
    bool has_model() const { return model_.has_value(); }
    const std::optional<NarxNetwork>& model() const { return model_; }
    const NarxTrainReport& last_training() const { return last_report_; }
    int trainings() const { return trainings_; }

private:
    struct Trained {
        NarxNetwork network;
        NarxTrainReport report;
    };
    void start_training();
    void adopt(Trained trained);
    double scale() const;

    NarxOptions options_;
    EmaPredictor ema_;
    std::deque<SpeedSample> history_;
    std::optional<NarxNetwork> model_;
    std::future<Trained> training_;
    std::int64_t observed_ = 0;
    std::int64_t training_started_at_ = 0;
    std::int64_t last_trained_at_ = 0;
    double scale_sum_ = 0;
    NarxTrainReport last_report_;
    int trainings_ = 0;
    Eigen::VectorXf input_, hidden_; // inference scratch, allocated once
};

} // namespace fulcrum::predict
