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

} // namespace fulcrum
