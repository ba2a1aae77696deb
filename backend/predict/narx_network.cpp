#include "predict/narx_network.h"

#include "common/product_blocking.h"
#include "common/random.h"

#include <array>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace fulcrum::predict {

NarxNetwork::NarxNetwork(NarxShape shape, std::uint64_t seed)
    : shape_(shape)
{
    pin_product_blocking(); // the same rounding on every CPU
    if (shape.speed_lags < 1 || shape.resource_lags < 0 || shape.hidden < 1)
        throw std::invalid_argument("NARX needs at least one speed lag and one hidden unit");
    Rng rng(seed);
    const int inputs = shape.inputs();
    // Glorot-uniform initialisation for tanh.
    const double limit1 = std::sqrt(6.0 / (inputs + shape.hidden));
    const double limit2 = std::sqrt(6.0 / (shape.hidden + 1));
    w1_.resize(shape.hidden, inputs);
    for (Eigen::Index i = 0; i < w1_.size(); ++i)
        w1_.data()[i] = (2 * uniform01(rng) - 1) * limit1;
    b1_ = Eigen::VectorXd::Zero(shape.hidden);
    w2_.resize(shape.hidden);
    for (Eigen::Index i = 0; i < w2_.size(); ++i)
        w2_(i) = (2 * uniform01(rng) - 1) * limit2;
    b2_ = 0;
    refresh_single_precision();
}

namespace {

// With the hidden size fixed at compile time the accumulators stay in registers across the
// inputs (a loop through memory serialises on store-to-load forwarding), and the weights are
// read unpadded: at a barrier the policy walks a thousand networks, so bytes fetched, not
// flops, set the cost.
template <int Hidden> float infer_fixed(const float* p, const float* input, Eigen::Index inputs)
{
    // Registers are padded to whole SIMD lanes so tanh runs on full packets (a scalar tail
    // would call the scalar tanh once per leftover unit); memory stays unpadded.
    constexpr int kLanes = 8;
    constexpr int Padded = (Hidden + kLanes - 1) / kLanes * kLanes;
    using Column = Eigen::Array<float, Hidden, 1>;
    Eigen::Array<float, Padded, 1> h = Eigen::Array<float, Padded, 1>::Zero();
    h.template head<Hidden>() = Eigen::Map<const Column>(p);
    p += Hidden;
    for (Eigen::Index c = 0; c < inputs; ++c, p += Hidden)
        h.template head<Hidden>() += Eigen::Map<const Column>(p) * input[c];
    const Eigen::Array<float, Padded, 1> activation = h.tanh();
    return (Eigen::Map<const Column>(p) * activation.template head<Hidden>()).sum() + p[Hidden];
}

using InferFn = float (*)(const float*, const float*, Eigen::Index);

template <int... H> constexpr std::array<InferFn, sizeof...(H)> fixed_kernels(std::integer_sequence<int, H...>)
{
    return { &infer_fixed<H + 1>... };
}

// Hidden sizes 1..32 get a kernel of their own; wider layers take the generic path.
constexpr auto kFixedKernels = fixed_kernels(std::make_integer_sequence<int, 32> {});

} // namespace

void NarxNetwork::refresh_single_precision()
{
    // One contiguous block per network, [b1 | W1 column-major | w2 | b2].
    const Eigen::Index hidden = w1_.rows();
    packed_.resize(hidden * (w1_.cols() + 2) + 1);
    float* p = packed_.data();
    for (Eigen::Index r = 0; r < hidden; ++r)
        *p++ = static_cast<float>(b1_(r));
    for (Eigen::Index i = 0; i < w1_.size(); ++i)
        *p++ = static_cast<float>(w1_.data()[i]);
    for (Eigen::Index r = 0; r < hidden; ++r)
        *p++ = static_cast<float>(w2_(r));
    *p = static_cast<float>(b2_);
}

float NarxNetwork::infer(const Eigen::Ref<const Eigen::VectorXf>& input, Eigen::VectorXf& hidden) const
{
    const Eigen::Index rows = w1_.rows(), cols = w1_.cols();
    const float* p = packed_.data();
    if (rows <= static_cast<Eigen::Index>(kFixedKernels.size()))
        return kFixedKernels[static_cast<std::size_t>(rows - 1)](p, input.data(), cols);
    hidden = Eigen::Map<const Eigen::VectorXf>(p, rows);
    p += rows;
    for (Eigen::Index c = 0; c < cols; ++c, p += rows)
        hidden += Eigen::Map<const Eigen::VectorXf>(p, rows) * input[c];
    hidden = hidden.array().tanh();
    return Eigen::Map<const Eigen::VectorXf>(p, rows).dot(hidden) + p[rows];
}

double NarxNetwork::forward(const Eigen::Ref<const Eigen::VectorXd>& input) const
{
    return w2_.dot((w1_ * input + b1_).array().tanh().matrix()) + b2_;
}

NarxTrainReport NarxNetwork::train(
    const Eigen::MatrixXd& inputs, const Eigen::VectorXd& targets, const NarxTraining& options)
{
    const Eigen::Index n = inputs.cols();
    if (inputs.rows() != shape_.inputs() || targets.size() != n)
        throw std::invalid_argument("NARX training data does not match the network's inputs");
    // Validation: every k-th sample (k = 1 / fraction), so that it spans the whole window and
    // every resource regime in it; a tail of a few dozen samples is often a single regime,
    // which stops training before the network has learnt the resource dependence.
    const int stride = std::max(2, static_cast<int>(std::lround(1.0 / std::max(options.validation_fraction, 1e-3))));
    std::vector<Eigen::Index> fit_columns, validation_columns;
    for (Eigen::Index c = 0; c < n; ++c)
        (c % stride == stride - 1 ? validation_columns : fit_columns).push_back(c);
    const auto fit = static_cast<Eigen::Index>(fit_columns.size());
    if (fit < 4 || validation_columns.empty())
        throw std::invalid_argument("NARX needs more samples to train");
    const Eigen::MatrixXd x = inputs(Eigen::all, fit_columns);
    const Eigen::VectorXd y = targets(fit_columns);
    const Eigen::MatrixXd vx = inputs(Eigen::all, validation_columns);
    const Eigen::VectorXd vy = targets(validation_columns);

    const auto rmse = [&](const Eigen::MatrixXd& in, const Eigen::VectorXd& out) {
        const Eigen::MatrixXd hidden = ((w1_ * in).colwise() + b1_).array().tanh().matrix();
        const Eigen::VectorXd prediction = (hidden.transpose() * w2_).array() + b2_;
        return std::sqrt((prediction - out).squaredNorm() / static_cast<double>(out.size()));
    };

    // Adam moments, one per parameter group.
    Eigen::MatrixXd mw1 = Eigen::MatrixXd::Zero(w1_.rows(), w1_.cols()), vw1 = mw1;
    Eigen::VectorXd mb1 = Eigen::VectorXd::Zero(b1_.size()), vb1 = mb1;
    Eigen::VectorXd mw2 = Eigen::VectorXd::Zero(w2_.size()), vw2 = mw2;
    double mb2 = 0, vb2 = 0;
    constexpr double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;

    NarxNetwork best = *this;
    double best_error = rmse(vx, vy);
    int since_best = 0;
    NarxTrainReport report;
    for (int epoch = 1; epoch <= options.max_epochs; ++epoch) {
        const Eigen::MatrixXd hidden = ((w1_ * x).colwise() + b1_).array().tanh().matrix();
        const Eigen::VectorXd error = ((hidden.transpose() * w2_).array() + b2_).matrix() - y; // d(0.5 mse)/dout * n
        const double scale = 1.0 / static_cast<double>(fit);
        const Eigen::VectorXd gw2 = hidden * error * scale;
        const double gb2 = error.sum() * scale;
        const Eigen::MatrixXd delta = ((w2_ * error.transpose()).array() * (1 - hidden.array().square())).matrix();
        const Eigen::MatrixXd gw1 = delta * x.transpose() * scale;
        const Eigen::VectorXd gb1 = delta.rowwise().sum() * scale;

        const double c1 = 1 - std::pow(beta1, epoch), c2 = 1 - std::pow(beta2, epoch);
        const double lr = options.learning_rate;
        auto step = [&](auto& param, auto& m, auto& v, const auto& g) {
            m = beta1 * m + (1 - beta1) * g;
            v = beta2 * v + (1 - beta2) * g.cwiseProduct(g);
            param -= (lr * (m / c1).array() / ((v / c2).array().sqrt() + eps)).matrix();
        };
        step(w1_, mw1, vw1, gw1);
        step(b1_, mb1, vb1, gb1);
        step(w2_, mw2, vw2, gw2);
        mb2 = beta1 * mb2 + (1 - beta1) * gb2;
        vb2 = beta2 * vb2 + (1 - beta2) * gb2 * gb2;
        b2_ -= lr * (mb2 / c1) / (std::sqrt(vb2 / c2) + eps);

        report.epochs = epoch;
        const double validation_error = rmse(vx, vy);
        if (validation_error < best_error - 1e-9) {
            best_error = validation_error;
            best = *this;
            since_best = 0;
        } else if (++since_best >= options.patience) {
            report.stopped_early = true;
            break;
        }
    }
    *this = best;
    refresh_single_precision();
    report.validation_rmse = best_error;
    report.train_rmse = rmse(x, y);
    return report;
}

std::string NarxNetwork::serialize() const
{
    std::ostringstream out;
    out.precision(17);
    out << "narx1 " << shape_.speed_lags << ' ' << shape_.resource_lags << ' ' << shape_.hidden;
    for (Eigen::Index i = 0; i < w1_.size(); ++i)
        out << ' ' << w1_.data()[i];
    for (Eigen::Index i = 0; i < b1_.size(); ++i)
        out << ' ' << b1_(i);
    for (Eigen::Index i = 0; i < w2_.size(); ++i)
        out << ' ' << w2_(i);
    out << ' ' << b2_ << '\n';
    return out.str();
}

NarxNetwork NarxNetwork::deserialize(const std::string& text)
{
    std::istringstream in(text);
    std::string magic;
    NarxShape shape;
    if (!(in >> magic >> shape.speed_lags >> shape.resource_lags >> shape.hidden) || magic != "narx1")
        throw std::invalid_argument("not a NARX model (expected a 'narx1' header)");
    if (shape.speed_lags < 1 || shape.speed_lags > 64 || shape.resource_lags < 0 || shape.resource_lags > 64
        || shape.hidden < 1 || shape.hidden > 4096)
        throw std::invalid_argument("NARX model has an implausible shape");
    NarxNetwork net(shape, 0);
    auto read = [&](double& value) {
        if (!(in >> value) || !std::isfinite(value))
            throw std::invalid_argument("NARX model is truncated or holds a non-finite weight");
    };
    for (Eigen::Index i = 0; i < net.w1_.size(); ++i)
        read(net.w1_.data()[i]);
    for (Eigen::Index i = 0; i < net.b1_.size(); ++i)
        read(net.b1_(i));
    for (Eigen::Index i = 0; i < net.w2_.size(); ++i)
        read(net.w2_(i));
    read(net.b2_);
    net.refresh_single_precision();
    return net;
}

void NarxNetwork::save_state(StateWriter& out) const
{
    for (const int v : { shape_.speed_lags, shape_.resource_lags, shape_.hidden })
        out.put(v);
    out.put_array(w1_.data(), static_cast<std::size_t>(w1_.size()));
    out.put_array(b1_.data(), static_cast<std::size_t>(b1_.size()));
    out.put_array(w2_.data(), static_cast<std::size_t>(w2_.size()));
    out.put(b2_);
}

NarxNetwork NarxNetwork::load_state(StateReader& in)
{
    NarxShape shape;
    for (int* v : { &shape.speed_lags, &shape.resource_lags, &shape.hidden })
        *v = in.get<int>("NARX shape");
    if (shape.speed_lags < 1 || shape.speed_lags > 64 || shape.resource_lags < 0 || shape.resource_lags > 64
        || shape.hidden < 1 || shape.hidden > 4096)
        in.fail("NARX shape", "is implausible");
    NarxNetwork net(shape, 0);
    in.get_array(net.w1_.data(), static_cast<std::size_t>(net.w1_.size()), "NARX weights");
    in.get_array(net.b1_.data(), static_cast<std::size_t>(net.b1_.size()), "NARX weights");
    in.get_array(net.w2_.data(), static_cast<std::size_t>(net.w2_.size()), "NARX weights");
    net.b2_ = in.get<double>("NARX weights");
    net.refresh_single_precision();
    return net;
}

} // namespace fulcrum::predict
