#include "ui/views/event_marks.h"

#include "ui/models/events_model.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace fulcrum::ui {

namespace {

// Changes a person (or the scenario on their behalf) makes to a running job.
constexpr std::array<std::string_view, 14> kOperatorKinds { "pin", "unpin", "exclude", "include", "straggler-injected",
    "straggler-cleared", "job-paused", "job-resumed", "policy-change", "sync-model-change", "add-worker",
    "remove-worker", "add-server", "remove-server" };

QString label_of(const EventRecord& e)
{
    const QString message = QString::fromStdString(e.message);
    if (e.kind == "policy-change" || e.kind == "sync-model-change") // "uniform -> lbbsp-cpu"
        return QStringLiteral("%1: %2").arg(
            e.kind == "policy-change" ? QStringLiteral("policy") : QStringLiteral("sync"),
            message.section(QStringLiteral(" -> "), -1).trimmed());
    QString label = QString::fromStdString(e.kind).section(QLatin1Char('-'), 0, 0); // "straggler", "job", "add"
    if (e.kind == "job-paused" || e.kind == "job-resumed")
        label = QString::fromStdString(e.kind).section(QLatin1Char('-'), 1);
    else if (e.kind.starts_with("add-") || e.kind.starts_with("remove-"))
        label = QString::fromStdString(e.kind);
    if (e.worker)
        label += QStringLiteral(" w%1").arg(*e.worker);
    return label;
}

} // namespace

std::vector<EventMark> event_marks(const EventsModel& events, JobId job)
{
    std::vector<EventMark> marks;
    for (int row = 0; row < events.rowCount(); ++row) {
        const EventRecord& e = events.at(row);
        if (e.job != job)
            continue;
        EventMark m;
        m.iteration = e.iteration;
        m.time_s = e.time_s;
        m.tooltip = QStringLiteral("%1 at iteration %2: %3\n%4")
                        .arg(QString::fromStdString(e.kind))
                        .arg(e.iteration)
                        .arg(QString::fromStdString(e.message), QString::fromStdString(e.actor));
        if (e.kind == "phase-change") {
            m.kind = EventMark::Kind::Phase;
            m.label = QString::fromStdString(e.message).section(QLatin1Char(':'), 0, 0);
        } else if (std::find(kOperatorKinds.begin(), kOperatorKinds.end(), e.kind) != kOperatorKinds.end()) {
            m.kind = EventMark::Kind::Operator;
            m.label = label_of(e);
        } else {
            continue;
        }
        marks.push_back(std::move(m));
    }
    return marks;
}

QColor mark_colour(EventMark::Kind kind)
{
    switch (kind) {
    case EventMark::Kind::Equilibrium:
        return QColor(0x2c, 0xa0, 0x2c);
    case EventMark::Kind::Operator:
        return QColor(0x6a, 0x3d, 0x9a);
    case EventMark::Kind::Phase:
        break;
    }
    return QColor(0x70, 0x70, 0x70);
}

} // namespace fulcrum::ui
