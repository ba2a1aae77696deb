#include "ui/views/straggler_timeline.h"

#include "ui/console_store.h"
#include "ui/views/iteration_window.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

namespace fulcrum::ui {

namespace {
constexpr int kHeatWidth = 34;
// Lateness at which the heat strip is fully red: the worker's batch took half the iteration
// longer than the fastest one's.
constexpr double kFullHeat = 0.5;
constexpr int kLabelWidth = 44;
constexpr int kAxisHeight = 20;
} // namespace

struct StragglerTimeline::Frame {
    const JobHistory* history = nullptr;
    std::int64_t first = 0, last = 0;
    double t0 = 0, t1 = 1; // run seconds at the left and right edges of the lanes
    QRectF lanes; // where the lanes are drawn
    double lane_height = 0;
    int first_worker = 0, lane_count = 1; // the lanes drawn

    bool shows(int worker) const { return worker >= first_worker && worker < first_worker + lane_count; }
    double lane_top(int worker) const { return lanes.top() + (worker - first_worker) * lane_height; }

    double x_of(double t) const { return lanes.left() + (t - t0) / (t1 - t0) * lanes.width(); }
    double t_of(double x) const { return t0 + (x - lanes.left()) / lanes.width() * (t1 - t0); }
};

StragglerTimeline::StragglerTimeline(ConsoleStore& store, IterationWindow& window, QWidget* parent)
    : QWidget(parent)
    , store_(store)
    , window_(window)
{
    setMouseTracking(false);
    setFocusPolicy(Qt::StrongFocus);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setToolTip(QStringLiteral("Wheel or +/−: zoom · drag or ←/→: pan · End or double-click: follow the newest · click: "
                              "an iteration's numbers · Ctrl+wheel or Ctrl +/−: zoom the workers · Shift+wheel or "
                              "Page Up/Down: scroll them · Home: every worker"));
    connect(&window_, &IterationWindow::changed, this, qOverload<>(&QWidget::update));
}

StragglerTimeline::Frame StragglerTimeline::frame() const
{
    Frame f;
    f.history = &store_.history();
    f.first = window_.first();
    f.last = std::max(window_.last(), window_.first());
    const auto& its = f.history->iterations();
    const Lanes shown = lanes();
    f.first_worker = shown.first;
    f.lane_count = std::max(shown.count, 1);
    f.lanes = QRectF(kLabelWidth + kHeatWidth + 4, 2, std::max(10, width() - kLabelWidth - kHeatWidth - 8),
        std::max(10, height() - kAxisHeight - 4));
    f.lane_height = f.lanes.height() / f.lane_count;
    if (its.empty())
        return f;
    const std::size_t a = std::min(f.history->position_of(f.first), its.size() - 1);
    const std::size_t b = std::max(a,
        std::min(its.partition_point([&](const IterationSummary& s) { return s.iteration <= f.last; }), its.size())
            - 1);
    f.t0 = its[a].start_s;
    f.t1 = std::max(its[b].barrier_s, f.t0 + 1e-9);
    return f;
}

StragglerTimeline::Lanes StragglerTimeline::lanes() const
{
    const int workers = store_.history().workers();
    if (zoomed_.count <= 0 || zoomed_.count >= workers)
        return { 0, workers };
    return { std::clamp(zoomed_.first, 0, workers - zoomed_.count), zoomed_.count };
}

void StragglerTimeline::zoom_lanes(double factor, WorkerId around)
{
    const Lanes now = lanes();
    if (now.count <= 0)
        return;
    const int workers = store_.history().workers();
    const int count = std::clamp(static_cast<int>(std::lround(now.count * factor)), 1, workers);
    const int count_moved = count == now.count ? (factor < 1 ? -1 : 1) : 0; // one at least, at a few lanes
    const int next = std::clamp(count + count_moved, 1, workers);
    around = std::clamp(around, now.first, now.first + now.count - 1);
    const double at = static_cast<double>(around - now.first) / now.count; // where its lane is, 0..1
    zoomed_ = { static_cast<int>(std::lround(around - at * next)), next };
    zoomed_.first = lanes().first;
    update();
}

void StragglerTimeline::scroll_lanes(int by)
{
    const Lanes now = lanes();
    if (now.count >= store_.history().workers())
        return;
    zoomed_ = { now.first + by, now.count };
    zoomed_.first = lanes().first;
    update();
}

void StragglerTimeline::show_every_lane()
{
    zoomed_ = {};
    update();
}

void StragglerTimeline::set_chosen(std::optional<WorkerId> worker)
{
    chosen_ = worker;
    const Lanes now = lanes();
    if (worker && *worker < store_.history().workers() && (*worker < now.first || *worker >= now.first + now.count))
        scroll_lanes(*worker - now.count / 2 - now.first);
    update();
}

QString StragglerTimeline::find_worker(const QString& text)
{
    QString number = text.trimmed();
    if (number.startsWith(QLatin1Char('w'), Qt::CaseInsensitive))
        number.remove(0, 1);
    bool ok = false;
    const int worker = number.toInt(&ok);
    const int workers = store_.history().workers();
    if (workers == 0)
        return QStringLiteral("No job's iterations are shown yet.");
    if (!ok)
        return QStringLiteral("“%1” is not a worker: type its number, for example w%2.")
            .arg(text.trimmed())
            .arg(workers - 1);
    if (worker < 0 || worker >= workers)
        return QStringLiteral("There is no worker %1: this job has %2 (w0–w%3).")
            .arg(worker)
            .arg(workers)
            .arg(workers - 1);
    const Frame f = frame();
    const double readable = fontMetrics().height() * 1.5;
    Lanes next = lanes();
    if (f.lane_height < readable)
        next.count = std::clamp(static_cast<int>(f.lanes.height() / readable), 1, workers);
    zoomed_ = { worker - next.count / 2, next.count };
    zoomed_.first = lanes().first;
    chosen_ = worker;
    update();
    emit workerFound(worker);
    return {};
}

int StragglerTimeline::label_every() const
{
    const double lane = frame().lane_height;
    const double text = fontMetrics().height();
    for (const int every : { 1, 2, 5, 10, 20, 50, 100, 200, 500 })
        if (every * lane >= text)
            return every;
    return 1000;
}

StragglerTimeline::Frame StragglerTimeline::painted_frame() const
{
    Frame f = frame();
    const LaneRaster::Key& k = raster_.key();
    if (k.history == f.history && k.width == static_cast<int>(f.lanes.width())
        && k.height == static_cast<int>(f.lanes.height())) {
        f.t0 = k.t0;
        f.t1 = k.t1;
    }
    return f;
}

void StragglerTimeline::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    Frame f = frame();
    const JobHistory& h = *f.history;
    if (h.iterations().empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(
            rect(), Qt::AlignCenter, QStringLiteral("No iterations yet: connect to fulcrumd or open a recorded run."));
        return;
    }
    LaneRaster::Key key { &h, h.generation(), f.t0, f.t1, static_cast<int>(f.lanes.width()),
        static_cast<int>(f.lanes.height()), f.first, f.first_worker, f.lane_count };
    if (window_.following()) {
        // The time scale holds while the iterations grow into it (follow_span): the lanes'
        // pixels are then only extended, frame to frame, never redrawn whole.
        const LaneRaster::Key& drawn = raster_.key();
        const bool same = drawn.history == key.history && drawn.generation == key.generation && drawn.width == key.width
            && drawn.height == key.height && drawn.first_worker == key.first_worker && drawn.lanes == key.lanes;
        const AxisSpan span = follow_span(same ? AxisSpan { drawn.t0, drawn.t1 } : AxisSpan {}, f.t0, f.t1);
        if (same && span == AxisSpan { drawn.t0, drawn.t1 })
            key = drawn;
        else
            std::tie(key.t0, key.t1) = std::pair { span.from, span.to };
    }
    raster_.update(key, f.last);
    f.t0 = key.t0;
    f.t1 = key.t1;

    const std::vector<double> late = raster_.lateness();
    const double bar = raster_.lane_height();
    const int every = label_every();
    const double text_height = p.fontMetrics().height();
    const bool chosen_shown = chosen_ && f.shows(*chosen_);
    for (int w = f.first_worker; w < std::min(h.workers(), f.first_worker + f.lane_count); ++w) {
        const double top = f.lanes.top() + raster_.lane_top(w);
        p.setPen(palette().color(QPalette::Text));
        const QRectF label(0, std::max(0.0, top + f.lane_height / 2 - text_height / 2), kLabelWidth - 4, text_height);
        // Every `every`th worker is labelled, centred on its lane however thin; the chosen
        // one always, in bold, and its neighbours' labels give it room.
        const bool near_chosen = chosen_shown && w != *chosen_ && std::abs(w - *chosen_) * f.lane_height < text_height;
        if (chosen_ && w == *chosen_) {
            QFont bold = p.font();
            bold.setBold(true);
            p.save();
            p.setFont(bold);
            p.drawText(label, Qt::AlignRight | Qt::AlignVCenter, QStringLiteral("w%1").arg(w));
            p.restore();
        } else if (w % every == 0 && !near_chosen)
            p.drawText(label, Qt::AlignRight | Qt::AlignVCenter, QStringLiteral("w%1").arg(w));
        const double heat = w < static_cast<int>(late.size()) ? late[static_cast<std::size_t>(w)] : 0.0;
        const QRectF strip(kLabelWidth, top, kHeatWidth, bar);
        p.fillRect(strip, QColor::fromHsvF(0.0f, static_cast<float>(std::clamp(heat / kFullHeat, 0.0, 1.0)), 1.0f));
        if (f.lane_height >= 12)
            p.drawText(strip, Qt::AlignCenter, QStringLiteral("%1%").arg(heat * 100, 0, 'f', 0));
    }
    p.drawImage(f.lanes.topLeft(), raster_.image());
    if (chosen_shown) {
        p.setPen(QPen(palette().color(QPalette::Highlight), 2));
        p.setBrush(Qt::NoBrush);
        p.drawRect(QRectF(f.lanes.left() - kHeatWidth - 2, f.lane_top(*chosen_) - 1, f.lanes.width() + kHeatWidth + 3,
            std::max(f.lane_height, 2.0) + 1));
    }
    if (f.lane_count < h.workers()) {
        // Where the lanes shown are among all the workers, at the right edge.
        const double scale = f.lanes.height() / h.workers();
        p.fillRect(QRectF(width() - 3, f.lanes.top(), 3, f.lanes.height()), palette().color(QPalette::Midlight));
        p.fillRect(QRectF(width() - 3, f.lanes.top() + f.first_worker * scale, 3, std::max(2.0, f.lane_count * scale)),
            palette().color(QPalette::Dark));
    }

    // The job's phase changes and the operator's actions, where they happened on the run's
    // clock; the label at the top, the actor in the tooltip.
    marks_.clear();
    if (const auto job = store_.shown_job()) {
        double label_free_from = -1e9;
        for (EventMark& m : event_marks(store_.events(), *job)) {
            if (m.time_s < f.t0 || m.time_s > f.t1)
                continue;
            const double x = f.x_of(m.time_s);
            QPen pen(mark_colour(m.kind), 1.5, m.kind == EventMark::Kind::Operator ? Qt::DashDotLine : Qt::DashLine);
            p.setPen(pen);
            p.drawLine(QPointF(x, f.lanes.top()), QPointF(x, f.lanes.bottom()));
            const double width = p.fontMetrics().horizontalAdvance(m.label) + 4;
            if (x >= label_free_from) {
                // Right of the line, or left of it near the right edge.
                const double left = x + 3 + width <= f.lanes.right() ? x + 3 : x - 3 - width;
                const QRectF box(left, f.lanes.top() + 1, width, p.fontMetrics().height());
                p.fillRect(box, QColor(255, 255, 255, 200));
                p.drawText(box, Qt::AlignLeft | Qt::AlignTop, m.label);
                label_free_from = x + width + 10;
            }
            marks_.emplace_back(x, std::move(m));
        }
    }

    // The time axis: run seconds, and the iterations at both ends.
    p.setPen(palette().color(QPalette::Text));
    const double axis_y = f.lanes.bottom() + 2;
    p.drawLine(QPointF(f.lanes.left(), axis_y), QPointF(f.lanes.right(), axis_y));
    const double span = f.t1 - f.t0;
    const double raw = span / 8;
    const double magnitude = std::pow(10.0, std::floor(std::log10(std::max(raw, 1e-9))));
    const double step = raw / magnitude < 2 ? 2 * magnitude : raw / magnitude < 5 ? 5 * magnitude : 10 * magnitude;
    for (double t = std::ceil(f.t0 / step) * step; t <= f.t1; t += step) {
        const double x = f.x_of(t);
        p.drawLine(QPointF(x, axis_y), QPointF(x, axis_y + 4));
        p.drawText(QRectF(x - 40, axis_y + 4, 80, kAxisHeight - 4), Qt::AlignHCenter | Qt::AlignTop,
            QStringLiteral("%1 s").arg(t, 0, 'g', 6));
    }
    p.drawText(QRectF(0, axis_y + 2, kLabelWidth + kHeatWidth, kAxisHeight), Qt::AlignLeft | Qt::AlignTop,
        QStringLiteral("it %1").arg(f.first));
}

bool StragglerTimeline::event(QEvent* event)
{
    if (event->type() == QEvent::ShortcutOverride) {
        // Ctrl +/− zoom the lanes here, before the window's View ▸ Zoom shortcuts take them.
        const auto* key = static_cast<QKeyEvent*>(event);
        if ((key->modifiers() & Qt::ControlModifier)
            && (key->key() == Qt::Key_Plus || key->key() == Qt::Key_Equal || key->key() == Qt::Key_Minus)) {
            event->accept();
            return true;
        }
    }
    if (event->type() != QEvent::ToolTip)
        return QWidget::event(event);
    const auto* help = static_cast<QHelpEvent*>(event);
    for (const auto& [x, mark] : marks_)
        if (std::abs(help->pos().x() - x) <= 4) {
            QToolTip::showText(help->globalPos(), mark.tooltip, this);
            return true;
        }
    QToolTip::hideText();
    event->ignore();
    return true;
}

std::vector<double> StragglerTimeline::lateness() const
{
    return raster_.lateness();
}

QString StragglerTimeline::visible_csv() const
{
    const JobHistory& h = store_.history();
    QString csv = QStringLiteral("worker,iteration,start_s,compute_s,comm_s,wait_s,batch_size,straggler\n");
    const auto& its = h.iterations();
    for (int w = 0; w < h.workers(); ++w) {
        const auto& ring = h.worker(w);
        std::size_t s = h.position_of(window_.first());
        for (std::size_t i = h.position_of(w, window_.first()); i < ring.size() && ring[i].iteration <= window_.last();
             ++i) {
            while (s < its.size() && its[s].iteration < ring[i].iteration)
                ++s;
            const bool straggler = s < its.size() && its[s].iteration == ring[i].iteration && its[s].straggler == w;
            const WorkerSample& x = ring[i];
            csv += QStringLiteral("%1,%2,%3,%4,%5,%6,%7,%8\n")
                       .arg(w)
                       .arg(x.iteration)
                       .arg(x.start_s, 0, 'g', 12)
                       .arg(double(x.compute_s), 0, 'g', 7)
                       .arg(double(x.comm_s), 0, 'g', 7)
                       .arg(double(x.wait_s), 0, 'g', 7)
                       .arg(x.batch_size)
                       .arg(straggler ? 1 : 0);
        }
    }
    return csv;
}

std::optional<std::pair<WorkerId, std::int64_t>> StragglerTimeline::hit(QPoint point) const
{
    const Frame f = painted_frame();
    const JobHistory& h = *f.history;
    if (h.iterations().empty() || !f.lanes.contains(point))
        return std::nullopt;
    const auto worker = static_cast<WorkerId>(f.first_worker + (point.y() - f.lanes.top()) / f.lane_height);
    if (!f.shows(worker) || worker >= h.workers())
        return std::nullopt;
    const double t = f.t_of(point.x());
    const auto& its = h.iterations();
    // The iteration whose barrier falls first at or after t.
    const std::size_t i = its.partition_point([t](const IterationSummary& s) { return s.barrier_s < t; });
    if (i >= its.size())
        return std::nullopt;
    return std::pair { worker, its[i].iteration };
}

QString StragglerTimeline::describe(const JobHistory& history, WorkerId worker, std::int64_t iteration)
{
    if (worker < 0 || worker >= history.workers())
        return {};
    const auto& ring = history.worker(worker);
    const std::size_t i = history.position_of(worker, iteration);
    if (i >= ring.size() || ring[i].iteration != iteration)
        return QStringLiteral("iteration %1: worker %2 did not take part").arg(iteration).arg(worker);
    const WorkerSample& s = ring[i];
    const auto& its = history.iterations();
    const std::size_t k = history.position_of(iteration);
    const bool straggler = k < its.size() && its[k].iteration == iteration && its[k].straggler == worker;
    QString text = QStringLiteral(
        "iteration %1 of worker %2%3: batch %4, compute %5 s, communication %6 s, wait %7 s, speed %8 samples/s")
                       .arg(iteration)
                       .arg(worker)
                       .arg(straggler ? QStringLiteral(" (the straggler)") : QString())
                       .arg(s.batch_size)
                       .arg(double(s.compute_s), 0, 'f', 4)
                       .arg(double(s.comm_s), 0, 'f', 4)
                       .arg(double(s.wait_s), 0, 'f', 4)
                       .arg(double(s.speed), 0, 'f', 1);
    if (!std::isnan(s.predicted_speed))
        text += QStringLiteral(", predicted %1").arg(double(s.predicted_speed), 0, 'f', 1);
    if (k < its.size() && its[k].iteration == iteration)
        text += QStringLiteral("; spread %1 %").arg(its[k].spread * 100, 0, 'f', 1);
    return text;
}

void StragglerTimeline::wheelEvent(QWheelEvent* event)
{
    // Some systems turn Shift+wheel into horizontal scrolling: either direction counts.
    const int delta = event->angleDelta().y() != 0 ? event->angleDelta().y() : event->angleDelta().x();
    if (delta == 0) {
        event->ignore();
        return;
    }
    const bool up = delta > 0;
    event->accept();
    if (event->modifiers() & Qt::ControlModifier) {
        // About the lane under the cursor, wherever along the time axis it is.
        const Frame f = frame();
        const Lanes now = lanes();
        const auto lane = static_cast<int>(std::floor((event->position().y() - f.lanes.top()) / f.lane_height));
        zoom_lanes(up ? 0.8 : 1.25, now.first + std::clamp(lane, 0, std::max(now.count - 1, 0)));
        return;
    }
    if (event->modifiers() & Qt::ShiftModifier) {
        scroll_lanes((up ? -1 : 1) * std::max(1, lanes().count / 8));
        return;
    }
    const auto at = hit(event->position().toPoint());
    window_.zoom(up ? 0.8 : 1.25, at ? at->second : (window_.first() + window_.last()) / 2);
}

void StragglerTimeline::mousePressEvent(QMouseEvent* event)
{
    press_at_ = event->position().toPoint();
    dragged_ = false;
}

void StragglerTimeline::mouseMoveEvent(QMouseEvent* event)
{
    if (!(event->buttons() & Qt::LeftButton))
        return;
    const QPoint at = event->position().toPoint();
    const Frame f = frame();
    const double iterations_per_pixel = static_cast<double>(f.last - f.first + 1) / f.lanes.width();
    const auto delta = static_cast<std::int64_t>(std::llround((press_at_.x() - at.x()) * iterations_per_pixel));
    if (delta != 0) {
        window_.pan(delta);
        press_at_ = at;
        dragged_ = true;
    }
}

void StragglerTimeline::mouseReleaseEvent(QMouseEvent* event)
{
    if (dragged_)
        return;
    if (const auto at = hit(event->position().toPoint()))
        emit iterationClicked(at->first, at->second);
}

void StragglerTimeline::mouseDoubleClickEvent(QMouseEvent*)
{
    window_.follow();
}

void StragglerTimeline::keyPressEvent(QKeyEvent* event)
{
    const std::int64_t span = std::max<std::int64_t>(window_.last() - window_.first(), 4);
    const std::int64_t middle = (window_.first() + window_.last()) / 2;
    const Lanes shown = lanes();
    const bool workers = event->modifiers() & Qt::ControlModifier;
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        if (workers)
            zoom_lanes(0.8, chosen_.value_or(shown.first + shown.count / 2));
        else
            window_.zoom(0.8, middle);
        break;
    case Qt::Key_Minus:
        if (workers)
            zoom_lanes(1.25, chosen_.value_or(shown.first + shown.count / 2));
        else
            window_.zoom(1.25, middle);
        break;
    case Qt::Key_PageUp:
        scroll_lanes(-shown.count);
        break;
    case Qt::Key_PageDown:
        scroll_lanes(shown.count);
        break;
    case Qt::Key_Home:
        show_every_lane();
        break;
    case Qt::Key_Left:
        window_.pan(-span / 4);
        break;
    case Qt::Key_Right:
        window_.pan(span / 4);
        break;
    case Qt::Key_End:
        window_.follow();
        break;
    default:
        QWidget::keyPressEvent(event);
    }
}

} // namespace fulcrum::ui
