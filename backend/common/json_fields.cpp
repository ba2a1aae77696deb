#include "common/json_fields.h"

#include <algorithm>
#include <boost/json/stream_parser.hpp>
#include <cmath>
#include <sstream>

namespace fulcrum {

JsonFieldError::JsonFieldError(std::string code, std::string path, std::string reason)
    : std::runtime_error((path.empty() ? std::string() : "'" + path + "': ") + reason)
    , code_(std::move(code))
    , path_(std::move(path))
    , reason_(std::move(reason))
{
}

std::string_view json_kind_name(const json::value& v)
{
    switch (v.kind()) {
    case json::kind::null:
        return "null";
    case json::kind::bool_:
        return "a boolean";
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_:
        return "a number";
    case json::kind::string:
        return "a string";
    case json::kind::array:
        return "an array";
    case json::kind::object:
        return "an object";
    }
    return "a value";
}

json::value parse_json_text(std::string_view text)
{
    json::parse_options options;
    options.allow_comments = true;
    options.allow_trailing_commas = true;
    json::stream_parser parser({}, options);
    boost::system::error_code ec;
    const std::size_t consumed = parser.write_some(text.data(), text.size(), ec);
    if (!ec)
        parser.finish(ec);
    if (ec) {
        const std::size_t offset = std::min(consumed, text.size());
        std::size_t line = 1, column = 1;
        for (std::size_t i = 0; i < offset; ++i, ++column)
            if (text[i] == '\n') {
                ++line;
                column = 0;
            }
        throw JsonFieldError("malformed-json", "line " + std::to_string(line) + ", column " + std::to_string(column),
            "malformed JSON: " + ec.message());
    }
    return parser.release();
}

namespace {

const json::object& object_at(const json::value& value, const std::string& path)
{
    if (!value.is_object())
        throw JsonFieldError("wrong-type", path, "expected an object, got " + std::string(json_kind_name(value)));
    return value.get_object();
}

} // namespace

JsonFields::JsonFields(const json::value& value, std::string path)
    : object_(&object_at(value, path))
    , path_(std::move(path))
{
}

JsonFields::JsonFields(const json::object& object, std::string path)
    : object_(&object)
    , path_(std::move(path))
{
}

JsonFields::JsonFields(const json::value& value, std::string path, const JsonFields& parent)
    : JsonFields(value, std::move(path))
{
    paths_ = parent.paths_;
}

JsonFields JsonFields::child(std::string_view key) const
{
    return JsonFields(required(key, "an object"), at(key), *this);
}

std::string JsonFields::server_path(std::string_view key, FolderKind kind) const
{
    const std::string field = at(key);
    const std::string name = string(key, "a name");
    if (const std::string why = unusable_name(name); !why.empty())
        throw PathFieldError("illegal-value", field, why);
    if (!paths_)
        throw std::logic_error("the path field '" + field + "' was read without a path policy (JsonFields::use_paths)");
    std::string why;
    std::optional<std::string> path = paths_->resolve(kind, name, field, why);
    if (!path)
        throw PathFieldError("illegal-value", field, why);
    return std::move(*path);
}

std::string JsonFields::at(std::string_view key) const
{
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

std::string JsonFields::element_path(std::string_view key, std::size_t i) const
{
    return at(key) + "[" + std::to_string(i) + "]";
}

bool JsonFields::has(std::string_view key) const
{
    const json::value* v = find(key);
    return v && !v->is_null();
}

const json::value* JsonFields::find(std::string_view key) const
{
    if (std::find(taken_.begin(), taken_.end(), key) == taken_.end())
        taken_.emplace_back(key);
    return object_->if_contains(key);
}

std::string JsonFields::FieldPath::str() const
{
    if (whole_)
        return *whole_;
    return element_ ? fields_->element_path(key_, index_) : fields_->at(key_);
}

const json::value& JsonFields::required(std::string_view key, std::string_view expected) const
{
    const json::value* v = find(key);
    if (!v || v->is_null())
        fail(at(key), "is required (" + std::string(expected) + ")", "missing-field");
    return *v;
}

void JsonFields::require(std::string_view key) const
{
    if (!has(key))
        fail(at(key), "is required", "missing-field");
}

void JsonFields::fail(const std::string& path, const std::string& reason, const std::string& code) const
{
    throw JsonFieldError(code, path, reason);
}

void JsonFields::wrong_type(const std::string& path, std::string_view expected, const json::value& v) const
{
    fail(path, "expected " + std::string(expected) + ", got " + std::string(json_kind_name(v)), "wrong-type");
}

std::string JsonFields::string_at(const json::value& v, const FieldPath& path, std::string_view expected) const
{
    if (!v.is_string())
        wrong_type(path.str(), expected, v);
    return std::string(v.get_string());
}

void JsonFields::not_one_of(
    const std::string& path, const std::string& text, const std::vector<std::string>& names) const
{
    std::string list;
    for (const auto& name : names)
        list += (list.empty() ? "" : ", ") + name;
    fail(path, "is '" + text + "', expected one of: " + list);
}

std::string JsonFields::string(std::string_view key, std::string_view expected) const
{
    return string_at(required(key, expected), FieldPath(*this, key), expected);
}

std::string JsonFields::string_or(
    std::string_view key, std::string fallback, const std::vector<std::string>& allowed) const
{
    if (!has(key))
        return fallback;
    std::string text = string(key);
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), text) == allowed.end())
        not_one_of(at(key), text, allowed);
    return text;
}

double JsonFields::number_value(const json::value& v, const std::string& path, double min, double max) const
{
    return number_at(v, FieldPath(path), min, max);
}

double JsonFields::number_at(const json::value& v, const FieldPath& path, double min, double max) const
{
    if (!v.is_number())
        wrong_type(path.str(), "a number", v);
    const double x = v.to_number<double>();
    if (!std::isfinite(x))
        fail(path.str(), "expected a finite number");
    if (x < min || x > max) {
        std::ostringstream reason;
        reason << "is " << x << ", expected a number in [" << min << ", " << max << "]";
        fail(path.str(), reason.str());
    }
    return x;
}

double JsonFields::number(std::string_view key, double min, double max) const
{
    return number_at(required(key, "a number"), FieldPath(*this, key), min, max);
}

double JsonFields::number_or(std::string_view key, double fallback, double min, double max) const
{
    return has(key) ? number(key, min, max) : fallback;
}

std::optional<double> JsonFields::optional_number(std::string_view key) const
{
    return has(key) ? std::optional<double>(number(key)) : std::nullopt;
}

std::int64_t JsonFields::integer_value(
    const json::value& v, const std::string& path, std::int64_t min, std::int64_t max) const
{
    return integer_at(v, FieldPath(path), min, max);
}

std::int64_t JsonFields::integer_at(
    const json::value& v, const FieldPath& path, std::int64_t min, std::int64_t max) const
{
    std::int64_t x = 0;
    if (v.is_int64())
        x = v.get_int64();
    else if (v.is_uint64() && v.get_uint64() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        x = static_cast<std::int64_t>(v.get_uint64());
    else if (v.is_double() && std::floor(v.get_double()) == v.get_double() && std::abs(v.get_double()) < 9e15)
        x = static_cast<std::int64_t>(v.get_double());
    else
        wrong_type(path.str(), "a whole number", v);
    if (x < min || x > max)
        fail(
            path.str(), "is " + std::to_string(x) + ", expected " + std::to_string(min) + " to " + std::to_string(max));
    return x;
}

std::int64_t JsonFields::integer(std::string_view key, std::int64_t min, std::int64_t max) const
{
    return integer_at(required(key, "a whole number"), FieldPath(*this, key), min, max);
}

std::int64_t JsonFields::integer_or(
    std::string_view key, std::int64_t fallback, std::int64_t min, std::int64_t max) const
{
    return has(key) ? integer(key, min, max) : fallback;
}

std::int32_t JsonFields::int32(std::string_view key, std::int32_t min) const
{
    return static_cast<std::int32_t>(integer(key, min, std::numeric_limits<std::int32_t>::max()));
}

bool JsonFields::boolean(std::string_view key) const
{
    const json::value& v = required(key, "true or false");
    if (!v.is_bool())
        wrong_type(at(key), "true or false", v);
    return v.get_bool();
}

bool JsonFields::boolean_or(std::string_view key, bool fallback) const
{
    return has(key) ? boolean(key) : fallback;
}

const json::array& JsonFields::array(std::string_view key) const
{
    const json::value& v = required(key, "an array");
    if (!v.is_array())
        wrong_type(at(key), "an array", v);
    return v.get_array();
}

const json::array* JsonFields::optional_array(std::string_view key) const
{
    return has(key) ? &array(key) : nullptr;
}

const json::object& JsonFields::object(std::string_view key) const
{
    const json::value& v = required(key, "an object");
    if (!v.is_object())
        wrong_type(at(key), "an object", v);
    return v.get_object();
}

std::vector<std::string> JsonFields::strings(std::string_view key, std::string_view expected) const
{
    const std::string described = "an array of " + std::string(expected);
    const json::value& v = required(key, described);
    if (!v.is_array())
        wrong_type(at(key), described, v);
    std::vector<std::string> out;
    const json::array& a = v.get_array();
    for (std::size_t i = 0; i < a.size(); ++i)
        out.push_back(string_at(a[i], FieldPath(*this, key, i), expected));
    return out;
}

JsonFields JsonFields::element(std::string_view key, std::size_t i, const json::value& v) const
{
    return JsonFields(v, element_path(key, i), *this);
}

void JsonFields::reject_unknown() const
{
    for (const auto& item : *object_) {
        if (std::find(taken_.begin(), taken_.end(), std::string_view(item.key())) != taken_.end())
            continue;
        std::vector<std::string> read(taken_.begin(), taken_.end());
        std::sort(read.begin(), read.end());
        std::string known;
        for (const std::string& key : read)
            known += (known.empty() ? "" : ", ") + key;
        fail(at(item.key()), "unknown field (expected " + known + ")", "unknown-field");
    }
}

} // namespace fulcrum
