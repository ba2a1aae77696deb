#include "daemon/elastic_job.h"

#include "common/error.h"

namespace fulcrum::daemon {

train::ResizeRequest ElasticJob::resolve(
    const protocol::ResizeJob& r, const EventActor& actor, const std::string& reason) const
{
    if (!scenario().elastic.present)
        throw RefusedRequest("not-elastic",
            "job " + std::to_string(id()) + " has no elastic section: its workers and servers are fixed");
    return train::resolve_resize(membership(), train::ResizeRequest { r.action, r.worker, actor, reason, {}, 0 });
}

} // namespace fulcrum::daemon
