#include "predict/arima_predictor.h"

#include "common/eigen_core.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

namespace fulcrum::predict {

ArimaPredictor::ArimaPredictor()
    : ArimaPredictor(Options {})
{
}

ArimaPredictor::ArimaPredictor(Options options)
    : options_(options)
{
}

double ArimaPredictor::predicted_difference() const
{
    const std::size_t n = differences_.size();
    if (n < 2)
        return 0;
    return phi1_ * differences_[n - 1] + phi2_ * differences_[n - 2] + theta_ * last_residual_;
}

void ArimaPredictor::observe(const SpeedSample& sample)
{
    const double expected_w = fitted_ ? predicted_difference() : 0.0;
    speeds_.push_back(sample.speed);
    const std::size_t n = speeds_.size();
    if (n >= 3) {
        const double w = speeds_[n - 1] - 2 * speeds_[n - 2] + speeds_[n - 3];
        last_residual_ = fitted_ ? w - expected_w : 0.0;
        differences_.push_back(w);
    }
    while (static_cast<int>(speeds_.size()) > options_.window)
        speeds_.pop_front();
    while (static_cast<int>(differences_.size()) > options_.window)
        differences_.pop_front();
    if (static_cast<int>(speeds_.size()) >= options_.min_samples && (!fitted_ || ++since_fit_ >= options_.refit_every))
        refit();
}

void ArimaPredictor::refit()
{
    since_fit_ = 0;
    const int n = static_cast<int>(differences_.size());
    const auto difference = [this](int k) { return differences_[static_cast<std::size_t>(k)]; };
    constexpr int kLongOrder = 8; // stage 1: AR(8) stands in for the MA term
    if (n < kLongOrder + 12)
        return;
    // Stage 1: long AR by least squares, its residuals estimate the innovations e_k.
    const int rows1 = n - kLongOrder;
    Eigen::MatrixXd a(rows1, kLongOrder);
    Eigen::VectorXd b(rows1);
    for (int r = 0; r < rows1; ++r) {
        for (int j = 0; j < kLongOrder; ++j)
            a(r, j) = difference(r + kLongOrder - 1 - j);
        b(r) = difference(r + kLongOrder);
    }
    const Eigen::VectorXd long_ar = a.colPivHouseholderQr().solve(b);
    Eigen::VectorXd residual = Eigen::VectorXd::Zero(n);
    residual.tail(rows1) = b - a * long_ar;
    // Stage 2: w_k on w_{k-1}, w_{k-2}, e_{k-1}.
    const int first = kLongOrder + 1;
    const int rows2 = n - first;
    Eigen::MatrixXd x(rows2, 3);
    Eigen::VectorXd y(rows2);
    for (int r = 0; r < rows2; ++r) {
        const int k = first + r;
        x(r, 0) = difference(k - 1);
        x(r, 1) = difference(k - 2);
        x(r, 2) = residual(k - 1);
        y(r) = difference(k);
    }
    const Eigen::Vector3d c = x.colPivHouseholderQr().solve(y);
    if (!c.allFinite())
        return;
    // Keep the fitted model stationary and invertible; otherwise forecasts explode.
    const bool stationary = std::abs(c(1)) < 1 && c(1) + c(0) < 1 && c(1) - c(0) < 1;
    phi1_ = stationary ? c(0) : 0.0;
    phi2_ = stationary ? c(1) : 0.0;
    theta_ = std::clamp(c(2), -0.95, 0.95);
    fitted_ = true;
}

double ArimaPredictor::predict(const ResourceState&)
{
    const std::size_t n = speeds_.size();
    if (n == 0)
        return 0;
    if (!fitted_ || n < 2)
        return speeds_.back();
    const double forecast = predicted_difference() + 2 * speeds_[n - 1] - speeds_[n - 2];
    // A speed is positive; a second-difference model can overshoot below zero after a drop.
    return std::max(forecast, 0.05 * speeds_.back());
}

void ArimaPredictor::save_state(StateWriter& out) const
{
    out.put(std::vector<double>(speeds_.begin(), speeds_.end()));
    out.put(std::vector<double>(differences_.begin(), differences_.end()));
    for (const double v : { phi1_, phi2_, theta_, last_residual_ })
        out.put(v);
    out.put(fitted_);
    out.put(since_fit_);
}

void ArimaPredictor::load_state(StateReader& in)
{
    std::vector<double> values;
    in.get(values, "ARIMA speeds");
    speeds_.assign(values.begin(), values.end());
    in.get(values, "ARIMA differences");
    differences_.assign(values.begin(), values.end());
    for (double* v : { &phi1_, &phi2_, &theta_, &last_residual_ })
        *v = in.get<double>("ARIMA fit");
    fitted_ = in.get_bool("ARIMA fitted");
    since_fit_ = in.get<int>("ARIMA refit counter");
}

} // namespace fulcrum::predict
