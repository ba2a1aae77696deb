#pragma once

#include "protocol/messages.h"

#include <optional>
#include <string>
#include <string_view>

namespace fulcrum::protocol {

// The result of reading one frame. `request_id` is the frame's "id" whenever it has a string
// one, decoded or not: on failure the error becomes that request's reply.
template <class Message> struct Decoded {
    std::optional<Message> message;
    std::string request_id;
    ErrorInfo error;

    explicit operator bool() const { return message.has_value(); }
};

// One codec for every side. Decoding never throws: malformed JSON, an unknown type, a
// missing or mistyped field and an illegal value each give an ErrorInfo with a stable code
// and the field's name. Frames above kMaxFrameBytes are refused unread.
Decoded<ClientMessage> decode_client(std::string_view frame);
Decoded<ServerMessage> decode_server(std::string_view frame);

std::string encode(const ClientMessage& message);
std::string encode(const ServerMessage& message);

// The type tag a message carries on the wire ("pin-worker", "iterations", ...).
std::string_view type_name(const ClientMessage& message);
std::string_view type_name(const ServerMessage& message);

} // namespace fulcrum::protocol
