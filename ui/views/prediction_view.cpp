#include "ui/views/prediction_view.h"

#include "ui/console_store.h"
#include "ui/views/chart_axes.h"
#include "ui/views/iteration_window.h"
#include "ui/views/series_points.h"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QValueAxis>
#include <cmath>

namespace fulcrum::ui {

PredictionView::PredictionView(ConsoleStore& store, IterationWindow& window, QWidget* parent)
    : QWidget(parent)
    , store_(store)
    , window_(window)
    , worker_(new QComboBox(this))
    , summary_(new QLabel(this))
    , chart_(new QChart)
    , view_(new QChartView(chart_, this))
    , measured_(new QLineSeries(this))
    , predicted_(new QLineSeries(this))
    , x_(new QValueAxis(this))
    , y_(new QValueAxis(this))
    , measured_points_([](const WorkerSample& s) { return s.batch_size > 0 ? double(s.speed) : NAN; })
    , predicted_points_([](const WorkerSample& s) { return double(s.predicted_speed); })
{
    chart_->setTitle(QStringLiteral("Predicted and measured speed"));
    chart_->setAnimationOptions(QChart::NoAnimation);
    measured_->setName(QStringLiteral("measured"));
    predicted_->setName(QStringLiteral("predicted"));
    QPen dashed(QColor(0xd6, 0x27, 0x28));
    dashed.setStyle(Qt::DashLine);
    dashed.setWidthF(1.5);
    predicted_->setPen(dashed);
    x_->setTitleText(QStringLiteral("iteration"));
    x_->setLabelFormat(QStringLiteral("%g"));
    y_->setTitleText(QStringLiteral("samples per second"));
    chart_->addAxis(x_, Qt::AlignBottom);
    chart_->addAxis(y_, Qt::AlignLeft);
    for (QLineSeries* s : { measured_, predicted_ }) {
        chart_->addSeries(s);
        s->attachAxis(x_);
        s->attachAxis(y_);
    }
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(QStringLiteral("Worker:"), this));
    bar->addWidget(worker_);
    bar->addWidget(summary_, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(bar);
    layout->addWidget(view_, 1);
    connect(worker_, &QComboBox::currentIndexChanged, this, &PredictionView::refresh);
}

void PredictionView::set_worker(WorkerId worker)
{
    wanted_ = worker;
    refresh();
}

void PredictionView::refresh()
{
    const JobHistory& h = store_.history();
    if (worker_->count() != h.workers()) {
        const QSignalBlocker block(worker_);
        const int keep = worker_->currentIndex();
        worker_->clear();
        for (int w = 0; w < h.workers(); ++w)
            worker_->addItem(QStringLiteral("w%1").arg(w), w);
        worker_->setCurrentIndex(keep >= 0 && keep < h.workers() ? keep : 0);
    }
    if (wanted_ && *wanted_ >= 0 && *wanted_ < h.workers()) {
        const int chosen = *wanted_;
        wanted_.reset();
        if (worker_->currentIndex() != chosen) {
            worker_->setCurrentIndex(chosen); // which refreshes
            return;
        }
    }
    const int w = worker_->currentIndex();
    rmse_.reset();
    if (w < 0 || w >= h.workers()) {
        measured_->clear();
        predicted_->clear();
        summary_->setText(QStringLiteral("No iterations yet."));
        return;
    }
    const std::int64_t first = window_.first(), last = window_.last();
    const int points = std::clamp(view_->width(), 64, 2000);
    const auto& ring = h.worker(w);
    const SeriesDownsampler::Identity identity { h.generation(), w };
    measured_->replace(measured_points_.points(ring, identity, first, last, points));
    predicted_->replace(predicted_points_.points(ring, identity, first, last, points));
    double sum = 0, top = 1;
    std::size_t n = 0;
    for (std::size_t i = h.position_of(w, first); i < ring.size() && ring[i].iteration <= last; ++i) {
        top = std::max({ top, double(ring[i].speed),
            std::isnan(ring[i].predicted_speed) ? 0.0 : double(ring[i].predicted_speed) });
        if (std::isnan(ring[i].predicted_speed) || ring[i].batch_size == 0)
            continue;
        const double e = double(ring[i].predicted_speed) - double(ring[i].speed);
        sum += e * e;
        ++n;
    }
    const double right = static_cast<double>(std::max(last, first + 1));
    if (x_span_epoch_ != window_.epoch()) { // another job: its own range, not the last one's scale
        x_span_ = {};
        x_span_epoch_ = window_.epoch();
    }
    x_span_ = window_.following() ? follow_span(x_span_, static_cast<double>(first), right)
                                  : AxisSpan { static_cast<double>(first), right };
    set_iteration_axis(*x_, x_span_);
    set_value_axis(*y_, top, false); // round ticks: 0, 25, 50 … 125 samples/s, not 30.3 and 60.5
    if (n > 0) {
        rmse_ = std::sqrt(sum / static_cast<double>(n));
        summary_->setText(
            QStringLiteral("RMSE %1 samples/s over %2 predicted iterations shown").arg(*rmse_, 0, 'f', 2).arg(n));
    } else {
        summary_->setText(QStringLiteral(
            "The batch-size policy made no prediction for this worker here (only lbbsp-cpu predicts speeds)."));
    }
}

QString PredictionView::visible_csv() const
{
    QString csv = QStringLiteral("series,iteration,samples_per_s\n");
    for (const QLineSeries* s : { measured_, predicted_ })
        for (const QPointF& p : s->points())
            csv += QStringLiteral("%1,%2,%3\n").arg(s->name()).arg(static_cast<qint64>(p.x())).arg(p.y(), 0, 'g', 9);
    return csv;
}

} // namespace fulcrum::ui
