#include "daemon/core_request.h"

#include "common/resize_action.h"

namespace fulcrum::daemon {

using namespace protocol;

namespace {

std::optional<CommandName> named(const JobCommand& c)
{
    return CommandName { std::string(to_string(c.action)), c.job };
}
std::optional<CommandName> named(const ChangeJob& c)
{
    return CommandName { "change-job " + std::string(to_string(c.setting)), c.job };
}
std::optional<CommandName> named(const ResizeJob& r)
{
    return CommandName { "resize-job " + std::string(action_name(r.action)), r.job };
}
std::optional<CommandName> named(const SetClusterPolicy&)
{
    return CommandName { "set-cluster-policy", std::nullopt };
}
std::optional<CommandName> named(const WorkerCommand& w)
{
    return CommandName { std::string(to_string(w.action)) + " worker " + std::to_string(w.worker), w.job };
}
std::optional<CommandName> named(const JoinJob&)
{
    return std::nullopt;
}
std::optional<CommandName> named(const JoinPool&)
{
    return std::nullopt;
}
std::optional<CommandName> named(const ConnectionClosed&)
{
    return std::nullopt;
}

} // namespace

std::string request_id(const CoreAsk& ask)
{
    return std::visit(
        [](const auto& a) -> std::string {
            if constexpr (std::is_same_v<std::decay_t<decltype(a)>, ConnectionClosed>)
                return {};
            else
                return a.id;
        },
        ask);
}

std::optional<CommandName> command_name(const CoreAsk& ask)
{
    return std::visit([](const auto& a) { return named(a); }, ask);
}

} // namespace fulcrum::daemon
