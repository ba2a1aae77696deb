#pragma once

#include <QList>
#include <QPointF>

class QAbstractAxis;
class QAreaSeries;
class QChart;
class QLineSeries;

namespace fulcrum::ui {

// The workers' distribution on a chart at each iteration: a grey band from the least to
// the greatest value and the median as a line. What a chart of a large job draws instead of
// a line per worker (issue 44 item 2), its lines left for the workers worth a look.
class DistributionBand {
public:
    DistributionBand(QChart& chart, QAbstractAxis& x, QAbstractAxis& y);

    void replace(const QList<QPointF>& least, const QList<QPointF>& median, const QList<QPointF>& greatest);
    void set_visible(bool visible);
    bool visible() const;
    // A series always on the chart's axes, whatever is drawn: where marks are mapped.
    QLineSeries* anchor() const { return median_; }
    const QLineSeries& least() const { return *least_; }
    const QLineSeries& median() const { return *median_; }
    const QLineSeries& greatest() const { return *greatest_; }

private:
    QLineSeries* least_;
    QLineSeries* greatest_;
    QLineSeries* median_;
    QAreaSeries* band_;
};

} // namespace fulcrum::ui
