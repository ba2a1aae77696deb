#include "ui/views/worker_line.h"

#include <QChart>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>

namespace fulcrum::ui {

WorkerLine::WorkerLine(QChart& chart, QAbstractAxis& x, QAbstractAxis& y, const QString& name, const QPen& pen)
    : chart_(chart)
    , x_(x)
    , y_(y)
    , pen_(pen)
{
    add_segment()->setName(name);
}

QLineSeries* WorkerLine::add_segment()
{
    auto* series = new QLineSeries(&chart_);
    series->setPen(pen_);
    chart_.addSeries(series);
    series->attachAxis(&x_);
    series->attachAxis(&y_);
    if (!segments_.empty()) // the worker is named once
        for (QLegendMarker* marker : chart_.legend()->markers(series))
            marker->setVisible(false);
    segments_.push_back(series);
    return series;
}

void WorkerLine::set_pen(const QPen& pen)
{
    pen_ = pen;
    for (QLineSeries* s : segments_)
        s->setPen(pen);
}

void WorkerLine::set_listed(bool listed)
{
    if (listed == listed_)
        return;
    listed_ = listed;
    for (QLegendMarker* marker : chart_.legend()->markers(segments_.front()))
        marker->setVisible(listed);
}

void WorkerLine::replace(const QList<QPointF>& points, double gap)
{
    std::size_t used = 0;
    qsizetype from = 0;
    for (qsizetype i = 1; i <= points.size(); ++i) {
        if (i < points.size() && points[i].x() - points[i - 1].x() < gap)
            continue;
        if (used == segments_.size())
            add_segment();
        segments_[used++]->replace(points.mid(from, i - from));
        from = i;
    }
    if (used == 0) // no points: the legend's series stays, empty
        segments_[used++]->clear();
    for (std::size_t k = used; k < segments_.size(); ++k)
        if (segments_[k]->count() > 0)
            segments_[k]->clear();
}

QList<QPointF> WorkerLine::points() const
{
    QList<QPointF> all;
    for (const QLineSeries* s : segments_)
        all.append(s->points());
    return all;
}

int WorkerLine::segments_drawn() const
{
    int drawn = 0;
    for (const QLineSeries* s : segments_)
        drawn += s->count() > 0 ? 1 : 0;
    return drawn;
}

} // namespace fulcrum::ui
