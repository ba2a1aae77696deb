#include "predict/narx_predictor.h"

#include <algorithm>

namespace fulcrum::predict {

NarxPredictor::NarxPredictor(NarxOptions options)
    : ema_(options.ema_alpha)
    , options_(options)
{
    options_.min_samples = std::max(options_.min_samples, options_.shape.speed_lags + options_.shape.resource_lags + 8);
    options_.history = std::max(options_.history, options_.min_samples);
    history_.set_capacity(static_cast<std::size_t>(options_.history));
}

NarxPredictor::~NarxPredictor()
{
    if (training_.valid())
        training_.wait();
}

double NarxPredictor::scale() const
{
    // Speeds are normalised by this worker's mean speed, so one network fits workers of any
    // capacity and a model can warm-start another worker's.
    const std::size_t n = history_size();
    return n == 0 ? 1.0 : std::max(1e-9, scale_sum_ / static_cast<double>(n));
}

std::size_t NarxPredictor::history_size() const
{
    return std::min(history_.capacity(), history_.size() + staged_);
}

void NarxPredictor::settle()
{
    // The staged samples are the newest staged_ entries of recent_, oldest first.
    for (std::size_t j = staged_; j > 0; --j)
        history_.push_back(recent_[(recent_head_ - j) & (recent_.size() - 1)]); // overwrites the oldest when full
    staged_ = 0;
    // The next block evicts (logically) from the ring's front, which lies right after the
    // slots just written: read those speeds now, while that memory is in the cache.
    const std::size_t ahead = std::min(history_.size(), evicted_next_.size());
    for (std::size_t j = 0; j < ahead; ++j)
        evicted_next_[j] = history_[j].speed;
}

void NarxPredictor::observe(const SpeedSample& sample)
{
    ema_.observe(sample);
    // The history is the ring followed by the staged samples, at most history_.capacity() in
    // all. A sample joins the ring only when a block of them is settled: one touch of the
    // ring per block instead of a cache miss per barrier. The sum keeps exactly the
    // arithmetic of an immediate push (the oldest leaves, then the newest joins).
    const std::size_t logical = history_.size() + staged_;
    if (logical >= history_.capacity())
        scale_sum_ -= evicted_next_[logical - history_.capacity()];
    recent_[recent_head_] = sample;
    recent_head_ = (recent_head_ + 1) & (recent_.size() - 1);
    scale_sum_ += sample.speed;
    ++observed_;
    if (++staged_ == recent_.size())
        settle();

    if (training_.valid() && observed_ - training_started_at_ >= options_.adopt_after) {
        adopt(training_.get());
        training_ = {};
    }
    const bool due
        = model_ ? observed_ - last_trained_at_ >= options_.retrain_every : observed_ >= options_.min_samples;
    if (due && !training_.valid() && static_cast<int>(history_size()) >= options_.min_samples / 2 + 8)
        start_training();
}

void NarxPredictor::fill_training_column(std::size_t k, double s, double* column) const
{
    // Sample k predicted from v^{k-1}, v^{k-2}, ... and c^k, c^{k-1}, ..., m^k, ...
    const NarxShape& shape = options_.shape;
    int row = 0;
    for (int j = 1; j <= shape.speed_lags; ++j)
        column[row++] = history_[k - static_cast<std::size_t>(j)].speed / s;
    for (int j = 0; j <= shape.resource_lags; ++j)
        column[row++] = history_[k - static_cast<std::size_t>(j)].cpu;
    for (int j = 0; j <= shape.resource_lags; ++j)
        column[row++] = history_[k - static_cast<std::size_t>(j)].memory;
}

bool NarxPredictor::latest_training_pair(double* input, double& target)
{
    settle();
    const auto lags = static_cast<std::size_t>(std::max(options_.shape.speed_lags, options_.shape.resource_lags));
    if (history_.size() <= lags)
        return false;
    const double s = scale();
    const std::size_t k = history_.size() - 1;
    fill_training_column(k, s, input);
    target = history_[k].speed / s;
    return true;
}

void NarxPredictor::start_training()
{
    settle();
    const NarxShape& shape = options_.shape;
    const int lags = std::max(shape.speed_lags, shape.resource_lags);
    const auto n = static_cast<Eigen::Index>(history_.size()) - lags;
    Eigen::MatrixXd inputs(shape.inputs(), n);
    Eigen::VectorXd targets(n);
    const double s = scale();
    for (Eigen::Index c = 0; c < n; ++c) {
        const auto k = static_cast<std::size_t>(c + lags);
        fill_training_column(k, s, inputs.col(c).data());
        targets(c) = history_[k].speed / s;
    }
    NarxNetwork start = model_ ? *model_ : NarxNetwork(shape, options_.seed + static_cast<std::uint64_t>(trainings_));
    auto job = [start = std::move(start), inputs = std::move(inputs), targets = std::move(targets),
                   training = options_.training]() mutable {
        Trained t { std::move(start), {} };
        t.report = t.network.train(inputs, targets, training);
        return t;
    };
    training_started_at_ = observed_;
    if (options_.background) {
        training_ = std::async(std::launch::async, std::move(job)).share();
    } else {
        adopt(job());
    }
}

void NarxPredictor::adopt(Trained trained)
{
    model_ = std::make_unique<NarxNetwork>(std::move(trained.network));
    ++model_version_;
    last_report_ = trained.report;
    last_trained_at_ = observed_;
    ++trainings_;
}

void NarxPredictor::warm_start(const NarxNetwork& network)
{
    if (!(network.shape() == options_.shape))
        throw std::invalid_argument("warm-start model has a different look-back window or hidden size");
    model_ = std::make_unique<NarxNetwork>(network);
    ++model_version_;
    last_trained_at_ = observed_;
}

bool NarxPredictor::input_window(const ResourceState& next, float* input, double& scale_out, std::size_t stride) const
{
    const NarxShape& shape = options_.shape;
    const auto lags = static_cast<std::size_t>(std::max(shape.speed_lags, shape.resource_lags));
    if (!model_ || history_size() < lags)
        return false;
    const double s = scale();
    scale_out = s;
    const double inverse = 1.0 / s;
    // The window comes from the copy of the last samples kept inside the object when it is
    // long enough: the history ring is cold by the next barrier for a thousand workers. A
    // longer window reaches past the staged samples into the ring.
    const auto back = [&](int lag) -> const SpeedSample& {
        const auto j = static_cast<std::size_t>(lag);
        return j <= recent_.size() ? recent_[(recent_head_ - j) & (recent_.size() - 1)]
                                   : history_[history_.size() - (j - staged_)];
    };
    std::size_t at = 0;
    const auto put = [&](double value) {
        input[at] = static_cast<float>(value);
        at += stride;
    };
    for (int j = 1; j <= shape.speed_lags; ++j)
        put(back(j).speed * inverse);
    // c^{k+1} is the state now; c^{k}, c^{k-1}, ... were recorded with the samples.
    put(next.cpu);
    for (int j = 1; j <= shape.resource_lags; ++j)
        put(back(j).cpu);
    put(next.memory);
    for (int j = 1; j <= shape.resource_lags; ++j)
        put(back(j).memory);
    return true;
}

double NarxPredictor::speed_from_output(float output, double scale, double ema_speed)
{
    // Never below a sliver of the EMA: a zero or negative speed would starve the worker.
    return std::max(output * scale, 0.02 * ema_speed);
}

double NarxPredictor::predict(const ResourceState& next)
{
    input_.resize(options_.shape.inputs());
    double s = 1;
    if (!input_window(next, input_.data(), s))
        return ema_.value();
    return speed_from_output(model_->infer(input_, hidden_), s, ema_.value());
}

namespace {

void put_sample(StateWriter& out, const SpeedSample& s)
{
    out.put(s.speed);
    out.put(s.cpu);
    out.put(s.memory);
}

SpeedSample get_sample(StateReader& in)
{
    SpeedSample s;
    s.speed = in.get<double>("NARX sample");
    s.cpu = in.get<double>("NARX sample");
    s.memory = in.get<double>("NARX sample");
    return s;
}

void put_report(StateWriter& out, const NarxTrainReport& r)
{
    out.put(r.epochs);
    out.put(r.train_rmse);
    out.put(r.validation_rmse);
    out.put(r.stopped_early);
}

NarxTrainReport get_report(StateReader& in)
{
    NarxTrainReport r;
    r.epochs = in.get<int>("NARX training report");
    r.train_rmse = in.get<double>("NARX training report");
    r.validation_rmse = in.get<double>("NARX training report");
    r.stopped_early = in.get_bool("NARX training report");
    return r;
}

} // namespace

void NarxPredictor::save_state(StateWriter& out) const
{
    out.put(observed_);
    out.put(scale_sum_);
    out.put(model_ != nullptr);
    if (model_)
        model_->save_state(out);
    out.put(model_version_);
    out.put(training_started_at_);
    out.put(last_trained_at_);
    out.put(training_.valid());
    if (training_.valid()) {
        const Trained& t = training_.get(); // waits for a training still running
        t.network.save_state(out);
        put_report(out, t.report);
    }
    ema_.save_state(out);
    out.put(static_cast<std::uint64_t>(recent_head_));
    out.put(static_cast<std::uint64_t>(staged_));
    for (const SpeedSample& s : recent_)
        put_sample(out, s);
    for (const double v : evicted_next_)
        out.put(v);
    out.put(static_cast<std::uint64_t>(history_.size()));
    for (const SpeedSample& s : history_)
        put_sample(out, s);
    put_report(out, last_report_);
    out.put(trainings_);
}

void NarxPredictor::load_state(StateReader& in)
{
    observed_ = in.get<std::int64_t>("NARX observations");
    scale_sum_ = in.get<double>("NARX speed sum");
    model_.reset();
    if (in.get_bool("NARX network"))
        model_ = std::make_unique<NarxNetwork>(NarxNetwork::load_state(in));
    if (model_ && !(model_->shape() == options_.shape))
        in.fail("NARX network", "has another look-back window or hidden size than the policy's");
    model_version_ = in.get<std::uint64_t>("NARX model version");
    training_started_at_ = in.get<std::int64_t>("NARX training start");
    last_trained_at_ = in.get<std::int64_t>("NARX last training");
    training_ = {};
    if (in.get_bool("NARX training in flight")) {
        Trained t { NarxNetwork::load_state(in), get_report(in) };
        std::promise<Trained> done;
        done.set_value(std::move(t));
        training_ = done.get_future().share();
    }
    ema_.load_state(in);
    recent_head_ = static_cast<std::size_t>(in.get<std::uint64_t>("NARX recent samples")) & (recent_.size() - 1);
    staged_ = static_cast<std::size_t>(in.get<std::uint64_t>("NARX staged samples"));
    if (staged_ > recent_.size())
        in.fail("NARX staged samples", "are more than the recent samples kept");
    for (SpeedSample& s : recent_)
        s = get_sample(in);
    for (double& v : evicted_next_)
        v = in.get<double>("NARX evicted speeds");
    const std::size_t n = in.array_size("NARX history", 1);
    if (n > history_.capacity())
        in.fail("NARX history", "holds more samples than this predictor keeps");
    history_.clear();
    for (std::size_t i = 0; i < n; ++i)
        history_.push_back(get_sample(in));
    last_report_ = get_report(in);
    trainings_ = in.get<int>("NARX trainings");
}

} // namespace fulcrum::predict
