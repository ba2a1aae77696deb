#include "train/remote_workers.h"

#include <sstream>

namespace fulcrum::train {

std::string RemoteLoss::decision() const
{
    return kind == Kind::Silent ? "dropped: silent" : "dropped: disconnected";
}

std::string RemoteLoss::describe() const
{
    if (kind == Kind::Disconnected)
        return "disconnected";
    std::ostringstream text;
    text << "was silent for " << silent_s << " s (the worker timeout)";
    return text.str();
}

} // namespace fulcrum::train
