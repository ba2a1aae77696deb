#include "ui/views/scheduler_view.h"

#include "ui/console_store.h"
#include "ui/views/chart_axes.h"
#include "ui/views/palette.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QGridLayout>
#include <QLabel>
#include <QLineSeries>
#include <QListWidget>
#include <QPainter>
#include <QValueAxis>
#include <algorithm>
#include <map>
#include <set>

namespace fulcrum::ui {

// One row per GPU, time along x, a bar per job for as long as it held the GPU.
class PlacementTimeline : public QWidget {
public:
    explicit PlacementTimeline(const ConsoleStore& store, QWidget* parent)
        : QWidget(parent)
        , store_(store)
    {
        setMinimumHeight(120);
    }

protected:
    void paintEvent(QPaintEvent*) override
    {
        QPainter p(this);
        p.fillRect(rect(), palette().base());
        const auto& snaps = store_.cluster_timeline();
        p.setPen(palette().color(QPalette::Text));
        if (snaps.empty()) {
            p.drawText(rect(), Qt::AlignCenter,
                store_.replaying()
                    ? QStringLiteral("No cluster recorded yet in this run (fulcrumd records it for its jobs).")
                    : QStringLiteral("Placements appear here as fulcrumd places jobs."));
            return;
        }
        const int gpus = static_cast<int>(snaps.back().cluster.gpus.size());
        // The last state holds until now (the replay's position, or the live clock).
        const double t0 = snaps.front().seconds;
        const double t1 = std::max({ snaps.back().seconds + 1, store_.cluster_now(), t0 + 10 });
        const QRectF area(40, 4, width() - 44, height() - 22);
        const double row = area.height() / std::max(gpus, 1);
        const auto x_of = [&](double t) { return area.left() + (t - t0) / (t1 - t0) * area.width(); };
        for (std::size_t i = 0; i < snaps.size(); ++i) {
            const double from = x_of(snaps[i].seconds), to = x_of(i + 1 < snaps.size() ? snaps[i + 1].seconds : t1);
            for (const protocol::GpuUsage& g : snaps[i].cluster.gpus)
                if (!g.jobs.empty() && g.gpu < gpus)
                    p.fillRect(QRectF(from, area.top() + g.gpu * row, std::max(1.0, to - from),
                                   std::max(1.0, row - (row > 4 ? 1 : 0))),
                        series_colour(g.jobs.front()));
        }
        if (row >= 10)
            for (int g = 0; g < gpus; ++g)
                p.drawText(QRectF(0, area.top() + g * row, 36, row), Qt::AlignRight | Qt::AlignVCenter,
                    QStringLiteral("g%1").arg(g));
        p.drawText(QRectF(area.left(), area.bottom() + 2, area.width(), 16), Qt::AlignLeft,
            store_.replaying() ? QStringLiteral("placements per GPU, %1 to %2 s of the run's clock")
                                     .arg(t0, 0, 'f', 0)
                                     .arg(t1, 0, 'f', 0)
                               : QStringLiteral("placements per GPU over the last %1 s").arg(t1 - t0, 0, 'f', 0));
    }

private:
    const ConsoleStore& store_;
};

SchedulerView::SchedulerView(ConsoleStore& store, QWidget* parent)
    : QWidget(parent)
    , store_(store)
    , queue_(new QListWidget(this))
    , placements_(new PlacementTimeline(store, this))
    , utilization_chart_(new QChart)
    , utilization_(new QLineSeries(this))
    , links_(new QLineSeries(this))
    , time_axis_(new QValueAxis(this))
    , jct_chart_(new QChart)
    , jct_(new QBarSeries(this))
    , jct_axis_(new QBarCategoryAxis(this))
    , jct_count_axis_(new QValueAxis(this))
    , summary_(new QLabel(this))
{
    utilization_chart_->addSeries(utilization_);
    time_axis_->setTitleText(QStringLiteral("seconds watched"));
    auto* percent = new QValueAxis(this);
    percent->setRange(0, 100);
    percent->setLabelFormat(QStringLiteral("%.0f%%"));
    utilization_chart_->addAxis(time_axis_, Qt::AlignBottom);
    utilization_chart_->addAxis(percent, Qt::AlignLeft);
    utilization_->attachAxis(time_axis_);
    utilization_->attachAxis(percent);
    // Link contention beside it: eq. 5 stretches each of k jobs' transfers on a link.
    utilization_->setName(QStringLiteral("GPUs busy"));
    links_->setName(QStringLiteral("most jobs on one link"));
    utilization_chart_->setTitle(QStringLiteral("GPU utilization and link contention"));
    utilization_chart_->addSeries(links_);
    auto* jobs_on_link = new QValueAxis(this);
    jobs_on_link->setLabelFormat(QStringLiteral("%d"));
    jobs_on_link->setRange(0, 4);
    jobs_on_link->setTickCount(3);
    utilization_chart_->addAxis(jobs_on_link, Qt::AlignRight);
    links_->attachAxis(time_axis_);
    links_->attachAxis(jobs_on_link);
    utilization_chart_->legend()->show();
    utilization_chart_->legend()->setAlignment(Qt::AlignBottom);
    links_axis_ = jobs_on_link;
    jct_chart_->setTitle(QStringLiteral("Job completion times"));
    jct_chart_->legend()->hide();
    jct_chart_->addSeries(jct_);
    jct_chart_->addAxis(jct_axis_, Qt::AlignBottom);
    jct_chart_->addAxis(jct_count_axis_, Qt::AlignLeft);
    jct_count_axis_->setLabelFormat(QStringLiteral("%d"));
    jct_->attachAxis(jct_axis_);
    jct_->attachAxis(jct_count_axis_);

    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->addWidget(summary_, 0, 0, 1, 3);
    grid->addWidget(new QLabel(QStringLiteral("Queue (submission order):"), this), 1, 0);
    grid->addWidget(queue_, 2, 0);
    grid->addWidget(placements_, 1, 1, 2, 2);
    // Qt Charts elides every axis label of a chart too short to lay them out: the charts
    // keep room for their title, labels and axis title before the timeline grows.
    for (QChart* chart : { utilization_chart_, jct_chart_ }) {
        chart->setMargins(QMargins(4, 4, 4, 4));
        auto* chart_view = new QChartView(chart, this);
        chart_view->setMinimumHeight(190);
        grid->addWidget(chart_view, 3, chart == jct_chart_ ? 2 : 0, 1, chart == jct_chart_ ? 1 : 2);
    }
    percent->setTickCount(3);
    jct_count_axis_->setTickCount(3);
    grid->setColumnStretch(1, 2);
    grid->setColumnStretch(2, 1);
    grid->setRowStretch(2, 1);
    grid->setRowStretch(3, 1);
    connect(&store_, &ConsoleStore::clusterChanged, this, &SchedulerView::on_cluster);
}

void SchedulerView::on_cluster()
{
    refresh();
}

int SchedulerView::busiest_link(const protocol::ClusterState& cluster)
{
    std::map<std::int32_t, std::set<JobId>> on_server;
    for (const protocol::GpuUsage& g : cluster.gpus)
        on_server[g.server].insert(g.jobs.begin(), g.jobs.end());
    std::size_t most = 0;
    for (const auto& [server, jobs] : on_server)
        most = std::max(most, jobs.size());
    return static_cast<int>(most);
}

QList<QPointF> SchedulerView::link_load() const
{
    return links_->points();
}

std::vector<int> SchedulerView::jct_histogram(double* bin_width_s) const
{
    std::vector<double> times;
    const JobsModel& jobs = store_.jobs();
    for (int row = 0; row < jobs.rowCount(); ++row) {
        const JobId id = static_cast<JobId>(jobs.index(row, JobsModel::Job).data().toInt());
        const protocol::JobStatus* j = jobs.job(id);
        if (j && j->state == protocol::JobState::Finished)
            times.push_back(j->elapsed_s);
    }
    std::vector<int> bins(8, 0);
    const double top = times.empty() ? 1 : *std::max_element(times.begin(), times.end());
    const double width = std::max(top / 8, 1e-9);
    for (double t : times)
        ++bins[std::min<std::size_t>(7, static_cast<std::size_t>(t / width))];
    if (bin_width_s)
        *bin_width_s = width;
    return bins;
}

void SchedulerView::draw_over_time()
{
    // Redrawn from the store's timeline, which a replay's seek cuts back: step lines, each
    // level holding until the next placement or release, and the last one until now.
    QList<QPointF> utilization, links;
    int most = 4;
    const auto& moments = store_.cluster_timeline();
    for (const ConsoleStore::ClusterMoment& m : moments) {
        int busy = 0;
        for (const protocol::GpuUsage& g : m.cluster.gpus)
            busy += g.jobs.empty() ? 0 : 1;
        if (!utilization.isEmpty()) {
            utilization.append({ m.seconds, utilization.back().y() });
            links.append({ m.seconds, links.back().y() });
        }
        utilization.append(
            { m.seconds, m.cluster.gpus.empty() ? 0 : 100.0 * busy / static_cast<double>(m.cluster.gpus.size()) });
        const int busiest = busiest_link(m.cluster);
        links.append({ m.seconds, static_cast<double>(busiest) });
        most = std::max(most, busiest);
    }
    const double now = moments.empty() ? 0 : std::max(store_.cluster_now(), moments.back().seconds);
    if (!moments.empty() && now > moments.back().seconds) {
        utilization.append({ now, utilization.back().y() });
        links.append({ now, links.back().y() });
    }
    utilization_->replace(utilization);
    links_->replace(links);
    links_axis_->setRange(0, most);
    time_axis_->setTitleText(store_.replaying() ? QStringLiteral("run clock (s)") : QStringLiteral("seconds watched"));
    if (!moments.empty())
        set_time_axis(*time_axis_, moments.front().seconds, std::max(now, moments.front().seconds + 10));
}

void SchedulerView::refresh()
{
    const protocol::ClusterState* c = store_.cluster();
    queue_->clear();
    if (c)
        for (const JobId job : c->queue) {
            const protocol::JobStatus* j = store_.jobs().job(job);
            queue_->addItem(j ? QStringLiteral("job %1 %2: %3")
                                    .arg(job)
                                    .arg(QString::fromStdString(j->name), QString::fromStdString(j->message))
                              : QStringLiteral("job %1").arg(job));
        }
    draw_over_time();

    double width = 0;
    const std::vector<int> bins = jct_histogram(&width);
    jct_->clear();
    auto* set = new QBarSet(QStringLiteral("jobs"));
    QStringList labels;
    int most = 1;
    for (std::size_t b = 0; b < bins.size(); ++b) {
        *set << bins[b];
        most = std::max(most, bins[b]);
        labels << QStringLiteral("≤%1 s").arg(width * static_cast<double>(b + 1), 0, 'f', 0);
    }
    jct_->append(set);
    jct_axis_->clear();
    jct_axis_->append(labels);
    // Three integer ticks: the top rounded up to an even count.
    const int top = std::max(most, 1) + std::max(most, 1) % 2;
    jct_count_axis_->setRange(0, top);
    int finished = 0;
    for (int b : bins)
        finished += b;
    summary_->setText(c
            ? QStringLiteral("%1 queued · %2 finished jobs in the JCT histogram · placement %3 · elastic %4 · comm %5")
                  .arg(c->queue.size())
                  .arg(finished)
                  .arg(QString::fromStdString(c->placement))
                  .arg(QString::fromStdString(c->elastic))
                  .arg(QString::fromStdString(c->comm))
            : store_.replaying()
            ? QStringLiteral("This run has no recorded cluster (yet): fulcrumd records one for its jobs.")
            : QStringLiteral("No cluster state yet: connect to fulcrumd."));
    placements_->update();
}

} // namespace fulcrum::ui
