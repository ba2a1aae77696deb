#pragma once

#include "predict/speed_predictor.h"

#include <deque>

namespace fulcrum::predict {

// ARIMA(2,2,1) on the speed series: the second difference w = v_k - 2 v_{k-1} + v_{k-2}
// follows w_k = phi1 w_{k-1} + phi2 w_{k-2} + theta e_{k-1} + e_k. Coefficients are
// estimated by the Hannan-Rissanen two-stage regression (a long AR model gives residual
// estimates, then least squares on lagged values and residuals), refitted periodically on
// a sliding window. Until enough history exists it predicts the last speed.
class ArimaPredictor final : public SpeedPredictor {
public:
    struct Options {
        int window = 300; // samples of history the fit uses
        int refit_every = 25; // observations between refits
        int min_samples = 40; // before this, predict the last speed
    };
    ArimaPredictor();
    explicit ArimaPredictor(Options options);
    std::string name() const override { return "arima"; }
    void observe(const SpeedSample& sample) override;
    double predict(const ResourceState&) override;
    void save_state(StateWriter& out) const override;
    void load_state(StateReader& in) override;

    double phi1() const { return phi1_; }
    double phi2() const { return phi2_; }
    double theta() const { return theta_; }

private:
    void refit();
    double predicted_difference() const;

    Options options_;
    std::deque<double> speeds_;
    std::deque<double> differences_; // w, aligned with speeds_ from the third sample on
    double phi1_ = 0, phi2_ = 0, theta_ = 0;
    double last_residual_ = 0;
    bool fitted_ = false;
    int since_fit_ = 0;
};

} // namespace fulcrum::predict
