#include "ui/views/equilibrium_view.h"

#include "ui/console_store.h"
#include "ui/views/chart_axes.h"
#include "ui/views/iteration_window.h"
#include "ui/views/palette.h"
#include "ui/views/series_points.h"

#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QDoubleSpinBox>
#include <QGraphicsLayout>
#include <QGraphicsLineItem>
#include <QGraphicsSimpleTextItem>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QTimer>
#include <QValueAxis>
#include <QWheelEvent>
#include <algorithm>
#include <array>
#include <cmath>

namespace fulcrum::ui {

namespace {

// Points per series: the chart's width in pixels bounds what can be seen, and 16,000 points in
// all keep 64 workers on two charts within a frame (48,000 took 15 ms at p95; bench/console_frames).
int points_per_series(int width, int series)
{
    return std::clamp(std::min(width, 16000 / std::max(series, 1)), 64, 2000);
}

// A size smaller than the window's text for a chart's title, axes and legend: two charts
// share the height above the workers table, down to 1280x800 screens.
QFont chart_font(int step)
{
    QFont font = QApplication::font();
    font.setPointSizeF(std::max(6.0, font.pointSizeF() - step));
    return font;
}

const QMargins kChartMargins(2, 0, 2, 0);

QChart* make_chart(const QString& title)
{
    auto* chart = new QChart;
    chart->setTitle(title);
    chart->setTitleFont(chart_font(1));
    chart->legend()->setFont(chart_font(1));
    chart->setMargins(kChartMargins);
    chart->layout()->setContentsMargins(0, 0, 0, 0);
    chart->setBackgroundRoundness(0);
    chart->legend()->setAlignment(Qt::AlignRight);
    chart->setAnimationOptions(QChart::NoAnimation);
    return chart;
}

constexpr double kMarksOnTop = 100; // above the chart's grid and series items

QValueAxis* make_axis(const QString& title)
{
    auto* axis = new QValueAxis;
    axis->setTitleText(title);
    axis->setTitleFont(chart_font(2));
    axis->setLabelsFont(chart_font(2));
    axis->setLabelFormat(QStringLiteral("%g"));
    return axis;
}

} // namespace

EquilibriumView::EquilibriumView(ConsoleStore& store, IterationWindow& window, QWidget* parent)
    : QWidget(parent)
    , store_(store)
    , window_(window)
    , sizes_(make_chart(QStringLiteral("Batch size per worker")))
    , times_(make_chart(QStringLiteral("Batch processing time per worker, and spread")))
    , sizes_view_(new QChartView(sizes_, this))
    , times_view_(new QChartView(times_, this))
    , sizes_x_(make_axis(QStringLiteral("iteration")))
    , sizes_y_(make_axis(QStringLiteral("samples")))
    , times_x_(make_axis(QStringLiteral("iteration")))
    , times_y_(make_axis(QStringLiteral("seconds")))
    , spread_y_(make_axis(QStringLiteral("spread")))
    , spread_twin_(make_axis(QStringLiteral("spread")))
    , spread_(new QLineSeries(this))
    , threshold_(new QDoubleSpinBox(this))
    , summary_(new QLabel(this))
{
    sizes_x_->setTitleVisible(false); // the chart below names the iterations
    sizes_->addAxis(sizes_x_, Qt::AlignBottom);
    sizes_->addAxis(sizes_y_, Qt::AlignLeft);
    times_->addAxis(times_x_, Qt::AlignBottom);
    times_->addAxis(times_y_, Qt::AlignLeft);
    times_->addAxis(spread_y_, Qt::AlignRight);
    sizes_->addAxis(spread_twin_, Qt::AlignRight);
    spread_twin_->setLabelsBrush(Qt::transparent);
    spread_twin_->setTitleBrush(Qt::transparent);
    spread_twin_->setLineVisible(false);
    spread_twin_->setGridLineVisible(false);
    spread_->setName(QStringLiteral("spread (max − min) / mean"));
    QPen spread_pen(Qt::black);
    spread_pen.setWidthF(1.5);
    spread_pen.setStyle(Qt::DashLine);
    spread_->setPen(spread_pen);
    times_->addSeries(spread_);
    spread_->attachAxis(times_x_);
    spread_->attachAxis(spread_y_);
    // Named by its axis: the two legends then list the same workers and take one width.
    spread_y_->setTitleText(QStringLiteral("spread (max − min) / mean, dashed"));
    spread_twin_->setTitleText(spread_y_->titleText());
    for (QLegendMarker* marker : times_->legend()->markers(spread_))
        marker->setVisible(false);
    size_band_ = std::make_unique<DistributionBand>(*sizes_, *sizes_x_, *sizes_y_);
    time_band_ = std::make_unique<DistributionBand>(*times_, *times_x_, *times_y_);
    for (QChartView* view : { sizes_view_, times_view_ }) {
        view->setRenderHint(QPainter::Antialiasing, false);
        view->viewport()->installEventFilter(this);
        view->setToolTip(QStringLiteral("Wheel: zoom · drag: pan · double-click: follow the newest iterations"));
    }

    threshold_->setRange(0.5, 100);
    threshold_->setValue(20);
    threshold_->setSuffix(QStringLiteral(" %"));
    threshold_->setToolTip(QStringLiteral("Equilibrium: the spread of batch times stays under this for 10 iterations"));
    connect(threshold_, &QDoubleSpinBox::valueChanged, this, &EquilibriumView::refresh);
    auto* bar = new QHBoxLayout;
    summary_->setWordWrap(true); // a long status wraps rather than widening the window
    summary_->setMinimumWidth(200);
    bar->addWidget(summary_, 1);
    bar->addWidget(new QLabel(QStringLiteral("Equilibrium when the spread stays under"), this));
    bar->addWidget(threshold_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(bar);
    layout->addWidget(sizes_view_, 1);
    layout->addWidget(times_view_, 1);
    for (QChart* chart : { sizes_, times_ })
        connect(chart, &QChart::plotAreaChanged, this, [this] {
            align_plots();
            place_marks();
        });
}

double EquilibriumView::threshold() const
{
    return threshold_->value() / 100.0;
}

std::vector<WorkerId> EquilibriumView::workers_to_draw(std::int64_t first, std::int64_t last) const
{
    const JobHistory& history = store_.history();
    std::vector<WorkerId> drawn;
    if (history.workers() <= kMostLines) {
        for (WorkerId w = 0; w < history.workers(); ++w)
            drawn.push_back(w);
        return drawn;
    }
    // The worst stragglers of the iterations shown: the barrier waited for them most often.
    std::vector<std::pair<int, WorkerId>> waited_for(static_cast<std::size_t>(history.workers()));
    for (WorkerId w = 0; w < history.workers(); ++w)
        waited_for[static_cast<std::size_t>(w)] = { 0, w };
    const auto& its = history.iterations();
    const std::size_t end = its.partition_point([last](const IterationSummary& s) { return s.iteration <= last; });
    for (std::size_t i = history.position_of(first); i < end; ++i)
        if (its[i].straggler >= 0 && its[i].straggler < history.workers())
            --waited_for[static_cast<std::size_t>(its[i].straggler)].first; // most first when sorted
    const auto worst = waited_for.begin() + std::min<std::ptrdiff_t>(kStragglersDrawn, std::ssize(waited_for));
    std::partial_sort(waited_for.begin(), worst, waited_for.end());
    for (auto it = waited_for.begin(); it != worst && it->first < 0; ++it)
        drawn.push_back(it->second);
    if (chosen_ && *chosen_ < history.workers() && std::find(drawn.begin(), drawn.end(), *chosen_) == drawn.end())
        drawn.push_back(*chosen_);
    std::sort(drawn.begin(), drawn.end());
    return drawn;
}

bool EquilibriumView::ensure_lines(const std::vector<WorkerId>& workers)
{
    int added = 0;
    for (const WorkerId w : workers) {
        const auto k = static_cast<std::size_t>(w);
        if (size_lines_.size() <= k) {
            size_lines_.resize(k + 1);
            time_lines_.resize(k + 1);
        }
        while (size_points_.size() <= k) {
            size_points_.emplace_back([](const WorkerSample& s) { return double(s.batch_size); });
            time_points_.emplace_back([](const WorkerSample& s) { return s.batch_size > 0 ? s.batch_time_s() : NAN; });
        }
        if (size_lines_[k])
            continue;
        // Adding a series to a chart costs about half a millisecond: a few workers per frame,
        // so the first frames of a 16-worker job stay short (the rest follow frame by frame).
        if (added++ == kWorkersAddedPerFrame)
            return false;
        for (auto [chart, list, x, y] : { std::tuple { sizes_, &size_lines_, sizes_x_, sizes_y_ },
                 std::tuple { times_, &time_lines_, times_x_, times_y_ } }) {
            (*list)[k] = std::make_unique<WorkerLine>(*chart, *x, *y, QStringLiteral("w%1").arg(w), pen_of(w));
            // Hovering a worker's legend entry brings its lines forward in both charts, and
            // leaving it brings back the chosen worker's.
            for (QLegendMarker* marker : chart->legend()->markers((*list)[k]->legend_series()))
                connect(marker, &QLegendMarker::hovered, this,
                    [this, w](bool on) { highlight(on ? w : chosen_.value_or(-1)); });
        }
    }
    return true;
}

void EquilibriumView::set_chosen(std::optional<WorkerId> worker)
{
    if (chosen_ == worker)
        return;
    chosen_ = worker;
    refresh();
    highlight(worker.value_or(-1));
}

QPen EquilibriumView::pen_of(WorkerId worker) const
{
    QColor colour = series_colour(worker);
    if (highlighted_ >= 0 && worker != highlighted_)
        colour.setAlpha(50);
    QPen pen(colour);
    pen.setWidthF(worker == highlighted_ ? 2.5 : 1.2);
    return pen;
}

void EquilibriumView::highlight(int worker)
{
    highlighted_ = worker;
    for (auto* list : { &size_lines_, &time_lines_ })
        for (std::size_t k = 0; k < list->size(); ++k)
            if ((*list)[k])
                (*list)[k]->set_pen(pen_of(static_cast<WorkerId>(k)));
}

std::pair<int, int> EquilibriumView::line_stretches(WorkerId w) const
{
    const auto k = static_cast<std::size_t>(w);
    if (w < 0 || k >= size_lines_.size() || !size_lines_[k])
        return { 0, 0 };
    return { size_lines_[k]->segments_drawn(), time_lines_[k]->segments_drawn() };
}

void EquilibriumView::refresh_complete()
{
    const std::vector<WorkerId> drawn = workers_to_draw(window_.first(), std::max(window_.last(), window_.first() + 1));
    while (!ensure_lines(drawn)) { }
    refresh();
}

void EquilibriumView::refresh()
{
    const JobHistory& history = store_.history();
    const std::int64_t first = window_.first(), last = std::max(window_.last(), window_.first() + 1);
    drawn_ = workers_to_draw(first, last);
    if (!ensure_lines(drawn_))
        QTimer::singleShot(0, this, [this] { refresh(); }); // the next workers' lines, in the next frame
    const bool distribution = history.workers() > kMostLines;
    const QString spread_title = !history.iterations().empty() && history.iterations().back().robust_spread
        ? QStringLiteral("robust spread, dashed")
        : QStringLiteral("spread (max − min) / mean, dashed");
    if (spread_y_->titleText() != spread_title) {
        spread_y_->setTitleText(spread_title);
        spread_twin_->setTitleText(spread_title);
    }
    const int points = points_per_series(sizes_view_->width(), 2 * static_cast<int>(drawn_.size()) + 6);
    double max_size = 1, max_time = 1e-6;
    std::vector<QList<QPointF>> sizes(size_lines_.size()), times(size_lines_.size());
    for (const WorkerId w : drawn_) {
        const auto k = static_cast<std::size_t>(w);
        if (k >= size_lines_.size() || !size_lines_[k])
            continue; // its lines come in a next frame
        const SeriesDownsampler::Identity identity { history.generation(), w };
        sizes[k] = size_points_[k].points(history.worker(w), identity, first, last, points);
        times[k] = time_points_[k].points(history.worker(w), identity, first, last, points);
        for (const QPointF& p : sizes[k])
            max_size = std::max(max_size, p.y());
        for (const QPointF& p : times[k])
            max_time = std::max(max_time, p.y());
    }
    // The spread, per iteration: the worst of each step of iterations.
    QList<QPointF> spread;
    double max_spread = 0.0;
    const auto& its = history.iterations();
    std::size_t i = history.position_of(first);
    const std::size_t end = its.partition_point([last](const IterationSummary& s) { return s.iteration <= last; });
    const std::size_t step = std::max<std::size_t>(1, (end > i ? end - i : 0) / static_cast<std::size_t>(points));
    // A large job's distribution: each step's least and greatest, and its first iteration's median.
    QList<QPointF> least_size, median_size, greatest_size, least_time, median_time, greatest_time;
    for (; i < end; i += step) {
        const IterationSummary& at = its[i];
        double worst = at.spread, least_s = at.least_batch, most_s = at.greatest_batch;
        double least_t = at.fastest_batch_time_s, most_t = at.slowest_batch_time_s;
        for (std::size_t k = i + 1; k < std::min(end, i + step); ++k) {
            worst = std::max(worst, its[k].spread);
            least_s = std::min(least_s, static_cast<double>(its[k].least_batch));
            most_s = std::max(most_s, static_cast<double>(its[k].greatest_batch));
            least_t = std::min(least_t, its[k].fastest_batch_time_s);
            most_t = std::max(most_t, its[k].slowest_batch_time_s);
        }
        const auto x = static_cast<double>(at.iteration);
        spread.append(QPointF(x, worst * 100));
        max_spread = std::max(max_spread, worst * 100);
        if (!distribution)
            continue;
        least_size.append(QPointF(x, least_s));
        median_size.append(QPointF(x, at.median_batch));
        greatest_size.append(QPointF(x, most_s));
        least_time.append(QPointF(x, least_t));
        median_time.append(QPointF(x, at.median_batch_time_s));
        greatest_time.append(QPointF(x, most_t));
        max_size = std::max(max_size, most_s);
        max_time = std::max(max_time, most_t);
    }
    // Axes before points: each series lays out its path when either changes, so this order
    // lays out 129 paths once for the new points rather than again for the new ranges. While
    // following, the iteration axis keeps its scale as the newest iterations grow into it.
    if (x_span_epoch_ != window_.epoch()) { // another job: its own range, not the last one's scale
        x_span_ = {};
        x_span_epoch_ = window_.epoch();
    }
    x_span_ = window_.following() ? follow_span(x_span_, static_cast<double>(first), static_cast<double>(last))
                                  : AxisSpan { static_cast<double>(first), static_cast<double>(last) };
    for (QValueAxis* x : { sizes_x_, times_x_ })
        set_iteration_axis(*x, x_span_);
    set_value_axis(*sizes_y_, max_size, true);
    set_value_axis(*times_y_, max_time, false);
    for (QValueAxis* axis : { spread_y_, spread_twin_ })
        set_value_axis(*axis, std::max(max_spread, threshold() * 200), false, QStringLiteral("%"));
    for (std::size_t k = 0; k < size_lines_.size(); ++k) { // broken where the worker sat out
        if (!size_lines_[k])
            continue;
        const bool listed = std::binary_search(drawn_.begin(), drawn_.end(), static_cast<WorkerId>(k));
        size_lines_[k]->set_listed(listed); // a straggler no longer among the worst leaves the legend
        time_lines_[k]->set_listed(listed);
        size_lines_[k]->replace(sizes[k], 2.0 * static_cast<double>(size_points_[k].width()));
        time_lines_[k]->replace(times[k], 2.0 * static_cast<double>(time_points_[k].width()));
    }
    size_band_->set_visible(distribution);
    time_band_->set_visible(distribution);
    size_band_->replace(least_size, median_size, greatest_size);
    time_band_->replace(least_time, median_time, greatest_time);
    spread_->replace(spread);

    mark_at_.clear();
    if (const auto job = store_.shown_job())
        mark_at_ = event_marks(store_.events(), *job);
    equilibrium_.reset();
    std::optional<std::int64_t> lost_at;
    // One mark per stretch of equilibria: a noisy job whose spread hovers at the threshold
    // leaves an equilibrium for a few iterations and comes back, which drew about 20 marks
    // on a long run. An equilibrium that follows the last within kEquilibriumWindow
    // iterations joins its mark, whose tooltip counts the interruptions.
    std::optional<Equilibrium> stretch;
    int interruptions = 0;
    const auto mark_stretch = [&] {
        if (!stretch)
            return;
        EventMark m;
        m.kind = EventMark::Kind::Equilibrium;
        m.iteration = stretch->first;
        m.label = QStringLiteral("equilibrium");
        m.tooltip = QStringLiteral("equilibrium from iteration %1: the spread stays under %2 %")
                        .arg(stretch->first)
                        .arg(threshold_->value());
        if (interruptions > 0)
            m.tooltip += QStringLiteral(" (to iteration %1, left %2 times for fewer than %3 iterations)")
                             .arg(stretch->last)
                             .arg(interruptions)
                             .arg(kEquilibriumWindow);
        mark_at_.push_back(std::move(m));
    };
    for (const Equilibrium& e : equilibria(history, threshold())) {
        if (stretch && e.first - stretch->last <= static_cast<std::int64_t>(kEquilibriumWindow)) {
            stretch->last = e.last;
            ++interruptions;
        } else {
            mark_stretch();
            stretch = e;
            interruptions = 0;
        }
        if (e.last == history.last_iteration())
            equilibrium_ = e.first;
        else
            lost_at = e.last + 1;
    }
    mark_stretch();
    mark_at_ = merge_marks(mark_at_);
    place_marks();

    const auto newest = history.last_iteration();
    // Iterations under the threshold since the spread last crossed it: an operator sees how
    // near the next equilibrium is, not only that there is none.
    std::size_t under = 0;
    while (under < its.size() && its[its.size() - 1 - under].spread < threshold())
        ++under;
    const QString trend = under == 0
        ? QStringLiteral("over %1 %").arg(threshold_->value())
        : QStringLiteral("under %1 % for %2 of the %3 iterations in a row an equilibrium needs")
              .arg(threshold_->value())
              .arg(under)
              .arg(kEquilibriumWindow);
    summary_->setText(!newest ? QStringLiteral("No iterations yet.")
            : equilibrium_
            ? QStringLiteral("Equilibrium since iteration %1 (spread under %2 %); newest iteration %3.")
                  .arg(*equilibrium_)
                  .arg(threshold_->value())
                  .arg(*newest)
            : QStringLiteral("Not in equilibrium at iteration %1: spread %2 %, %3%4.")
                  .arg(*newest)
                  .arg(its.empty() ? 0.0 : its.back().spread * 100, 0, 'f', 1)
                  .arg(trend)
                  .arg(lost_at ? QStringLiteral("; the last one ended at iteration %1").arg(*lost_at) : QString()));
}

QString EquilibriumView::summary() const
{
    return summary_->text();
}

void EquilibriumView::align_plots()
{
    if (aligning_ || sizes_->plotArea().isEmpty() || times_->plotArea().isEmpty())
        return;
    aligning_ = true;
    const QMargins base = kChartMargins;
    // Each plot's left edge as it would be with the base margin: what its own axis takes.
    const auto natural
        = [&](QChart* chart) { return chart->plotArea().left() - (chart->margins().left() - base.left()); };
    const double size_left = natural(sizes_), time_left = natural(times_);
    const double left = std::max(size_left, time_left);
    for (auto [chart, own] : { std::pair { sizes_, size_left }, std::pair { times_, time_left } }) {
        QMargins want = base;
        want.setLeft(base.left() + static_cast<int>(std::lround(left - own)));
        if (chart->margins() != want)
            chart->setMargins(want);
    }
    aligning_ = false;
}

void EquilibriumView::place_marks()
{
    for (QGraphicsItem* item : marks_)
        delete item;
    marks_.clear();
    for (QChart* chart : { sizes_, times_ }) {
        const QRectF plot = chart->plotArea();
        QLineSeries* anchor = chart == sizes_ ? size_band_->anchor() : spread_;
        if (plot.isEmpty())
            continue;
        // One row of labels per kind; a label closer than its width to the previous one of
        // its row is left out (the line and its tooltip stay), so a spread that hovers at the
        // threshold does not write "equilibrium" over itself.
        std::array<double, 4> label_free_from { -1e9, -1e9, -1e9, -1e9 };
        for (const EventMark& m : mark_at_) {
            const double x = chart->mapToPosition(QPointF(static_cast<double>(m.iteration), 0), anchor).x();
            if (x < plot.left() || x > plot.right())
                continue;
            const auto row = static_cast<std::size_t>(m.kind);
            QPen pen(mark_colour(m.kind));
            pen.setStyle(m.kind == EventMark::Kind::Phase ? Qt::DashLine
                    : m.kind == EventMark::Kind::Operator ? Qt::DashDotLine
                                                          : Qt::SolidLine);
            pen.setWidthF(m.kind == EventMark::Kind::Equilibrium ? 2 : 1.5);
            auto* line = new QGraphicsLineItem(x, plot.top(), x, plot.bottom(), chart);
            line->setZValue(kMarksOnTop); // above the grid lines a mark may fall on
            line->setPen(pen);
            line->setToolTip(m.tooltip);
            marks_.push_back(line);
            auto* text = new QGraphicsSimpleTextItem(m.label, chart);
            // Right of its line, or left of it where it would run past the plot into the legend.
            const double width = text->boundingRect().width();
            const double left = x + 3 + width <= plot.right() ? x + 3 : std::max(plot.left(), x - 3 - width);
            if (left < label_free_from[row]) {
                delete text;
                continue;
            }
            text->setBrush(pen.color());
            text->setToolTip(m.tooltip);
            text->setZValue(kMarksOnTop);
            text->setPos(left, plot.top() + 2 + 16 * static_cast<double>(row)); // a row per kind
            label_free_from[row] = left + width + 8;
            marks_.push_back(text);
        }
    }
}

std::vector<const QGraphicsSimpleTextItem*> EquilibriumView::drawn_labels() const
{
    std::vector<const QGraphicsSimpleTextItem*> labels;
    for (const QGraphicsItem* item : marks_)
        if (const auto* text = dynamic_cast<const QGraphicsSimpleTextItem*>(item))
            labels.push_back(text);
    return labels;
}

bool EquilibriumView::eventFilter(QObject* watched, QEvent* event)
{
    QChartView* view = watched == sizes_view_->viewport() ? sizes_view_
        : watched == times_view_->viewport()              ? times_view_
                                                          : nullptr;
    if (!view)
        return QWidget::eventFilter(watched, event);
    QChart* chart = view->chart();
    QLineSeries* anchor = chart == sizes_ ? size_band_->anchor() : spread_;
    const auto iteration_at = [&](QPointF pos) {
        return anchor ? static_cast<std::int64_t>(std::llround(chart->mapToValue(pos, anchor).x())) : window_.first();
    };
    static QPointF drag_from;
    switch (event->type()) {
    case QEvent::Wheel: {
        auto* wheel = static_cast<QWheelEvent*>(event);
        window_.zoom(wheel->angleDelta().y() > 0 ? 0.8 : 1.25, iteration_at(wheel->position()));
        return true;
    }
    case QEvent::MouseButtonPress:
        drag_from = static_cast<QMouseEvent*>(event)->position();
        return true;
    case QEvent::MouseMove:
        if (static_cast<QMouseEvent*>(event)->buttons() & Qt::LeftButton) {
            const QPointF at = static_cast<QMouseEvent*>(event)->position();
            const std::int64_t delta = iteration_at(drag_from) - iteration_at(at);
            if (delta != 0) {
                window_.pan(delta);
                drag_from = at;
            }
            return true;
        }
        break;
    case QEvent::MouseButtonDblClick:
        window_.follow();
        return true;
    default:
        break;
    }
    return QWidget::eventFilter(watched, event);
}

QString EquilibriumView::visible_csv() const
{
    QString csv = QStringLiteral("series,iteration,value\n");
    const auto add = [&csv](const QList<QPointF>& points, const QString& name) {
        for (const QPointF& p : points)
            csv += QStringLiteral("%1,%2,%3\n").arg(name).arg(static_cast<qint64>(p.x())).arg(p.y(), 0, 'g', 9);
    };
    for (const WorkerId w : drawn_) {
        const auto k = static_cast<std::size_t>(w);
        if (k >= size_lines_.size() || !size_lines_[k])
            continue;
        add(size_lines_[k]->points(), QStringLiteral("batch_size_w%1").arg(w));
        add(time_lines_[k]->points(), QStringLiteral("batch_time_s_w%1").arg(w));
    }
    if (size_band_->visible()) {
        add(size_band_->least().points(), QStringLiteral("batch_size_least"));
        add(size_band_->median().points(), QStringLiteral("batch_size_median"));
        add(size_band_->greatest().points(), QStringLiteral("batch_size_greatest"));
        add(time_band_->least().points(), QStringLiteral("batch_time_s_least"));
        add(time_band_->median().points(), QStringLiteral("batch_time_s_median"));
        add(time_band_->greatest().points(), QStringLiteral("batch_time_s_greatest"));
    }
    add(spread_->points(), QStringLiteral("spread_percent"));
    return csv;
}

} // namespace fulcrum::ui
