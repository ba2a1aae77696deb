#include "train/elastic_resize.h"

#include <cstdio>

namespace fulcrum::train {

std::string ResizeOutcome::describe() const
{
    char text[256];
    switch (action) {
    case ResizeAction::AddServer:
    case ResizeAction::RemoveServer:
        std::snprintf(text, sizeof text, "%s server %d: %lld keys moved, %d servers now (%.3f ms)",
            action == ResizeAction::AddServer ? "added" : "removed", target, static_cast<long long>(moved_keys),
            servers, seconds * 1e3);
        break;
    case ResizeAction::AddWorker:
    case ResizeAction::RemoveWorker:
        std::snprintf(text, sizeof text,
            "%s worker %d: %lld samples moved, %lld re-activated from backups, %d workers now (%.3f ms)",
            action == ResizeAction::AddWorker ? "added" : "removed", target, static_cast<long long>(moved_samples),
            static_cast<long long>(reactivated_samples), workers, seconds * 1e3);
        break;
    }
    return text;
}

} // namespace fulcrum::train
