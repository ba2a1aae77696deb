#pragma once

#include <QList>
#include <QPen>
#include <QPointF>
#include <QString>
#include <vector>

class QAbstractAxis;
class QChart;
class QLineSeries;

namespace fulcrum::ui {

// One worker's line on a chart, broken where the worker has no iterations (excluded, not a
// member, its rows lost): Qt Charts joins every point of a series, so each stretch without
// a gap is a series of its own. The first one carries the worker's name in the legend; the
// others are drawn with its pen and kept out of the legend.
class WorkerLine {
public:
    WorkerLine(QChart& chart, QAbstractAxis& x, QAbstractAxis& y, const QString& name, const QPen& pen);

    QLineSeries* legend_series() const { return segments_.front(); }
    void set_pen(const QPen& pen);
    // Whether the legend names the worker (a large job's chart lists only the lines it draws).
    void set_listed(bool listed);
    // `points` in iteration order; two neighbours `gap` or more iterations apart are not joined.
    void replace(const QList<QPointF>& points, double gap);
    // Every point drawn, in order, all stretches together.
    QList<QPointF> points() const;
    int segments_drawn() const;

private:
    QLineSeries* add_segment();

    QChart& chart_;
    QAbstractAxis& x_;
    QAbstractAxis& y_;
    QPen pen_;
    std::vector<QLineSeries*> segments_;
    bool listed_ = true;
};

} // namespace fulcrum::ui
