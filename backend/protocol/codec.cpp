// What every frame goes through before its message's entry reads it (client_messages.cpp,
// server_messages.cpp), and the names of the protocol's enums.

#include "protocol/codec.h"

#include "protocol/codec_support.h"
#include "protocol/precise_parse.h"

namespace fulcrum::protocol {

namespace detail {

namespace {

// JSON has no infinity: a number beyond a double's range (-5e607) would otherwise reach a
// free-form section (a scenario, a policy) as infinity and come out of encode as something
// that no longer decodes. The path of the first such number, or empty.
std::string out_of_range_number(const json::value& value, const std::string& path)
{
    if (value.is_double())
        return std::isfinite(value.get_double()) ? std::string() : (path.empty() ? std::string("(the frame)") : path);
    if (value.is_object()) {
        for (const auto& [key, member] : value.get_object())
            if (std::string at
                = out_of_range_number(member, path.empty() ? std::string(key) : path + "." + std::string(key));
                !at.empty())
                return at;
    } else if (value.is_array()) {
        const json::array& items = value.get_array();
        for (std::size_t i = 0; i < items.size(); ++i)
            if (std::string at = out_of_range_number(items[i], path + "[" + std::to_string(i) + "]"); !at.empty())
                return at;
    }
    return {};
}

} // namespace

ParsedFrame parse_frame(std::string_view frame, json::storage_ptr memory)
{
    ParsedFrame out;
    if (frame.size() > kMaxFrameBytes) {
        out.error = ErrorInfo { "frame-too-large",
            "frame of " + std::to_string(frame.size()) + " bytes; the limit is " + std::to_string(kMaxFrameBytes), "" };
        return out;
    }
    boost::system::error_code ec;
    out.value = parse_precise(frame, ec, std::move(memory), 64);
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
    if (const std::string at = out_of_range_number(out.value, ""); !at.empty())
        out.error = ErrorInfo { "illegal-value",
            "'" + at + "' is a number beyond the range of a double (about ±1.8e308)", at };
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
