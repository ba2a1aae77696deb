#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace fulcrum {

// Bad input from outside the program (a scenario file, a data file, a database, a
// command-line value). Carries where it came from and which field was wrong so that
// main() can print "FILE: FIELD: what was expected" without guessing.
class InputError : public std::runtime_error {
public:
    InputError(std::string source, std::string field, std::string reason);

    const std::string& source() const noexcept { return source_; }
    const std::string& field() const noexcept { return field_; }
    const std::string& reason() const noexcept { return reason_; }

private:
    std::string source_;
    std::string field_;
    std::string reason_;
};

// A refused request to a running job (an operator override, an elastic resize): the job
// goes on unchanged. `code` is stable for the protocol ("unknown-worker", "last-server").
class RefusedRequest : public std::invalid_argument {
public:
    RefusedRequest(std::string code, const std::string& message)
        : std::invalid_argument(message)
        , code_(std::move(code))
    {
    }
    const std::string& code() const noexcept { return code_; }

private:
    std::string code_;
};

// A failure of the environment rather than of the input: disk full, SQLite busy.
class RuntimeFailure : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// `text` with its control characters written as escapes ("\\n", "\\x1b"), for a log line: a
// name a client chose cannot forge further lines in fulcrumd's log or journald.
std::string printable(std::string_view text);

} // namespace fulcrum
