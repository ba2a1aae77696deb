// What every frame goes through before its message's entry reads it (client_messages.cpp,
// server_messages.cpp), and the names of the protocol's enums.

#include "protocol/codec.h"

#include "protocol/codec_support.h"
#include "protocol/precise_parse.h"

#include <string>
#include <vector>

namespace fulcrum::protocol {

namespace detail {

namespace {

// JSON has no infinity: a number beyond a double's range (-5e607) would otherwise reach a
// free-form section (a scenario, a policy) as infinity and come out of encode as something
// that no longer decodes. True when `value` holds one; `inner_first` then holds its path's
// steps, innermost first, gathered on the way back out (every frame is searched, so no path
// is made but for the one found).
struct PathStep {
    std::string_view key;
    std::size_t index = 0;
    bool in_array = false;
};
bool out_of_range_number(const json::value& value, std::vector<PathStep>& inner_first)
{
    if (value.is_double())
        return !std::isfinite(value.get_double());
    if (value.is_object()) {
        for (const auto& [key, member] : value.get_object())
            if (out_of_range_number(member, inner_first)) {
                inner_first.push_back({ key, 0, false });
                return true;
            }
    } else if (value.is_array()) {
        const json::array& items = value.get_array();
        for (std::size_t i = 0; i < items.size(); ++i)
            if (out_of_range_number(items[i], inner_first)) {
                inner_first.push_back({ {}, i, true });
                return true;
            }
    }
    return false;
}

std::string path_of(const std::vector<PathStep>& inner_first)
{
    std::string path;
    for (auto step = inner_first.rbegin(); step != inner_first.rend(); ++step)
        if (step->in_array)
            path += "[" + std::to_string(step->index) + "]";
        else
            path += (path.empty() ? "" : ".") + std::string(step->key);
    return path.empty() ? "(the frame)" : path;
}

} // namespace

ParsedFrame parse_frame(std::string_view frame, json::storage_ptr memory)
{
    ParsedFrame out { json::value(memory), {}, {} }; // the parsed value is moved in, not copied
    if (frame.size() > kMaxFrameBytes) {
        out.error = ErrorInfo { "frame-too-large",
            "frame of " + std::to_string(frame.size()) + " bytes; the limit is " + std::to_string(kMaxFrameBytes), "" };
        return out;
    }
    boost::system::error_code ec;
    out.value = parse_precise(frame, ec, memory, 64);
    if (ec) {
        out.error = ErrorInfo { "malformed-json", "the frame is not JSON: " + ec.message(), "" };
        return out;
    }
    if (!out.value.is_object()) {
        out.error = ErrorInfo { "wrong-type",
            "a message must be a JSON object, got " + std::string(json_kind_name(out.value)), "" };
        return out;
    }
    const json::object& object = out.value.get_object();
    if (const json::value* id = object.if_contains("id"); id && id->is_string())
        out.request_id = std::string(id->get_string());
    if (std::vector<PathStep> steps; out_of_range_number(out.value, steps)) {
        const std::string at = path_of(steps);
        out.error = ErrorInfo { "illegal-value",
            "'" + at + "' is a number beyond the range of a double (about ±1.8e308)", at };
    }
    return out;
}

} // namespace detail

using namespace detail;

std::string_view to_string(Role role)
{
    return name_of(kRoles, role);
}
std::optional<Role> role_named(std::string_view name)
{
    return value_named(kRoles, name);
}
std::string_view to_string(Stream stream)
{
    return name_of(kStreams, stream);
}
std::string_view to_string(JobState state)
{
    return name_of(kJobStates, state);
}
std::string_view to_string(JobAction action)
{
    return name_of(kJobActions, action);
}

std::optional<JobAction> parse_job_action(std::string_view wire_name)
{
    return value_named(kJobActions, wire_name);
}
std::string_view to_string(JobSetting setting)
{
    return name_of(kJobSettings, setting);
}
std::string_view to_string(WorkerAction action)
{
    return name_of(kWorkerActions, action);
}
std::string_view to_string(ReplayAction action)
{
    return name_of(kReplayActions, action);
}
std::string_view to_string(ReplayPhase phase)
{
    return name_of(kReplayPhases, phase);
}

} // namespace fulcrum::protocol
