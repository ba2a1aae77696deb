#pragma once

#include "ui/views/iteration_window.h"
#include "ui/views/series_points.h"

#include <QWidget>
#include <optional>

class QChart;
class QChartView;
class QComboBox;
class QLabel;
class QLineSeries;
class QValueAxis;

namespace fulcrum::ui {

class ConsoleStore;
class IterationWindow;

// One worker's measured speed against the batch-size policy's prediction for it, over the
// shown iterations, with the RMSE of the prediction there (LB-BSP's predictors: EMA, ARIMA,
// NARX).
class PredictionView : public QWidget {
    Q_OBJECT
public:
    PredictionView(ConsoleStore& store, IterationWindow& window, QWidget* parent = nullptr);
    void refresh();
    // The worker shown (the one chosen in the workers table): now, or once the job's
    // workers are known.
    void set_worker(WorkerId worker);
    void forget_worker() { wanted_.reset(); } // another job: a choice not yet shown is dropped
    // Over the shown iterations, where the policy made a prediction; unset when it made none.
    std::optional<double> rmse() const { return rmse_; }
    QChartView* chart_view() const { return view_; }
    QString visible_csv() const;

private:
    ConsoleStore& store_;
    IterationWindow& window_;
    QComboBox* worker_;
    QLabel* summary_;
    QChart* chart_;
    QChartView* view_;
    QLineSeries* measured_;
    QLineSeries* predicted_;
    QValueAxis* x_;
    QValueAxis* y_;
    std::optional<double> rmse_;
    std::optional<WorkerId> wanted_; // chosen before the list held it
    SeriesDownsampler measured_points_;
    SeriesDownsampler predicted_points_;
    AxisSpan x_span_;
    std::uint64_t x_span_epoch_ = 0; // the window's epoch x_span_ was held in
};

} // namespace fulcrum::ui
