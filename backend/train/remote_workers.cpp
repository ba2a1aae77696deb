#include "train/remote_workers.h"

#include <sstream>

namespace fulcrum::train {

std::string RemoteLoss::decision() const
{
    switch (kind) {
    case Kind::Silent:
        return "dropped: silent";
    case Kind::Excluded:
        return "dropped: excluded";
    case Kind::Disconnected:
        break;
    }
    return "dropped: disconnected";
}

std::string RemoteLoss::describe() const
{
    const std::string on = who.empty() ? "" : " on " + who;
    if (kind == Kind::Disconnected)
        return "disconnected" + on;
    if (kind == Kind::Excluded)
        return "was excluded and its task given up";
    std::ostringstream text;
    text << "was silent for " << silent_s << " s (the worker timeout)" << on;
    return text.str();
}

} // namespace fulcrum::train
