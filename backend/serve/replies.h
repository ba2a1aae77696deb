#pragma once

#include "protocol/messages.h"

#include <exception>
#include <optional>
#include <string>

namespace fulcrum::serve {

// A request's successful reply, naming the job it concerned.
protocol::Reply ok(const std::string& id, std::optional<JobId> job = std::nullopt);
protocol::Reply failure(const std::string& id, protocol::ErrorInfo error);
protocol::Reply failure(const std::string& id, std::string code, std::string message, std::string field = {});
// The reply to a request whose handling threw: the error's class names the code
// (OutsidePath: illegal-value, RefusedRequest: its code, InputError: invalid-scenario).
protocol::Reply failure_of(const std::string& id, std::exception_ptr error);

} // namespace fulcrum::serve
