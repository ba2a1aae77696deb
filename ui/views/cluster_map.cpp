#include "ui/views/cluster_map.h"

#include "ui/client/commands.h"
#include "ui/console_store.h"
#include "ui/models/workers_model.h"
#include "ui/views/palette.h"

#include <QAction>
#include <QHelpEvent>
#include <QInputDialog>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <cmath>
#include <set>

namespace fulcrum::ui {

namespace {
constexpr int kHeader = 24;
}

namespace {

// A numbered family ("lwf-K", "srsf-N": a name ending in a dash and one capital letter) stands
// for PREFIX + any whole number >= 1 (docs/protocol.md); it is offered with 1, and the list is
// editable for another number.
bool numbered(const QString& name)
{
    return name.size() >= 2 && name.at(name.size() - 2) == QLatin1Char('-') && name.back().isUpper();
}

QStringList names_of(const std::vector<protocol::Capability>& offered)
{
    QStringList names;
    for (const protocol::Capability& c : offered) {
        QString name = QString::fromStdString(c.name);
        if (numbered(name))
            name = name.left(name.size() - 1) + QLatin1Char('1');
        names << name;
    }
    return names;
}

// "name: what it does" for each, one per line: the action's tooltip.
QString described(const QString& what, const std::vector<protocol::Capability>& offered)
{
    QStringList lines { what };
    for (const protocol::Capability& c : offered)
        lines << QStringLiteral("%1: %2").arg(QString::fromStdString(c.name), QString::fromStdString(c.description));
    return lines.join(QLatin1Char('\n'));
}

} // namespace

ClusterMap::ClusterMap(ConsoleStore& store, Commands& commands, QWidget* parent)
    : QWidget(parent)
    , store_(store)
    , commands_(commands)
    , placement_(new QAction(QStringLiteral("Placement policy…"), this))
    , elastic_(new QAction(QStringLiteral("Elastic scheduling…"), this))
    , comm_(new QAction(QStringLiteral("Communication scheduling…"), this))
{
    connect(placement_, &QAction::triggered, this, &ClusterMap::choose_placement);
    connect(elastic_, &QAction::triggered, this, &ClusterMap::choose_elastic);
    connect(comm_, &QAction::triggered, this, &ClusterMap::choose_comm);
    addActions({ placement_, elastic_, comm_ });
    setContextMenuPolicy(Qt::ActionsContextMenu);
    connect(&store_, &ConsoleStore::clusterChanged, this, qOverload<>(&QWidget::update));
    connect(&store_, &ConsoleStore::clusterChanged, this, &ClusterMap::update_actions);
    connect(&store_, &ConsoleStore::capabilitiesChanged, this, &ClusterMap::update_actions);
    update_actions();
}

void ClusterMap::update_actions()
{
    // The choices are the server's (list-capabilities): none to offer until it has answered.
    const protocol::Capabilities* offered = store_.capabilities();
    const bool live = store_.cluster() && offered && !store_.replaying();
    placement_->setEnabled(live);
    elastic_->setEnabled(live);
    comm_->setEnabled(live);
    if (!offered)
        return;
    placement_->setToolTip(
        described(QStringLiteral("How fulcrumd places the jobs it starts from now on (Wang et al. Sec. IV):"),
            offered->placements));
    elastic_->setToolTip(
        described(QStringLiteral("How fulcrumd resizes running elastic jobs:"), offered->elastic_policies));
    comm_->setToolTip(
        described(QStringLiteral("How live jobs' transfers start on the servers' links:"), offered->comm_policies));
}

std::optional<std::string> ClusterMap::ask_policy(const QString& title, const QString& label,
    const std::vector<protocol::Capability>& offered, const std::string& current)
{
    QStringList names = names_of(offered);
    if (!names.contains(QString::fromStdString(current)))
        names.prepend(QString::fromStdString(current));
    const bool editable = std::any_of(offered.begin(), offered.end(),
        [](const protocol::Capability& c) { return numbered(QString::fromStdString(c.name)); });
    bool ok = false;
    const QString chosen = QInputDialog::getItem(
        this, title, label, names, static_cast<int>(names.indexOf(QString::fromStdString(current))), editable, &ok);
    if (!ok || chosen.isEmpty() || chosen.toStdString() == current)
        return std::nullopt;
    return chosen.toStdString();
}

void ClusterMap::choose_placement()
{
    const protocol::ClusterState* c = store_.cluster();
    const protocol::Capabilities* offered = store_.capabilities();
    if (!c || !offered)
        return;
    if (auto chosen = ask_policy(QStringLiteral("Placement policy"),
            QStringLiteral("Place the jobs started from now on with:"), offered->placements, c->placement))
        commands_.set_cluster_policy(std::move(chosen), std::nullopt);
}

void ClusterMap::choose_elastic()
{
    const protocol::ClusterState* c = store_.cluster();
    const protocol::Capabilities* offered = store_.capabilities();
    if (!c || !offered)
        return;
    if (auto chosen = ask_policy(QStringLiteral("Elastic scheduling"),
            QStringLiteral("Resize running elastic jobs with:"), offered->elastic_policies, c->elastic))
        commands_.set_cluster_policy(std::nullopt, std::move(chosen));
}

void ClusterMap::choose_comm()
{
    const protocol::ClusterState* c = store_.cluster();
    const protocol::Capabilities* offered = store_.capabilities();
    if (!c || !offered)
        return;
    if (auto chosen = ask_policy(QStringLiteral("Communication scheduling"),
            QStringLiteral("Start live jobs' transfers on the servers' links with:"), offered->comm_policies, c->comm))
        commands_.set_cluster_policy(std::nullopt, std::nullopt, std::move(chosen));
}

QRectF ClusterMap::cell(int gpu) const
{
    const protocol::ClusterState* c = store_.cluster();
    if (!c || c->servers <= 0 || c->gpus_per_server <= 0)
        return {};
    const int columns = std::max(1, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(c->servers) * 2))));
    const int rows = (c->servers + columns - 1) / columns;
    const double server_w = static_cast<double>(width() - 8) / columns;
    const double server_h = std::min(90.0, static_cast<double>(height() - kHeader - 8) / rows);
    const int server = gpu / c->gpus_per_server, slot = gpu % c->gpus_per_server;
    const int column = server % columns, row = server / columns;
    const QRectF box(4 + column * server_w, kHeader + 4 + row * server_h, server_w - 6, server_h - 6);
    const double gpu_w = (box.width() - 6) / c->gpus_per_server;
    return QRectF(box.left() + 3 + slot * gpu_w, box.top() + 16, gpu_w - 3, box.height() - 20);
}

QString ClusterMap::header_text() const
{
    const protocol::ClusterState* c = store_.cluster();
    if (!c)
        return store_.replaying() ? QStringLiteral("A replay has no live cluster: follow the live stream to see it.")
                                  : QStringLiteral("No cluster state yet: connect to fulcrumd.");
    int busy = 0;
    for (const protocol::GpuUsage& g : c->gpus)
        busy += g.jobs.empty() ? 0 : 1;
    const int total = static_cast<int>(c->gpus.size());
    // fulcrum-worker --pool processes: the remote workers the elastic scheduler hands out.
    const auto idle = std::count_if(c->pool.begin(), c->pool.end(), [](const auto& w) { return w.job < 0; });
    const QString pool
        = c->pool.empty() ? QString() : QStringLiteral(" · pool: %1 of %2 workers idle").arg(idle).arg(c->pool.size());
    QString tenants;
    for (const protocol::TenantUsage& t : c->tenants)
        tenants += QStringLiteral(" · %1: %2 of %3%4")
                       .arg(QString::fromStdString(t.tenant))
                       .arg(t.held_gpus)
                       .arg(t.quota_gpus)
                       .arg(t.borrowed_gpus > 0 ? QStringLiteral(" (%1 borrowed)").arg(t.borrowed_gpus) : QString());
    return QStringLiteral("%1 × %2 GPUs of %3 GB · placement %4 · elastic %5 · comm %6 · %7 of %8 GPUs busy (%9 %) · "
                          "%10 queued%11")
               .arg(c->servers == 1 ? QStringLiteral("1 server") : QStringLiteral("%1 servers").arg(c->servers))
               .arg(c->gpus_per_server)
               .arg(c->gpu_memory_gb)
               .arg(QString::fromStdString(c->placement))
               .arg(QString::fromStdString(c->elastic))
               .arg(QString::fromStdString(c->comm))
               .arg(busy)
               .arg(total)
               .arg(total ? 100.0 * busy / total : 0.0, 0, 'f', 0)
               .arg(c->queue.size())
               .arg(pool)
        + tenants;
}

std::vector<std::string> ClusterMap::tenants_shown() const
{
    std::set<std::string> names;
    if (const protocol::ClusterState* c = store_.cluster()) {
        for (const protocol::TenantUsage& t : c->tenants)
            names.insert(t.tenant);
        for (const protocol::GpuUsage& g : c->gpus)
            names.insert(g.tenants.begin(), g.tenants.end());
    }
    return { names.begin(), names.end() };
}

bool ClusterMap::by_tenant() const
{
    const protocol::ClusterState* c = store_.cluster();
    return c && (!c->tenants.empty() || tenants_shown().size() >= 2);
}

QColor ClusterMap::tenant_colour(const std::string& tenant) const
{
    const std::vector<std::string> names = tenants_shown();
    const auto at = std::find(names.begin(), names.end(), tenant);
    return series_colour(static_cast<int>(at - names.begin()));
}

void ClusterMap::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    p.setPen(palette().color(QPalette::Text));
    p.drawText(QRectF(6, 2, width() - 12, kHeader - 4), Qt::AlignLeft | Qt::AlignVCenter, header_text());
    const protocol::ClusterState* c = store_.cluster();
    if (!c)
        return;
    p.setRenderHint(QPainter::Antialiasing);
    for (int server = 0; server < c->servers; ++server) {
        const QRectF first = cell(server * c->gpus_per_server),
                     last = cell(server * c->gpus_per_server + c->gpus_per_server - 1);
        const QRectF box(first.left() - 3, first.top() - 16, last.right() - first.left() + 6, first.height() + 20);
        p.setPen(palette().color(QPalette::Mid));
        p.setBrush(palette().window());
        p.drawRoundedRect(box, 4, 4);
        p.setPen(palette().color(QPalette::Text));
        // Elided where a server of few GPUs is narrower than its label ("server 10 · link: 1…").
        p.drawText(QRectF(box.left() + 4, box.top(), box.width() - 8, 15), Qt::AlignLeft | Qt::AlignVCenter,
            p.fontMetrics().elidedText(server_text(server), Qt::ElideRight, static_cast<int>(box.width() - 8)));
    }
    for (const protocol::GpuUsage& g : c->gpus) {
        const QRectF r = cell(g.gpu);
        p.setPen(Qt::NoPen);
        if (g.jobs.empty()) {
            p.setBrush(palette().color(QPalette::Button));
            p.drawRoundedRect(r, 2, 2);
        } else { // time-shared: a band per job
            const double band = r.height() / static_cast<double>(g.jobs.size());
            for (std::size_t j = 0; j < g.jobs.size(); ++j) {
                p.setBrush(
                    by_tenant() && j < g.tenants.size() ? tenant_colour(g.tenants[j]) : series_colour(g.jobs[j]));
                p.drawRect(QRectF(r.left(), r.top() + band * static_cast<double>(j), r.width(), band));
            }
        }
        // Memory in use, as a dark bar along the bottom.
        const double used = c->gpu_memory_gb > 0 ? std::clamp(1 - g.free_memory_gb / c->gpu_memory_gb, 0.0, 1.0) : 0;
        p.setBrush(QColor(0, 0, 0, 90));
        p.drawRect(QRectF(r.left(), r.bottom() - 4, r.width() * used, 4));
        if (!g.jobs.empty() && r.width() > 18) {
            QStringList names;
            for (const JobId job : g.jobs)
                names << QStringLiteral("j%1").arg(job);
            p.setPen(Qt::black);
            p.drawText(r.adjusted(0, 0, 0, -4), Qt::AlignCenter, names.join(QStringLiteral("·")));
        }
    }
}

QString ClusterMap::server_text(int server) const
{
    const protocol::ClusterState* c = store_.cluster();
    if (!c)
        return {};
    std::set<JobId> on_link; // fulcrumd's parameter servers: every worker's pushes and pulls cross its server's link
    for (const protocol::GpuUsage& g : c->gpus)
        if (g.server == server)
            on_link.insert(g.jobs.begin(), g.jobs.end());
    if (on_link.empty())
        return QStringLiteral("server %1").arg(server);
    return QStringLiteral("server %1 · link: %2 %3")
        .arg(server)
        .arg(on_link.size())
        .arg(on_link.size() == 1 ? QStringLiteral("job") : QStringLiteral("jobs"));
}

std::optional<int> ClusterMap::gpu_at(QPoint point) const
{
    const protocol::ClusterState* c = store_.cluster();
    if (!c)
        return std::nullopt;
    for (const protocol::GpuUsage& g : c->gpus)
        if (cell(g.gpu).contains(point))
            return g.gpu;
    return std::nullopt;
}

QString ClusterMap::gpu_text(int gpu) const
{
    const protocol::ClusterState* c = store_.cluster();
    if (!c)
        return {};
    const auto it
        = std::find_if(c->gpus.begin(), c->gpus.end(), [gpu](const protocol::GpuUsage& g) { return g.gpu == gpu; });
    if (it == c->gpus.end())
        return {};
    QString text = QStringLiteral("GPU %1 on server %2: %3 GB free, %4 s of work left")
                       .arg(gpu)
                       .arg(it->server)
                       .arg(it->free_memory_gb, 0, 'f', 1)
                       .arg(it->workload_s, 0, 'f', 0);
    if (it->jobs.empty())
        return text + QStringLiteral("\nidle");
    if (it->jobs.size() > 1)
        text += QStringLiteral("\ntime-shared by %1 jobs: each one's batches take %1x longer").arg(it->jobs.size());
    for (std::size_t j = 0; j < it->jobs.size(); ++j) {
        const JobId job = it->jobs[j];
        const protocol::JobStatus* status = store_.jobs().job(job);
        text += QStringLiteral("\njob %1").arg(job);
        if (j < it->tenants.size() && by_tenant())
            text += QStringLiteral(" of tenant %1").arg(QString::fromStdString(it->tenants[j]));
        if (!status)
            continue;
        text += QStringLiteral(" %1 (%2)")
                    .arg(QString::fromStdString(status->name),
                        QString::fromStdString(std::string(protocol::to_string(status->state))));
        if (status->link)
            text += QStringLiteral("; link: %1 of %2 transfers held, %3 s waiting")
                        .arg(status->link->held)
                        .arg(status->link->transfers)
                        .arg(status->link->wait_s, 0, 'f', 1);
        for (std::size_t w = 0; w < status->placement.size(); ++w) {
            if (status->placement[w] != gpu)
                continue;
            const protocol::WorkerState* state = store_.worker_state(job, static_cast<WorkerId>(w));
            text += QStringLiteral("\n  worker %1").arg(w);
            if (state) {
                text += QStringLiteral(": batch %1").arg(state->batch_size);
                const QString s = WorkersModel::state_text(*state);
                if (!s.isEmpty())
                    text += QStringLiteral(", ") + s;
            }
        }
    }
    return text;
}

bool ClusterMap::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        const auto* help = static_cast<QHelpEvent*>(event);
        if (const auto gpu = gpu_at(help->pos()))
            QToolTip::showText(help->globalPos(), gpu_text(*gpu), this);
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

} // namespace fulcrum::ui
