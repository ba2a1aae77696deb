#pragma once

#include "predict/ema_predictor.h"
#include "predict/narx_network.h"

#include <array>
#include <boost/circular_buffer.hpp>
#include <future>
#include <memory>
#include <optional>

namespace fulcrum::predict {

struct NarxOptions {
    NarxShape shape;
    NarxTraining training;
    int min_samples = 500; // EMA predicts until this many iterations were seen
    int retrain_every = 100; // iterations between retrainings once a model exists
    int history = 1000; // most recent samples a training uses
    // A retraining runs on its own thread while iterations go on; its model is adopted this
    // many observations after it started (waiting only if it is still not done), which keeps
    // a seeded run reproducible.
    int adopt_after = 10;
    bool background = true; // false: train inline (tests)
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

    // The two halves of predict(), for callers that evaluate many workers' networks together
    // (NarxBank): the normalised look-back window (shape.inputs() values; false while the
    // EMA still predicts), and the speed for the network's output on that window.
    // `stride` is the distance between consecutive inputs, so the window can be written
    // straight into a NarxBank's interleaved lanes.
    bool input_window(const ResourceState& next, float* input, double& scale, std::size_t stride = 1) const;

    static double speed_from_output(float output, double scale, double ema_speed);
    double ema_speed() const { return ema_.value(); }
    // The newest sample as a training pair (shape.inputs() values and the normalised speed),
    // for a network trained on many workers' samples; false until the window is full.
    bool latest_training_pair(double* input, double& target);
    const NarxOptions& options() const { return options_; }
    // Changes whenever the network does (training adopted, warm start).
    std::uint64_t model_version() const { return model_version_; }

    // Starts from another worker's or an earlier run's network: it predicts at once, and
    // later trainings fine-tune it instead of starting from random weights.
    void warm_start(const NarxNetwork& network);
    bool has_model() const { return model_ != nullptr; }
    const NarxNetwork* model() const { return model_.get(); } // nullptr while the EMA predicts
    const NarxTrainReport& last_training() const { return last_report_; }
    int trainings() const { return trainings_; }

    // A checkpoint: the history (ring and staged samples as they lie), the EMA, the network
    // and a retraining in flight (waited for, and adopted after resuming at the same
    // observation as it would have been).
    void save_state(StateWriter& out) const override;
    void load_state(StateReader& in) override;

private:
    struct Trained {
        NarxNetwork network;
        NarxTrainReport report;
    };
    void start_training();
    void fill_training_column(std::size_t k, double scale, double* column) const;
    void adopt(Trained trained);
    double scale() const;
    std::size_t history_size() const; // the ring plus the staged samples
    void settle(); // moves the staged samples into the ring

    // Hot first: at a barrier a policy walks a thousand predictors, and what observe() and
    // input_window() read should share as few cache lines as possible.
    std::int64_t observed_ = 0;
    double scale_sum_ = 0;
    std::unique_ptr<NarxNetwork> model_; // behind a pointer: its bulk is only read when training
    std::uint64_t model_version_ = 0;
    std::int64_t training_started_at_ = 0;
    std::int64_t last_trained_at_ = 0;
    std::shared_future<Trained> training_; // shared: a checkpoint reads a finished training without adopting it
    EmaPredictor ema_;
    std::size_t recent_head_ = 0; // where the next sample goes in recent_
    std::size_t staged_ = 0; // the newest samples of recent_ not yet in history_
    std::array<SpeedSample, 8> recent_ {}; // the last samples, in the object (see input_window, observe)
    std::array<double, 8> evicted_next_ {}; // speeds at the ring's front: what the next block evicts
    static_assert((std::tuple_size_v<decltype(recent_)> & (std::tuple_size_v<decltype(recent_)> - 1)) == 0,
        "recent_ is indexed with a mask");
    NarxOptions options_;
    // The most recent options_.history samples. A ring, not a deque: observe() runs for every
    // worker at every barrier and should neither allocate nor chase blocks.
    boost::circular_buffer<SpeedSample> history_;
    // Cold.
    NarxTrainReport last_report_;
    int trainings_ = 0;
    Eigen::VectorXf input_, hidden_; // inference scratch, allocated once
};

} // namespace fulcrum::predict
