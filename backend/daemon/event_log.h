#pragma once

#include "common/job_event.h"

namespace fulcrum::serve {
class StreamHub;
} // namespace fulcrum::serve

namespace fulcrum::daemon {

// A job's event sent to its subscribers and written as a line of fulcrumd's log (its
// lifecycle, the scheduler's decisions with their reasons, workers joined and lost, an
// operator's changes): the one way an event leaves the daemon live. Trouble is a warning;
// the link and GPU sharing notes are debug lines.
void publish_event(serve::StreamHub& hub, const JobEvent& event);

} // namespace fulcrum::daemon
