#pragma once

// The one reader of JSON objects' fields: protocol frames, scenarios, cluster files and
// fulcrumd's configuration. Boost.JSON is included here, so only the .cpp files of those
// readers include this header.

#include "common/named_values.h"
#include "common/server_path.h"

#include <boost/container/small_vector.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fulcrum {

namespace json = boost::json;

// A field that is missing, of the wrong JSON type, out of range or unknown, named by its
// full path ("workers[2].speed"). `code` is stable for the protocol: missing-field,
// wrong-type, illegal-value, unknown-field. A file reader turns it into an InputError
// naming the file; the codec into an ErrorInfo.
class JsonFieldError : public std::runtime_error {
public:
    JsonFieldError(std::string code, std::string path, std::string reason);
    const std::string& code() const noexcept { return code_; }
    const std::string& path() const noexcept { return path_; }
    const std::string& reason() const noexcept { return reason_; }

private:
    std::string code_, path_, reason_;
};

// A path field whose name the path policy refused (JsonFields::server_path): a file reader
// turns it into OutsidePath.
class PathFieldError : public JsonFieldError {
public:
    using JsonFieldError::JsonFieldError;
};

// "a number", "a string": what a JSON value is, for errors.
std::string_view json_kind_name(const json::value& v);

// Parses a whole JSON text; comments and trailing commas are allowed (files people edit).
// Throws JsonFieldError("malformed-json", "line L, column C", ...) where it stops.
json::value parse_json_text(std::string_view text);

// Reads one JSON object's fields, naming each in its errors by its path under `path`.
// Required forms throw on a missing field; `_or` forms return the fallback. Every key read
// is remembered, so reject_unknown() reports a key nothing read (a typo, a field of a newer
// version), which files do and the protocol, for compatibility, does not.
class JsonFields {
public:
    // Throws JsonFieldError (wrong-type) unless `value` is an object.
    JsonFields(const json::value& value, std::string path = {});
    JsonFields(const json::object& object, std::string path = {});
    // A nested object's fields, read under the same path policy as `parent`'s.
    JsonFields(const json::value& value, std::string path, const JsonFields& parent);

    // How this reader's path fields, and those of readers made from it (child, element),
    // become paths. Until one is given, reading a path field is a programming error: no
    // path is ever taken unconfined by accident.
    void use_paths(const PathPolicy& paths) { paths_ = &paths; }
    // The object under `key` (required), read under this reader's path policy.
    JsonFields child(std::string_view key) const;

    std::string at(std::string_view key) const;
    const std::string& path() const { return path_; }
    bool has(std::string_view key) const; // present and not null
    // The key's value, or null when absent; marks it read.
    const json::value* find(std::string_view key) const;
    const json::value& required(std::string_view key, std::string_view expected) const;
    // Refuses a missing key before its `_or` reader would take the fallback.
    void require(std::string_view key) const;

    [[noreturn]] void fail(
        const std::string& path, const std::string& reason, const std::string& code = "illegal-value") const;
    [[noreturn]] void wrong_type(const std::string& path, std::string_view expected, const json::value& v) const;

    // `expected` says what the string is ("a path", "HOST:PORT") in a type error.
    std::string string(std::string_view key, std::string_view expected = "a string") const;
    std::string string_or(
        std::string_view key, std::string fallback, const std::vector<std::string>& allowed = {}) const;
    double number(std::string_view key, double min = std::numeric_limits<double>::lowest(),
        double max = std::numeric_limits<double>::max()) const;
    double number_or(std::string_view key, double fallback, double min, double max) const;
    std::optional<double> optional_number(std::string_view key) const;
    std::int64_t integer(std::string_view key, std::int64_t min = std::numeric_limits<std::int64_t>::min(),
        std::int64_t max = std::numeric_limits<std::int64_t>::max()) const;
    std::int64_t integer_or(std::string_view key, std::int64_t fallback, std::int64_t min, std::int64_t max) const;
    std::int32_t int32(std::string_view key, std::int32_t min = std::numeric_limits<std::int32_t>::min()) const;
    bool boolean(std::string_view key) const;
    bool boolean_or(std::string_view key, bool fallback) const;
    const json::array& array(std::string_view key) const;
    const json::array* optional_array(std::string_view key) const; // null when absent
    const json::object& object(std::string_view key) const;
    std::vector<std::string> strings(std::string_view key, std::string_view expected = "strings") const;
    // A path field: a name of an entry in the server's `kind` folder, refused (illegal-value,
    // naming the field and why) when it holds a control character or the path policy will
    // not take it; the path to open otherwise.
    std::string server_path(std::string_view key, FolderKind kind) const;
    // An array of whole numbers from `min` up to the largest Int.
    template <class Int> std::vector<Int> integers(std::string_view key, std::int64_t min) const
    {
        std::vector<Int> out;
        const json::array& a = array(key);
        out.reserve(a.size());
        for (std::size_t i = 0; i < a.size(); ++i)
            out.push_back(
                static_cast<Int>(integer_at(a[i], FieldPath(*this, key, i), min, std::numeric_limits<Int>::max())));
        return out;
    }
    // Element i of the array under `key`, as an object's fields.
    JsonFields element(std::string_view key, std::size_t i, const json::value& v) const;
    std::string element_path(std::string_view key, std::size_t i) const;

    // A value met elsewhere (an array element), named by `path`.
    double number_value(const json::value& v, const std::string& path, double min, double max) const;
    std::int64_t integer_value(const json::value& v, const std::string& path, std::int64_t min, std::int64_t max) const;

    // One of an enum's names.
    template <class Enum, std::size_t N> Enum named(std::string_view key, const NameTable<Enum, N>& table) const
    {
        return named_at(required(key, "a string"), FieldPath(*this, key), table);
    }
    template <class Enum, std::size_t N>
    Enum named_value(const json::value& v, const std::string& path, const NameTable<Enum, N>& table) const
    {
        return named_at(v, FieldPath(path), table);
    }

    // Every key must have been read by now (files only); the error lists the keys that were.
    void reject_unknown() const;

private:
    // A field's path, written out only when an error names it: every field of every frame
    // is read, and a path is needed only for the one refused.
    class FieldPath {
    public:
        explicit FieldPath(const std::string& whole)
            : whole_(&whole)
        {
        }
        FieldPath(const JsonFields& fields, std::string_view key)
            : fields_(&fields)
            , key_(key)
        {
        }
        FieldPath(const JsonFields& fields, std::string_view key, std::size_t index)
            : fields_(&fields)
            , key_(key)
            , index_(index)
            , element_(true)
        {
        }
        std::string str() const;

    private:
        const std::string* whole_ = nullptr;
        const JsonFields* fields_ = nullptr;
        std::string_view key_;
        std::size_t index_ = 0;
        bool element_ = false;
    };

    std::string string_at(const json::value& v, const FieldPath& path, std::string_view expected = "a string") const;
    double number_at(const json::value& v, const FieldPath& path, double min, double max) const;
    std::int64_t integer_at(const json::value& v, const FieldPath& path, std::int64_t min, std::int64_t max) const;
    template <class Enum, std::size_t N>
    Enum named_at(const json::value& v, const FieldPath& path, const NameTable<Enum, N>& table) const
    {
        const std::string text = string_at(v, path);
        if (const auto value = value_named(table, text))
            return *value;
        std::vector<std::string> names;
        for (const auto& entry : table)
            names.emplace_back(entry.second);
        not_one_of(path.str(), text, names);
    }
    [[noreturn]] void not_one_of(
        const std::string& path, const std::string& text, const std::vector<std::string>& names) const;

    const json::object* object_ = nullptr;
    std::string path_;
    const PathPolicy* paths_ = nullptr;
    // The keys read, each once, for reject_unknown; held in place up to a frame's usual few.
    mutable boost::container::small_vector<std::string, 16> taken_;
};

} // namespace fulcrum
