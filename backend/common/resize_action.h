#pragma once

// The Elastic Parameter Server's four resource changes, as the trainer makes them and as
// scenarios and the protocol name them: one enum, one name table.

#include "common/named_values.h"

#include <optional>
#include <string_view>

namespace fulcrum {

enum class ResizeAction { AddServer, RemoveServer, AddWorker, RemoveWorker };

inline constexpr NameTable<ResizeAction, 4> kResizeActions { {
    { ResizeAction::AddServer, "add-server" },
    { ResizeAction::RemoveServer, "remove-server" },
    { ResizeAction::AddWorker, "add-worker" },
    { ResizeAction::RemoveWorker, "remove-worker" },
} };

inline std::string_view action_name(ResizeAction action)
{
    return name_of(kResizeActions, action);
}
inline std::optional<ResizeAction> parse_resize_action(std::string_view name)
{
    return value_named(kResizeActions, name);
}

// How long each change pauses a job on its run clock in the modelled modes (virtual and
// paced): the Elastic PS moves (a process starting, parameters moving between servers) and
// a kill-and-restart, as the scenario's `elastic.pause_s` gives them (0: instantaneous, the
// default). The real mode takes what the move really takes.
struct ResizePauses {
    double add_worker_s = 0, remove_worker_s = 0, add_server_s = 0, remove_server_s = 0;
    double restart_s = 0; // fulcrumd --elastic kill-restart: one restart, whatever it changes
    double of(ResizeAction action) const
    {
        switch (action) {
        case ResizeAction::AddServer:
            return add_server_s;
        case ResizeAction::RemoveServer:
            return remove_server_s;
        case ResizeAction::AddWorker:
            return add_worker_s;
        case ResizeAction::RemoveWorker:
            return remove_worker_s;
        }
        return 0;
    }
    bool operator==(const ResizePauses&) const = default;
};

} // namespace fulcrum
