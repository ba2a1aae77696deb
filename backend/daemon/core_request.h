#pragma once

#include "common/job_event.h"
#include "protocol/messages.h"

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>

namespace fulcrum::serve {
class Client;
}

namespace fulcrum::daemon {

// A client's connection closed: what it held in the core (a remote slot, a pooled process,
// an external job's rank) is lost.
struct ConnectionClosed { };

// What a session asks of the cluster core, as a value: the client message it came as (a
// job's or a worker's command, a resize, the cluster's policies, a join) or its departure.
// The I/O threads post each one in the order its connection sent it; the core's thread
// handles it by one visit (Daemon::on_core), which sends the answer. A message kind listed
// here goes to the core and nowhere else.
using CoreAsk = std::variant<protocol::JobCommand, protocol::ChangeJob, protocol::ResizeJob, protocol::SetClusterPolicy,
    protocol::WorkerCommand, protocol::JoinJob, protocol::JoinPool, ConnectionClosed>;

template <class T, class Ask = CoreAsk> inline constexpr bool kGoesToCore = false;
template <class T, class... Asks>
inline constexpr bool kGoesToCore<T, std::variant<Asks...>> = (std::is_same_v<T, Asks> || ...);

struct CoreRequest {
    std::shared_ptr<serve::Client> client; // who asked, and where the answer goes
    EventActor actor; // as whom, as the job's events will name them (taken when the frame came)
    CoreAsk ask;
};

// A command as fulcrumd's log line names it: what, and the job it concerns.
struct CommandName {
    std::string what; // "cancel-job", "resize-job add-worker"
    std::optional<JobId> job;
};

// The request id its answer names; empty for a departure.
std::string request_id(const CoreAsk& ask);
// The command it is, for the log; nothing for a join or a departure, which are no commands.
std::optional<CommandName> command_name(const CoreAsk& ask);

} // namespace fulcrum::daemon
