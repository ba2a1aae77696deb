#pragma once

// Inside the protocol library only: what the message codecs share. Boost.JSON is included
// here, so no header outside backend/protocol includes this one.

#include "common/json_fields.h"
#include "common/named_values.h"
#include "protocol/codec.h"

#include <algorithm>
#include <array>
#include <boost/json.hpp>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace fulcrum::protocol::detail {

namespace json = boost::json;
using fulcrum::json_kind_name;

inline constexpr NameTable<Role, 4> kRoles { { { Role::Viewer, "viewer" }, { Role::Operator, "operator" },
    { Role::Worker, "worker" }, { Role::Admin, "admin" } } };
inline constexpr NameTable<Stream, 6> kStreams { {
    { Stream::Iterations, "iterations" },
    { Stream::Evaluations, "evaluations" },
    { Stream::Events, "events" },
    { Stream::Jobs, "jobs" },
    { Stream::Workers, "workers" },
    { Stream::Cluster, "cluster" },
} };
inline constexpr NameTable<JobState, 8> kJobStates { {
    { JobState::Queued, "queued" },
    { JobState::Running, "running" },
    { JobState::Paused, "paused" },
    { JobState::Finished, "finished" },
    { JobState::Stopped, "stopped" },
    { JobState::Failed, "failed" },
    { JobState::Interrupted, "interrupted" },
    { JobState::Lost, "lost" },
} };
inline constexpr NameTable<JobAction, 5> kJobActions { {
    { JobAction::Cancel, "cancel-job" },
    { JobAction::Pause, "pause-job" },
    { JobAction::Resume, "resume-job" },
    { JobAction::Freeze, "freeze-job" },
    { JobAction::Unfreeze, "unfreeze-job" },
} };
inline constexpr NameTable<JobSetting, 2> kJobSettings { {
    { JobSetting::Policy, "set-policy" },
    { JobSetting::SyncModel, "set-sync-model" },
} };
// The field each setting's spec travels in.
inline std::string_view spec_field(JobSetting setting)
{
    return setting == JobSetting::Policy ? "policy" : "sync";
}
inline constexpr NameTable<WorkerAction, 6> kWorkerActions { {
    { WorkerAction::Pin, "pin-worker" },
    { WorkerAction::Unpin, "unpin-worker" },
    { WorkerAction::Exclude, "exclude-worker" },
    { WorkerAction::Include, "include-worker" },
    { WorkerAction::InjectStraggler, "inject-straggler" },
    { WorkerAction::ClearStraggler, "clear-straggler" },
} };

inline constexpr NameTable<ReplayAction, 5> kReplayActions { {
    { ReplayAction::Play, "play-replay" },
    { ReplayAction::Pause, "pause-replay" },
    { ReplayAction::Seek, "seek-replay" },
    { ReplayAction::SetSpeed, "set-replay-speed" },
    { ReplayAction::Close, "close-replay" },
} };
inline constexpr NameTable<ReplayPhase, 4> kReplayPhases { {
    { ReplayPhase::Playing, "playing" },
    { ReplayPhase::Paused, "paused" },
    { ReplayPhase::Finished, "finished" },
    { ReplayPhase::Closed, "closed" },
} };

// The shared path-tagged reader (common/json_fields.h); its errors become ErrorInfos.
using Fields = JsonFields;
using FieldError = JsonFieldError;

template <class Int> json::array integers_json(const std::vector<Int>& values)
{
    json::array a;
    a.reserve(values.size());
    for (Int v : values)
        a.emplace_back(static_cast<std::int64_t>(v));
    return a;
}

// --- records (codec_records.cpp) ---------------------------------------------------------

json::object to_json(const IterationRecord& r);
IterationRecord iteration_from(const Fields& f);
json::object to_json(const EvaluationRecord& e);
EvaluationRecord evaluation_from(const Fields& f);
json::object to_json(const EventRecord& e);
EventRecord event_from(const Fields& f);
json::object to_json(const JobStatus& s);
JobStatus job_status_from(const Fields& f);
json::object to_json(const GpuUsage& g);
GpuUsage gpu_usage_from(const Fields& f);
TenantUsage tenant_usage_from(const Fields& f);
json::object to_json(const ClusterState& c);
json::object to_json(const WorkerState& w);
WorkerState worker_state_from(const Fields& f);
json::object to_json(const RunListing& r);
RunListing run_listing_from(const Fields& f);
json::object to_json(const ErrorInfo& e);
ErrorInfo error_from(const Fields& f);
// Stream messages name their replay only when they come from one.
void tag_replay(json::object& o, std::int64_t replay);
std::int64_t replay_of(const Fields& f);

// --- one entry per message -----------------------------------------------------------------

// Wire<M> is message M's entry: the wire names it is read from (names()), the one it is
// written with (name(m)), and how its fields are written (encode: after "type") and read
// (decode). client_messages.cpp and server_messages.cpp hold one for every alternative of
// ClientMessage and ServerMessage: encoding, decoding and naming visit the variant, so a
// message without an entry does not compile.
template <class M> struct Wire;

// A message with one wire name.
template <std::size_t N> struct FixedName {
    char text[N] {};
    constexpr FixedName(const char (&s)[N]) { std::copy_n(s, N, text); }
    constexpr std::string_view view() const { return { text, N - 1 }; }
};
template <FixedName Name> struct NamedAs {
    static std::array<std::string_view, 1> names() { return { Name.view() }; }
    template <class M> static std::string_view name(const M&) { return Name.view(); }
};
// A message whose wire name is its action's (cancel-job, pin-worker, ...): one name table.
template <const auto& Table, auto Member> struct NamedBy {
    static std::vector<std::string_view> names()
    {
        std::vector<std::string_view> out;
        for (const auto& entry : Table)
            out.push_back(entry.second);
        return out;
    }
    template <class M> static std::string_view name(const M& m) { return name_of(Table, m.*Member); }
};

template <class Variant> using Reader = Variant (*)(std::string_view type, const Fields& fields);

template <class Variant, class M> void add_reader(std::unordered_map<std::string_view, Reader<Variant>>& table)
{
    for (const std::string_view name : Wire<M>::names())
        table.emplace(name, [](std::string_view type, const Fields& f) -> Variant { return Wire<M>::decode(type, f); });
}

template <class Variant, std::size_t... I>
std::unordered_map<std::string_view, Reader<Variant>> make_readers(std::index_sequence<I...>)
{
    std::unordered_map<std::string_view, Reader<Variant>> table;
    (add_reader<Variant, std::variant_alternative_t<I, Variant>>(table), ...);
    return table;
}

// The message a frame's "type" names, read by its entry.
template <class Variant> Variant read_message(std::string_view type, const Fields& f)
{
    static const auto readers = make_readers<Variant>(std::make_index_sequence<std::variant_size_v<Variant>> {});
    const auto it = readers.find(type);
    if (it == readers.end())
        throw FieldError("unknown-type", "type", "unknown message type '" + std::string(type) + "'");
    return it->second(type, f);
}

template <class Variant> json::object write_message(const Variant& message)
{
    return std::visit(
        [](const auto& m) {
            using M = std::decay_t<decltype(m)>;
            json::object o { { "type", Wire<M>::name(m) } };
            Wire<M>::encode(m, o);
            return o;
        },
        message);
}

template <class Variant> std::string_view name_message(const Variant& message)
{
    return std::visit([](const auto& m) { return Wire<std::decay_t<decltype(m)>>::name(m); }, message);
}

// Frame → JSON object → fields → the message, with every failure an ErrorInfo (codec.cpp).
// `read` is called with the frame's type and its fields.
template <class Message> using ReadFields = Message (*)(std::string_view type, const Fields& fields);
template <class Message> Decoded<Message> decode_frame(std::string_view frame, ReadFields<Message> read);

// The frame parsed and checked up to its fields; on failure `error` is set (codec.cpp).
struct ParsedFrame {
    json::value value;
    std::string request_id;
    std::optional<ErrorInfo> error;
};
ParsedFrame parse_frame(std::string_view frame, json::storage_ptr memory);

template <class Message> Decoded<Message> decode_frame(std::string_view frame, ReadFields<Message> read)
{
    Decoded<Message> out;
    json::monotonic_resource memory;
    ParsedFrame parsed = parse_frame(frame, &memory);
    out.request_id = std::move(parsed.request_id);
    if (parsed.error) {
        out.error = *parsed.error;
        return out;
    }
    try {
        const Fields fields(parsed.value.get_object());
        const std::string type = fields.string("type");
        out.message = read(type, fields);
    } catch (const FieldError& e) {
        out.error = { e.code(), e.what(), e.path() };
    }
    return out;
}

} // namespace fulcrum::protocol::detail
