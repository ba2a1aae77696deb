#include "daemon/event_log.h"

#include "log/log.h"
#include "serve/stream_hub.h"

namespace fulcrum::daemon {

using serve::StreamHub;

namespace {

log::Level level_of(EventKind kind)
{
    switch (kind) {
    case EventKind::JobLost:
    case EventKind::WorkerLost:
    case EventKind::WorkerStalled:
    case EventKind::Warning:
    case EventKind::CommandRefused:
    case EventKind::ResizeRefused:
    case EventKind::ScheduledChangeRefused:
    case EventKind::CheckpointsOff:
        return log::Level::Warning;
    case EventKind::GpuShared:
    case EventKind::GpuExclusive:
    case EventKind::LinkContended:
    case EventKind::LinkFree:
    case EventKind::PhaseChange:
        return log::Level::Debug;
    default:
        return log::Level::Info;
    }
}

} // namespace

void publish_event(StreamHub& hub, const JobEvent& event)
{
    const EventRecord text = record(event);
    hub.publish(protocol::Event { text });
    const log::Level level = level_of(event.kind);
    if (!log::enabled(level))
        return;
    // The job's tenant, named unless it is the default one (the lines of an installation
    // without tenants are as before).
    const std::string tenant = hub.tenant_of(event.job);
    log::write(level, "job event",
        { { "job", static_cast<std::int64_t>(event.job) },
            { "tenant", tenant == protocol::kDefaultTenant ? std::string() : tenant }, { "kind", text.kind },
            { "iteration", event.iteration }, { "worker", event.worker }, { "actor", text.actor },
            { "text", text.message } });
}

} // namespace fulcrum::daemon
