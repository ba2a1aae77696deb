#include "ui/views/distribution_band.h"

#include <QAreaSeries>
#include <QChart>
#include <QLineSeries>

namespace fulcrum::ui {

DistributionBand::DistributionBand(QChart& chart, QAbstractAxis& x, QAbstractAxis& y)
    : least_(new QLineSeries(&chart))
    , greatest_(new QLineSeries(&chart))
    , median_(new QLineSeries(&chart))
    , band_(new QAreaSeries(greatest_, least_))
{
    band_->setName(QStringLiteral("all workers: least to greatest"));
    band_->setBrush(QColor(160, 160, 160, 90));
    band_->setPen(QPen(QColor(140, 140, 140), 0.8));
    QPen median_pen(QColor(60, 60, 60));
    median_pen.setWidthF(1.6);
    median_->setPen(median_pen);
    median_->setName(QStringLiteral("median worker"));
    chart.addSeries(band_);
    chart.addSeries(median_);
    for (QAbstractSeries* s : { static_cast<QAbstractSeries*>(band_), static_cast<QAbstractSeries*>(median_) }) {
        s->attachAxis(&x);
        s->attachAxis(&y);
    }
    set_visible(false);
}

void DistributionBand::replace(
    const QList<QPointF>& least, const QList<QPointF>& median, const QList<QPointF>& greatest)
{
    least_->replace(least);
    greatest_->replace(greatest);
    median_->replace(median);
}

void DistributionBand::set_visible(bool visible)
{
    band_->setVisible(visible);
    median_->setVisible(visible);
}

bool DistributionBand::visible() const
{
    return median_->isVisible();
}

} // namespace fulcrum::ui
