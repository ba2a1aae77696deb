#include "ui/views/event_marks.h"

#include "common/job_event.h"
#include "ui/models/events_model.h"

#include <algorithm>

namespace fulcrum::ui {

namespace {

// Short, for the axis: "pin w2", "policy: lbbsp-cpu", "paused", "add-worker w5".
QString label_of(const JobEvent& e)
{
    QString label;
    switch (e.kind) {
    case EventKind::PolicyChange:
    case EventKind::SyncModelChange: {
        const auto* change = std::get_if<NameChange>(&e.detail);
        return QStringLiteral("%1: %2").arg(
            e.kind == EventKind::PolicyChange ? QStringLiteral("policy") : QStringLiteral("sync"),
            change ? QString::fromStdString(change->to).trimmed() : QString());
    }
    case EventKind::JobPaused:
        label = QStringLiteral("paused");
        break;
    case EventKind::JobResumed:
        label = QStringLiteral("resumed");
        break;
    case EventKind::StragglerInjected:
    case EventKind::StragglerCleared:
        label = QStringLiteral("straggler");
        break;
    case EventKind::WorkerStalled:
        label = QStringLiteral("stalled");
        break;
    case EventKind::WorkerRecovered:
        label = QStringLiteral("recovered");
        break;
    case EventKind::WorkerLost:
        label = QStringLiteral("lost");
        break;
    case EventKind::JobRestarted:
        label = QStringLiteral("restarted");
        break;
    default:
        label = QString::fromUtf8(to_string(e.kind));
        break;
    }
    if (e.worker)
        label += QStringLiteral(" w%1").arg(*e.worker);
    return label;
}

} // namespace

std::vector<EventMark> event_marks(const EventsModel& events, JobId job)
{
    std::vector<EventMark> marks;
    for (int row = 0; row < events.rowCount(); ++row) {
        const EventRecord& recorded = events.at(row);
        if (recorded.job != job)
            continue;
        const JobEvent e = typed(recorded);
        EventMark m;
        m.iteration = e.iteration;
        m.time_s = e.time_s;
        m.tooltip = QStringLiteral("%1 at iteration %2: %3\n%4")
                        .arg(QString::fromStdString(recorded.kind))
                        .arg(e.iteration)
                        .arg(QString::fromStdString(e.message), QString::fromStdString(recorded.actor));
        if (e.kind == EventKind::PhaseChange) {
            m.kind = EventMark::Kind::Phase;
            m.label = QString::fromStdString(e.message).section(QLatin1Char(':'), 0, 0);
        } else if (is_operator_change(e.kind) || e.kind == EventKind::Readmit || e.kind == EventKind::JobRestarted) {
            m.kind = EventMark::Kind::Operator;
            m.label = label_of(e);
        } else if (e.kind == EventKind::WorkerStalled || e.kind == EventKind::WorkerRecovered
            || e.kind == EventKind::WorkerLost) {
            m.kind = EventMark::Kind::Trouble;
            m.label = label_of(e);
        } else {
            continue;
        }
        marks.push_back(std::move(m));
    }
    return marks;
}

std::vector<EventMark> merge_marks(const std::vector<EventMark>& marks)
{
    std::vector<EventMark> merged;
    for (const EventMark& m : marks) {
        const auto same = std::find_if(merged.begin(), merged.end(),
            [&](const EventMark& k) { return k.kind == m.kind && k.iteration == m.iteration; });
        if (same == merged.end()) {
            merged.push_back(m);
            continue;
        }
        if (!same->label.split(QStringLiteral(", ")).contains(m.label))
            same->label += QStringLiteral(", ") + m.label;
        same->tooltip += QStringLiteral("\n\n") + m.tooltip;
    }
    return merged;
}

QColor mark_colour(EventMark::Kind kind)
{
    switch (kind) {
    case EventMark::Kind::Equilibrium:
        return QColor(0x2c, 0xa0, 0x2c);
    case EventMark::Kind::Operator:
        return QColor(0x6a, 0x3d, 0x9a);
    case EventMark::Kind::Trouble:
        return QColor(0xd6, 0x27, 0x28);
    case EventMark::Kind::Phase:
        break;
    }
    return QColor(0x70, 0x70, 0x70);
}

} // namespace fulcrum::ui
